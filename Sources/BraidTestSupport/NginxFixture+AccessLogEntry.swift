extension NginxFixture {
    /// One request as nginx logged it: what a test counts to prove how many requests and bytes a download cost.
    public struct AccessLogEntry: Equatable, Sendable {
        /// The response status, e.g. 200 or 206.
        public let status: Int
        /// Bytes sent to the client, headers included (`$bytes_sent`).
        public let bytesSent: Int
        /// Body bytes sent to the client (`$body_bytes_sent`).
        public let bodyBytesSent: Int
        /// nginx's serial number of the TCP connection: requests sharing it reused one kept-alive connection.
        public let connection: Int
        /// `http` or `https`.
        public let scheme: String
        /// Over HTTPS, whether the connection's TLS session was resumed rather than negotiated afresh (nginx's
        /// `$ssl_session_reused`); nil over plain HTTP.
        public let tlsSessionReused: Bool?
        /// Whether nginx finished sending the response; `false` when the client went away first.
        public let isComplete: Bool
        /// The request's `Range` header, or `nil` if it had none.
        public let range: String?
        /// The request line, e.g. `GET /file.bin HTTP/1.1` or `GET /file.bin HTTP/2.0`.
        public let request: String

        /// The protocol of the request, e.g. `HTTP/1.1` or `HTTP/2.0`.
        public var httpVersion: String {
            String(request.split(separator: " ").last ?? "")
        }

        /// The request method, e.g. `GET`.
        public var method: String {
            String(request.split(separator: " ").first ?? "")
        }

        /// The request target, e.g. `/file.bin`.
        public var path: String {
            let parts = request.split(separator: " ")
            return parts.count > 1 ? String(parts[1]) : ""
        }

        /// Parses a line in `ConfigFile.logFormat`; `nil` for anything else (such as a half-written last line).
        init?(line: Substring) {
            let fields = line.split(separator: " ", maxSplits: 6, omittingEmptySubsequences: false)
            guard fields.count == 7,
                let status = Int(fields[0]),
                let bytesSent = Int(fields[1]),
                let bodyBytesSent = Int(fields[2]),
                let connection = Int(fields[3])
            else { return nil }
            let quotedFields = fields[6].split(separator: "\"", omittingEmptySubsequences: false)
            // `"completion" "range" "request"` splits into "", completion, " ", range, " ", request, "".
            guard quotedFields.count == 7 else { return nil }
            self.status = status
            self.bytesSent = bytesSent
            self.bodyBytesSent = bodyBytesSent
            self.connection = connection
            self.scheme = String(fields[4])
            switch fields[5] {
            case "r": tlsSessionReused = true
            case ".": tlsSessionReused = false
            default: tlsSessionReused = nil
            }
            self.isComplete = quotedFields[1] == "OK"
            self.range = quotedFields[3] == "-" ? nil : String(quotedFields[3])
            self.request = String(quotedFields[5])
        }
    }
}
