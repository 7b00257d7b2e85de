import Foundation

/// The request line and headers of one HTTP/1.x request; the server never needs a request body.
struct HTTPRequestHead: Sendable {
    /// The method, e.g. `GET`.
    var method: String
    /// The request target as sent, e.g. `/file?x=1`.
    var target: String
    /// The protocol version, e.g. `HTTP/1.1`.
    var version: String
    /// Header fields in order, names as sent.
    var headers: [(name: String, value: String)]

    /// The target without its query, which is what routes are keyed by.
    var path: String {
        String(target.prefix { $0 != "?" })
    }

    /// The first value of the header called `name` (case-insensitive), trimmed.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Whether the client asked for the connection to stay open after this response.
    var keepAlive: Bool {
        let connection = header("Connection")?.lowercased()
        if version == "HTTP/1.1" {
            return connection != "close"
        }
        return connection == "keep-alive"
    }

    /// Parses the head ending at the first blank line of `buffer`, removing it from `buffer`.
    static func take(from buffer: inout [UInt8]) -> ParseResult {
        guard let end = headEnd(in: buffer) else {
            return buffer.count > 64 * 1024 ? .malformed : .incomplete
        }
        let text = String(decoding: buffer[0..<end], as: UTF8.self)
        buffer.removeFirst(end + 4)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).makeIterator()
        guard let requestLine = lines.next() else { return .malformed }
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3 else { return .malformed }
        var headers: [(name: String, value: String)] = []
        while let line = lines.next() {
            guard let colon = line.firstIndex(of: ":") else { return .malformed }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.append((String(line[..<colon]), value))
        }
        return .complete(
            HTTPRequestHead(
                method: String(parts[0]), target: String(parts[1]), version: String(parts[2]), headers: headers)
        )
    }

    /// The index of the `\r\n\r\n` ending the head, if it has arrived.
    private static func headEnd(in buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        return (0...(buffer.count - 4)).first {
            buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10
        }
    }
}
