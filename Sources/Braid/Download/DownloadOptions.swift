import SystemPackage

/// Everything a download can be told: where it goes, how many connections, what it must match.
public struct DownloadOptions: Sendable {
    /// The HTTP version of a download's requests.
    public enum HTTPVersion: Sendable, Equatable {
        /// HTTP/2 over HTTPS where the server offers it (ALPN), for requests that may share a connection: a
        /// probe, a small file, a single stream. The segments of a file fetched over several connections at once
        /// use HTTP/1.1, one TCP connection each, so that a server's or a network's per-connection caps add up. A
        /// `DownloadManager`'s requests that share a connection move to one each where it learns that is faster.
        /// Plain `http://` is HTTP/1.1.
        case automatic
        /// HTTP/1.1 for every request (`--http1.1`).
        case http1
        /// HTTP/2 for every request, the segments of a file multiplexed on shared connections (`--http2`): over
        /// HTTPS where the server offers it, over plain `http://` with prior knowledge (h2c), which a server
        /// that does not speak it refuses.
        case http2
    }

    /// Where the file goes: an exact path, a directory in which the name is chosen from the server's
    /// `Content-Disposition` or the URL, or a place below a directory that a document or a client named.
    ///
    /// The paths in `.file` and `.directory`, and the directory of `.below`, are the user's own: links in them are
    /// followed, as any program follows them. What a server, a served document or a client named is not: the
    /// server's name is made a `SafeName`, and the directories of `.below` are opened without following links.
    public enum Destination: Sendable, Equatable {
        case file(String)
        case directory(String)
        /// In `subdirectory` of the directory (the first value; `""` for none, `"a/b"` for two levels), the file
        /// `name`, or the server's name when nil: a place a served document (a Metalink's `name`) or a client (the
        /// daemon's `dir` and `out`) chose. Every component must be a `SafeName` as it is (use
        /// `SafeName.path(sanitising:)` or `SafeName.path(validating:)` on the way in), else the download is refused
        /// before any traffic; the subdirectories are made and opened without following links, so that no link in
        /// them leads outside the directory.
        case below(String, subdirectory: String, name: String?)

        /// `.below(directory, …)` for the file at `path` below it, the last component naming the file.
        static func below(_ directory: String, path: [SafeName]) -> Destination {
            .below(directory, subdirectory: SafeName.joined(path.dropLast()), name: path.last?.string)
        }

        /// Whether the destination names the file itself, so that neither the server's name nor the URL's is
        /// asked for (`DestinationPaths.resolve`).
        var namesFile: Bool {
            switch self {
            case .file: true
            case .directory: false
            case let .below(_, _, name): name != nil
            }
        }
    }

