/// Everything the server will do to answer one request, decided as a value before any byte is sent.
///
/// Keeping the decision pure (see ``ResponsePlan/init(answering:route:context:)``) means every fault is a
/// change to this value, and the connection code only carries it out.
struct ResponsePlan {
    /// The status code.
    var status: Int
    /// Header fields in order; values are bytes so faults can send ones that are not valid UTF-8.
    var headers: [(name: String, value: [UInt8])] = []
    /// The body to send, `nil` for none (`HEAD`, errors, redirects).
    var body: ResponseBody?
    /// Fixed bytes sent as the body instead (a route's `Document`), `nil` for none.
    var documentBody: [UInt8]?
    /// How long to wait before sending the first byte.
    var latency: Duration = .zero
    /// Whether to close the connection after the response instead of reading another request.
    var closeConnection = false

    /// Appends a header whose value is text.
    mutating func add(_ name: String, _ value: String) {
        headers.append((name, Array(value.utf8)))
    }

    /// The status line and header block, with `Connection: close` added when the connection will close.
    var head: [UInt8] {
        var bytes = Array("HTTP/1.1 \(status) \(Self.reason(for: status))\r\n".utf8)
        for (name, value) in headers {
            bytes += Array("\(name): ".utf8) + value + Array("\r\n".utf8)
        }
        if closeConnection {
            bytes += Array("Connection: close\r\n".utf8)
        }
        return bytes + Array("\r\n".utf8)
    }

    /// The reason phrase for the statuses the server sends; clients ignore it, people reading logs do not.
    private static func reason(for status: Int) -> String {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}
