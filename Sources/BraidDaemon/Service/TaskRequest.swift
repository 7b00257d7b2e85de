import Braid

/// What a client asked for when it added a download: the URLs and the options that shape it. Kept in the session
/// as given (after validation), so a restarted daemon asks for exactly the same thing.
public struct TaskRequest: Sendable, Codable, Equatable {
    /// The URL and its mirrors, all serving the same file.
    public var uris: [String]
    /// The directory the file goes in: the daemon's directory or one below it, absolute.
    public var directory: String
    /// The file name within `directory` (aria2's `out`); nil to take the server's name.
    public var output: String?
    /// An expected digest as aria2 and `--checksum` write it, `sha-256=HEX`.
    public var checksum: String?
    /// Extra request headers, `Name: value`.
    public var headers: [String]
    /// Connections; nil for the daemon's default.
    public var connections: Int?
    /// Bytes a second for this download; nil for no limit of its own.
    public var rateLimit: Int64?
    /// Cache peers' URL templates, comma-separated as `--cache-peers` takes them; nil for the daemon's own.
    public var cachePeers: String?
    /// The whole-file hashes a Metalink gave the file (`aria2.addMetalink`); nil when none did.
    public var metalinkDigests: [ExpectedDigest]?
    /// The piece hashes a Metalink gave the file; nil when none did.
    public var pieces: PieceHashes?
    /// The file's length as a Metalink gave it (`DownloadOptions.expectedLength`); nil when none did.
    public var metalinkLength: Int64?

    public init(
        uris: [String],
        directory: String,
        output: String? = nil,
        checksum: String? = nil,
        headers: [String] = [],
        connections: Int? = nil,
        rateLimit: Int64? = nil,
        cachePeers: String? = nil
    ) {
        self.uris = uris
        self.directory = directory
        self.output = output
        self.checksum = checksum
        self.headers = headers
        self.connections = connections
        self.rateLimit = rateLimit
        self.cachePeers = cachePeers
    }
}
