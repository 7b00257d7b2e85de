extension NginxFixture {
    /// A `location` block: which URIs it matches, which files it serves, and how it serves them.
    ///
    /// Every location serves from the fixture's one document root, so the same file can be fetched fast at
    /// `/file.bin`, throttled at `/throttled/file.bin`, and with a wrong `Content-MD5` at `/bad-md5/file.bin`.
    public struct Location: Sendable {
        /// How nginx matches a request URI against the location.
        public enum Match: Sendable, Equatable {
            /// Every URI starting with the string, which should end in `/` (`location ^~ /throttled/`).
            case prefix(String)
            /// Exactly one URI (`location = /file.bin`).
            case exact(String)
        }

        /// Which URIs this location handles.
        public let match: Match
        /// The document-root-relative path the matched part of the URI maps to.
        public let target: String
        /// The per-connection send rate in bytes per second (`limit_rate`), or `nil` for full speed.
        public let bytesPerSecond: Int?
        /// Response headers added to every response, errors included (`add_header … always`).
        public let headers: [(name: String, value: String)]
        /// Answers every request with this redirect (`return STATUS URL`) instead of serving a file.
        public var redirect: (status: Int, location: String)?
        /// Resets every request made over HTTP/2 (`RST_STREAM` with `INTERNAL_ERROR`, nginx's answer to
        /// `return 444` on a stream) and serves HTTP/1.1 as usual: a server that offers HTTP/2 and fails it.
        public var resetsHTTP2Streams = false
        /// Serves the URIs as a caching proxy of another server instead of from the document root.
        public var cache: Cache?

        /// A caching proxy in front of `origin`, as a fleet's cache peer is deployed: nginx's `slice` module cuts
        /// every request into aligned slices of `sliceSize` (nginx's size syntax, `1m`), each fetched from the
        /// origin once with `Range`, stored under its URI and slice, and shared by concurrent misses
        /// (`proxy_cache_lock`).
        public struct Cache: Sendable, Equatable {
            /// The origin's URL prefix that the location's prefix maps to, e.g. `http://127.0.0.1:8080/`.
            public var origin: String
            /// The slice size, in nginx's syntax.
            public var sliceSize: String
        }

        /// Serves the directory `directory` of the document root under the URI prefix `prefix`.
        ///
        /// `.prefix("/throttled/", bytesPerSecond: 1 << 20)` serves `<root>/a.bin` as `/throttled/a.bin`
        /// at 1 MiB/s per connection.
        public static func prefix(
            _ prefix: String,
            serving directory: String = "/",
            bytesPerSecond: Int? = nil,
            headers: [(name: String, value: String)] = []
        ) -> Location {
            precondition(prefix.hasPrefix("/") && prefix.hasSuffix("/"), "a prefix starts and ends with '/'")
            precondition(directory.hasPrefix("/") && directory.hasSuffix("/"), "a directory starts and ends with '/'")
            return Location(match: .prefix(prefix), target: directory, bytesPerSecond: bytesPerSecond, headers: headers)
        }

        /// Serves the single URI `path` from the document-root-relative `file` (by default the same path).
        ///
        /// `.exact("/file.bin", headers: [("Content-MD5", digest.base64)])` adds the header to that file only.
        public static func exact(
            _ path: String,
            serving file: String? = nil,
            bytesPerSecond: Int? = nil,
            headers: [(name: String, value: String)] = []
        ) -> Location {
            precondition(path.hasPrefix("/"), "a URI path starts with '/'")
            let file = file ?? path
            precondition(file.hasPrefix("/"), "a file path starts with '/'")
            return Location(match: .exact(path), target: file, bytesPerSecond: bytesPerSecond, headers: headers)
        }

        /// Serves every URI under `prefix` as a slice cache of `origin` (a URL prefix ending in `/`):
        /// `.sliceCache("/cache/", origin: nginx.url("/"))` serves the origin's `/a.bin` as `/cache/a.bin`.
        /// With `bytesPerSecond`, each of its responses is sent at that rate (`limit_rate`).
        public static func sliceCache(
            _ prefix: String, origin: String, sliceSize: String = "1m", bytesPerSecond: Int? = nil
        ) -> Location {
            precondition(prefix.hasPrefix("/") && prefix.hasSuffix("/"), "a prefix starts and ends with '/'")
            precondition(origin.hasSuffix("/"), "the origin is a URL prefix ending in '/'")
            var result = Location(match: .prefix(prefix), target: "/", bytesPerSecond: bytesPerSecond, headers: [])
            result.cache = Cache(origin: origin, sliceSize: sliceSize)
            return result
        }

        /// Redirects the single URI `path` to `location` with `status` (301, 302, 303, 307 or 308).
        public static func redirect(_ path: String, status: Int = 302, to location: String) -> Location {
            precondition(path.hasPrefix("/"), "a URI path starts with '/'")
            var result = Location(match: .exact(path), target: path, bytesPerSecond: nil, headers: [])
            result.redirect = (status, location)
            return result
        }
    }
}