    public var destination: Destination = .directory(".")
    /// Other URLs serving the same file: segments are spread across all of them, and a mirror that keeps failing
    /// (or serves a different length) is dropped.
    public var mirrors: [String] = []
    /// Parallel connections (segments fetched at once).
    public var connections = 8
    /// Let the download choose its number of connections as it runs (`-n auto`), instead of `connections`: it
    /// starts with a few, adds more while each step raises the throughput by at least 5 %, and drops back when a
    /// step does not pay, when the first byte comes much later, or when the server refuses connections; never
    /// above `maximumAutomaticConnections`.
    public var automaticConnections = false
    /// The most connections `automaticConnections` may choose; nil for 16, or 64 for a server on this machine.
    public var maximumAutomaticConnections: Int?
    /// A file where `automaticConnections` remembers the count each server's download settled on (as aria2's
    /// `--server-stat-of`), so that the next download from the same server starts there rather than ramping up;
    /// nil remembers nothing. Entries older than a week are forgotten; a file that cannot be read counts as empty.
    /// Not used under a rate limit, which more connections could not use.
    public var serverStatsPath: String?
    /// How many pieces the file is planned in per connection. More pieces keep the verifier's in-order prefix
    /// moving and limit what a slow connection holds; 1 gives each connection one long request.
    public var piecesPerConnection = 4
    /// A digest the user vouches for (its source is normally `.user`); it takes precedence over a checksum file,
    /// a Metalink and the server. A digest given to an earlier run of the same download still applies when this
    /// one is nil, and a different one is refused until the partial download is discarded (`overwrite`).
    public var expectedDigest: ExpectedDigest?
    /// A `SHA256SUMS` or `MD5SUMS` style file: the line naming the downloaded file (by its final name) is the
    /// digest to verify against, in preference to a Metalink's and the server's. It is read before any traffic; a
    /// file that cannot be read, or has no line for the name, is a usage error.
    public var checksumFile: String?
    /// A Metalink's whole-file hashes of the file (`Metalink.File.download(options:)` sets them): the strongest is
    /// verified, in preference to the server's, unless `expectedDigest` or `checksumFile` gives one.
    public var metalinkDigests: [ExpectedDigest] = []
    /// Digests of the file's pieces (from a Metalink): each piece is checked as soon as it is written, a bad one is
    /// fetched again alone (from another mirror when there is one), and a resume re-checks what was not yet
    /// verified instead of trusting it.
    public var pieceHashes: PieceHashes?
    /// The file's length as a Metalink gives it (`<size>`; `Metalink.File.download(options:)` sets it): a server
    /// that says its file is of another length is refused (`.integrity`) before more than its first response is
    /// read, and before anything is written, even where the Metalink gives no hash to catch it by.
    public var expectedLength: Int64?
    /// Repairs the data a whole-file digest mismatch kept in `FILE.part` (the error's remedy is `.repair`): fetch
    /// every piece once more, rewrite only the bytes that differ, and verify again; `DownloadResult.repairedRanges`
    /// says which were rewritten (`--repair`). Without kept data the download runs as usual.
    public var repair = false
    /// Caches a fleet shares (`--cache-peers`): the file is cut into slices of `sliceSize` bytes, and each slice is
    /// asked of the peer that rendezvous hashing picks for it, the same one on every host, so that the caches
    /// fetch each slice from the origin once for the whole fleet. The origin is still probed; a peer's answer must
    /// carry the origin's length and validators, and its bytes count only once a digest vouches for them: piece
    /// hashes, or the whole-file digest, after which the bytes peers served are fetched again from the origin
    /// where they differ. A peer that fails is left alone for a while and its slices go to the next one, then to
    /// the origin: no failure of a peer fails the download. Peers are sent none of the user's credentials.
    public var cachePeers: [CachePeer] = []
    /// The bytes of each slice asked of a cache peer (`--slice-size`): the caches' own slice size, or a multiple
    /// of it. 64 KiB to 4 GiB.
    public var sliceSize: Int64 = Self.defaultSliceSize
    /// Uses `cachePeers` even when no digest can vouch for what they serve (`--trust-cache-peers`); without it,
    /// such a download is refused before any of its data is fetched.
    public var trustsCachePeers = false
    /// Extra request header lines, `Name: value`. They are sent only to the origins (scheme, host and port) the
    /// user named (`credentialScope`), never to another one a redirect or a document leads to.
    public var headers: [String] = []
    /// The origins (scheme, host and port) the user named for this download, the only ones sent the user's
    /// credentials: `headers`, the cookie jar's cookies, the netrc file's logins, and the `user:password@` the
    /// user wrote in a URL (to that URL's origin). Nil stands for the URL and `mirrors` given, as when the user
    /// typed them. A program that downloads URLs it learned from a server sets the URLs the user gave instead, so
    /// that no server can direct the credentials elsewhere: `Metalink.File.download(options:from:…)` does so for
    /// a served Metalink.
    public var credentialScope: CredentialScope?
    /// The schemes a redirect may lead to (curl's `--proto-redir`): `["https"]` refuses a redirect from HTTPS to
    /// plain HTTP, which is otherwise followed with a warning and without the extra headers.
    public var redirectSchemes: Set<String> = ["http", "https"]
    /// Replace an existing complete file, and discard a manifest that cannot be used.
    public var overwrite = false
    /// When the destination already holds a file (and no manifest says it is partial), check it instead of
    /// failing: if its length matches the server's, and its digest the expected one when one is known, the
    /// download completes without fetching anything. This is how a list is run again.
    public var skipExistingIfVerified = false
    /// The proxy every request goes through, as curl's `--proxy`: `http://`, `https://`, `socks5://` or
    /// `socks5h://` (the proxy resolves host names), with `user:password@` when it asks for credentials; no scheme
    /// means `http://`. It takes precedence over the `http_proxy`, `https_proxy` and `ALL_PROXY` environment
    /// variables, which libcurl reads when this is `nil`; an empty string uses no proxy at all. Credentials are
    /// never stored in the manifest nor shown in messages.
    public var proxy: String?
    /// Hosts reached directly rather than through the proxy, as curl's `--noproxy`: comma-separated names (a name
    /// also covers its subdomains) or addresses, `*` for all. It takes precedence over the `NO_PROXY` environment
    /// variable.
    public var noProxy: String?
    /// A `.netrc` file whose `machine` entries give the login for each host, as curl's `--netrc-file`; nil reads
    /// none. An entry is sent only to its host, and only on an origin the user named (`credentialScope`).
    public var netrcPath: String?
    /// A Netscape cookie jar (as curl's `-b FILE` reads it) whose cookies go to the domains and paths they name,
    /// and only on an origin the user named (`credentialScope`): a jar's domain alone would take in every port.
    public var cookieFilePath: String?
    /// Signs every request to an origin the user named (`credentialScope`) with AWS Signature Version 4, as S3
    /// requires of a private object; nil signs nothing. `ObjectStore` sets it for the objects it names.
    public var awsSignature: AWSSignature?
    /// The `User-Agent` of every request, as curl's `-U`; nil sends `braid/VERSION`.
    public var userAgent: String?
    /// Bytes a second the download may receive, all its connections together, as curl's `--limit-rate`; nil for
    /// no limit. `Download.rateLimit` changes it while the download runs.
    public var rateLimit: Int64?
    /// Gives the finished file the server's `Last-Modified` time, as curl's `--remote-time`.
    public var setsRemoteTime = false
    /// Skip the download when the file at the destination is as new as the server's, as `wget -N`: the probe asks
    /// with `If-Modified-Since` (the file's modification time), and a `304`, or a `Last-Modified` no newer and the
    /// same length, leaves the file untouched (`DownloadResult.unmodified`). Otherwise the file is downloaded and
    /// replaces the old one; either way the new file gets the server's time, so that the next run can compare.
    public var timestamping = false
    /// A CA bundle to trust for HTTPS, in PEM (also for an `https://` proxy).
    public var caCertificatePath: String?
    /// Skip TLS certificate verification (insecure).
    public var insecure = false
    /// Attempts per segment that make no progress before the download fails.
    public var maximumAttempts = 6
    /// Seconds a connection may go (nearly) silent before it is replaced.
    public var stallTimeoutSeconds = 30
    public var connectTimeoutSeconds = 30
    /// Flush the finished file to disk before it is renamed into place, so a power cut cannot leave a file with
    /// holes under the final name.
    public var syncOnCompletion = true
    /// Seconds between syncs that make progress durable against a power cut.
    public var durableCheckpointInterval: Double = 5
    /// Which HTTP version requests ask for (`--http1.1`, `--http2`); see `HTTPVersion`.
    public var httpVersion = HTTPVersion.automatic
    /// Print libcurl's protocol trace to stderr.
    public var verbose = false
    /// Fetch only the first `byteLimit` bytes of the resource (for measuring throughput, as `braid bench` does).
    /// No file is renamed into place and no digest is checked: a partial file cannot match one.
    public var byteLimit: Int64?
    /// Receive and count the bytes but write nothing (for measuring the network path alone).
    public var discardData = false
    /// Use the bytes while they arrive: write them in order to a descriptor, hand them out as `Download.chunks`,
    /// or unpack them as an archive, while the connections fetch ahead within a window (see `StreamOptions`).
    /// Nil saves the file as usual.
    public var stream: StreamOptions?

