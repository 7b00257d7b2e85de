import BraidTestServer
import Foundation

extension TestServer.RequestRecord {
    /// One line for `--log-requests`:
    /// `connection 3 "GET /file" range "bytes=0-99" 206 100 times 1712345678.123456 1712345678.163456 1712345678.170001`,
    /// the range `-` when the request had none; the times are when the request was read, when the response's first
    /// byte was sent (`-` if never) and when it ended, in seconds since the epoch (`CLOCK_REALTIME`).
    var logLine: String {
        "connection \(connection) \"\(method) \(target)\" range \"\(range ?? "-")\" \(status) \(bodyBytesSent)"
            + " times \(Self.seconds(received)) \(firstByteSent.map(Self.seconds) ?? "-") \(Self.seconds(finished))"
    }

    /// `date` as seconds since the epoch with microseconds.
    private static func seconds(_ date: Date) -> String {
        String(format: "%.6f", date.timeIntervalSince1970)
    }
}
