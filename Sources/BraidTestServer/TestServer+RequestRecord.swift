import Foundation

extension TestServer {
    /// What the server saw and did for one request, so tests can assert on traffic and not only on results.
    public struct RequestRecord: Sendable, Hashable {
        /// The request method, e.g. `GET`.
        public var method: String
        /// The request target as sent, including any query.
        public var target: String
        /// The `Host` header, to tell which host name a redirected client used.
        public var host: String?
        /// The `Range` header.
        public var range: String?
        /// The `If-Range` header.
        public var ifRange: String?
        /// The `If-Modified-Since` header.
        public var ifModifiedSince: String?
        /// The `Authorization` header, to check credentials are not forwarded to another host.
        public var authorization: String?
        /// The `Cookie` header.
        public var cookie: String?
        /// The `User-Agent` header.
        public var userAgent: String?
        /// The names of every request header, lowercased, to check what a client sent where.
        public var headerNames: Set<String>
        /// The response status code.
        public var status: Int
        /// Body bytes handed to the kernel, which may differ from what was promised when a fault applies.
        public var bodyBytesSent: UInt64
        /// The server-wide number of the connection, in accept order from 1.
        public var connection: Int
        /// When the request's head had been read, on the wall clock (`CLOCK_REALTIME`), so that a script can line
        /// the server's times up with its own.
        public var received: Date
        /// When the response's head was handed to the kernel, after any latency fault; `nil` when the client left
        /// before it.
        public var firstByteSent: Date?
        /// When the response ended: sent in full, cut short by a fault, or abandoned by the client.
        public var finished: Date
    }
}