    /// Checks, without any traffic and creating nothing, that the destination can be written: an output path is
    /// not a directory, and the directory exists and is writable or can be created. `Download` checks this
    /// itself; a program running many downloads into one directory can check it once up front.
    public func checkDestination() throws(BraidError) {
        try DestinationPaths.checkDestination(destination)
    }

    /// Whether this is a measurement (a byte limit or discarded data): the transfer runs, nothing is kept.
    var measures: Bool { byteLimit != nil || discardData }

    /// The object as a listing described it before any request (an S3 listing's `Size`, `ETag` and
    /// `LastModified`, set by `ObjectStore.plan`): one it says is small is asked for whole
    /// (`DownloadJob.isListedSmall`), and a file already in place that it shows to be the object is skipped
    /// with no request (`DownloadJob.listedExisting`). Else only a hint: the response's own length is the file's.
    var listed: ObjectStore.Object?

    public init() {}

    /// Checks what can be checked before any network traffic. A refused value is a usage error whose `option`
    /// names the property.
    public func validate() throws(BraidError) {
        try validate(checksumFiles: ChecksumFiles())
    }

    /// `validate()`, reading the checksum file through `checksumFiles`, which a manager's downloads share.
    func validate(checksumFiles: ChecksumFiles) throws(BraidError) {
        if let stream {
            try stream.validate()
            guard !repair, !measures else { throw .usage("a streamed download cannot be repaired or measured") }
        }
        try validateNumbers()
        if let caCertificatePath, caCertificatePath.utf8.count > Self.maximumTextLength {
            throw .usage("the CA certificate path is too long", option: .caCertificatePath)
        }
        try validateProxy()
        for (path, option) in [(netrcPath, BraidError.Option.netrcPath), (cookieFilePath, .cookieFilePath)] {
            guard let path else { continue }
            guard path.utf8.count <= Self.maximumTextLength else {
                throw .usage("the path is too long", option: option)
            }
            do {
                try FileDescriptor.open(FilePath(path), .readOnly).close()
            } catch {
                throw .usage("cannot read '\(path)': \(error)", option: option)
            }
        }
        if let userAgent { try Self.checkLine(userAgent, "the user agent", option: .userAgent) }
        try awsSignature?.validate()
        for header in headers {
            // Bytes, not Characters: "\r\n" is one Character, which `contains("\n")` would not find.
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex,
                !header.utf8.contains(13), !header.utf8.contains(10)
            else { throw .usage("a header must look like 'Name: value', got '\(header)'", option: .headers) }
        }
        if let checksumFile {
            let sums = try checksumFiles.file(at: checksumFile)
            if expectedDigest == nil {
                let place = try DestinationPaths.place(of: destination)
                if let name = place.name { _ = try sums.digest(for: place.pathBelowDirectory(name: name)) }
            }
        }
        guard cachePeers.count <= Self.maximumCachePeers else {
            throw .usage("at most \(Self.maximumCachePeers) cache peers, got \(cachePeers.count)", option: .cachePeers)
        }
        for scheme in redirectSchemes.sorted() where scheme != "http" && scheme != "https" {
            throw .usage(
                "redirects can only be allowed to http and https, not '\(scheme)'",
                option: .redirectSchemes
            )
        }
    }

