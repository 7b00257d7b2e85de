import Foundation

extension NginxFixture {
    /// What the fixture's nginx serves and how.
    ///
    /// The defaults give the plain behaviour downloaders meet in the wild: ranges, keep-alive, `sendfile`,
    /// `ETag` and `Last-Modified`, everything `application/octet-stream`.
    public struct Configuration: Sendable {
        /// The directory nginx serves; `nil` lets the fixture create an empty one (`NginxFixture.documentRoot`)
        /// and delete it at shutdown. A directory passed here belongs to the caller and is left alone.
        public var documentRoot: URL?
        /// Extra locations, on top of the document root served at `/`.
        public var locations: [Location]
        /// Whether to listen for HTTPS too, with a self-signed certificate for 127.0.0.1 and localhost.
        public var enablesTLS: Bool
        /// Whether to offer HTTP/2: by ALPN on the HTTPS port (with `enablesTLS`), and in clear text with prior
        /// knowledge (h2c) on a port of its own (`NginxFixture.url(_:h2c:)`); the plain port stays HTTP/1.1.
        public var offersHTTP2: Bool
        /// How many worker processes nginx runs; one is plenty for tests, benchmarks may want more.
        public var workerProcesses: Int
        /// The nginx binary to run.
        public var executablePath: String

        /// A configuration serving `documentRoot` plainly, plus `locations`, and HTTPS if `enablesTLS`.
        public init(
            documentRoot: URL? = nil,
            locations: [Location] = [],
            enablesTLS: Bool = false,
            offersHTTP2: Bool = false,
            workerProcesses: Int = 1,
            executablePath: String = "/usr/sbin/nginx"
        ) {
            self.documentRoot = documentRoot
            self.locations = locations
            self.enablesTLS = enablesTLS
            self.offersHTTP2 = offersHTTP2
            self.workerProcesses = workerProcesses
            self.executablePath = executablePath
        }
    }
}
