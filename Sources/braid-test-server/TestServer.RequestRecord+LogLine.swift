import BraidTestServer

extension TestServer.RequestRecord {
    /// One line for `--log-requests`: `connection 3 "GET /file" range "bytes=0-99" 206 100`, the range `-` when
    /// the request had none.
    var logLine: String {
        "connection \(connection) \"\(method) \(target)\" range \"\(range ?? "-")\" \(status) \(bodyBytesSent)"
    }
}