    /// Checks the counts, sizes and times.
    private func validateNumbers() throws(BraidError) {
        guard connections >= 1 else {
            throw .usage("the number of connections must be at least 1, got \(connections)", option: .connections)
        }
        guard connections <= 1024 else {
            throw .usage("at most 1024 connections, got \(connections)", option: .connections)
        }
        if let maximumAutomaticConnections, !(1...1024).contains(maximumAutomaticConnections) {
            throw .usage(
                "the most automatic connections must be between 1 and 1024, got \(maximumAutomaticConnections)",
                option: .connections
            )
        }
        guard (1...1024).contains(piecesPerConnection) else {
            throw .usage(
                "pieces per connection must be between 1 and 1024, got \(piecesPerConnection)",
                option: .piecesPerConnection
            )
        }
        guard maximumAttempts >= 1 else {
            throw .usage("the number of attempts must be at least 1, got \(maximumAttempts)", option: .maximumAttempts)
        }
        // A byte limit past the file's length (Int64.max for "all of it") is allowed: it is capped by the length.
        if let byteLimit, byteLimit < 1 {
            throw .usage("the byte limit must be at least 1, got \(byteLimit)", option: .byteLimit)
        }
        // libcurl takes timeouts in milliseconds in a C long that may be 32 bits: at most 2,147,483 seconds.
        guard Self.timeouts.contains(stallTimeoutSeconds) else {
            throw .usage(
                "the stall timeout must be between 1 and 2147483 seconds, got \(stallTimeoutSeconds)",
                option: .stallTimeoutSeconds
            )
        }
        guard Self.timeouts.contains(connectTimeoutSeconds) else {
            throw .usage(
                "the connect timeout must be between 1 and 2147483 seconds, got \(connectTimeoutSeconds)",
                option: .connectTimeoutSeconds
            )
        }
        guard durableCheckpointInterval.isFinite, durableCheckpointInterval > 0 else {
            throw .usage(
                "the durable checkpoint interval must be a positive number of seconds",
                option: .durableCheckpointInterval
            )
        }
        if let rateLimit, rateLimit < 0 {
            throw .usage("the rate limit must be positive (or none), not \(rateLimit)", option: .rateLimit)
        }
        guard Self.sliceSizes.contains(sliceSize) else {
            throw .usage("the slice size must be between 64 KiB and 4 GiB, got \(sliceSize) bytes", option: .sliceSize)
        }
    }

    /// The proxy schemes libcurl is asked to speak.
    static let proxySchemes: Set<String> = ["http", "https", "socks5", "socks5h"]

    private func validateProxy() throws(BraidError) {
        if let proxy {
            try Self.checkLine(proxy, "the proxy", option: .proxy)
            if let marker = proxy.firstRange(of: "://") {
                let scheme = proxy[..<marker.lowerBound].lowercased()
                guard Self.proxySchemes.contains(scheme) else {
                    throw .usage(
                        "the proxy must be http://, https://, socks5:// or socks5h://, not '\(scheme)://'",
                        option: .proxy
                    )
                }
                guard proxy[marker.upperBound...].contains(where: { $0 != "/" }) else {
                    throw .usage("the proxy '\(proxy)' names no host", option: .proxy)
                }
            }
        }
        if let noProxy { try Self.checkLine(noProxy, "the no-proxy list", option: .noProxy) }
    }

    /// Text libcurl takes as one option: no longer than it accepts, and without a control character (a line
    /// break would split a request header, a NUL end the C string early).
    private static func checkLine(_ text: String, _ what: String, option: BraidError.Option) throws(BraidError) {
        guard text.utf8.count <= maximumTextLength else { throw .usage("\(what) is too long", option: option) }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .usage("\(what) contains a control character", option: option)
        }
    }

    /// The slice size a download asks of its cache peers unless told otherwise: nginx's and Varnish's
    /// configurations in the manual use the same.
    public static let defaultSliceSize: Int64 = 16 << 20
    /// The slice sizes a download accepts.
    static let sliceSizes: ClosedRange<Int64> = (64 << 10)...(4 << 30)
    /// The most cache peers a download may name.
    static let maximumCachePeers = 1024

    /// Timeouts libcurl accepts, in seconds.
    static let timeouts = 1...2_147_483
    /// The longest string libcurl accepts as an option (`CURL_MAX_INPUT_LENGTH`).
    static let maximumTextLength = 8_000_000

    var requestOptions: RequestOptions {
        var options = RequestOptions()
        options.headers = headers
        options.redirectSchemes = redirectSchemes
        options.caCertificatePath = caCertificatePath
        options.insecure = insecure
        options.proxy = proxy
        options.noProxy = noProxy
        if let userAgent { options.userAgent = userAgent }
        options.netrcPath = netrcPath
        options.cookieFilePath = cookieFilePath
        options.awsSignature = awsSignature
        options.connectTimeoutSeconds = connectTimeoutSeconds
        options.stallTimeoutSeconds = stallTimeoutSeconds
        options.verbose = verbose
        options.httpVersion = httpVersion
        return options
    }

    /// The connections the plan is cut for: the fixed count, or with automatic connections, as many as the
    /// default (more come from idle connections taking over half of another's piece).
    var plannedConnections: Int {
        automaticConnections ? 8 : connections
    }

    var retryPolicy: RetryPolicy {
        var policy = RetryPolicy()
        policy.maximumAttempts = maximumAttempts
        return policy
    }
}
