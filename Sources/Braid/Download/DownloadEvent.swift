/// What a download reports while it runs, in order.
public enum DownloadEvent: Sendable, Equatable {
    /// The download entered a new state.
    case state(DownloadState)
    /// The server was probed and the destination chosen.
    case started(resource: RemoteResource, path: String, resumedBytes: Int64)
    case progress(DownloadProgress)
    /// A request failed and will be retried after `delay` seconds. `reason` is safe to print (`PrintableText`).
    case retry(reason: String, delay: Double)
    /// Something the user should know that is not an error, such as a restart because the remote file changed.
    /// Safe to print: what it quotes from a server or a file is escaped, and URL passwords are hidden. A warning
    /// (it begins `warning: `) tells of a standing risk, such as a redirect out of HTTPS, and a download reports
    /// each one once, however often it follows that redirect again (a retry, the GET after a HEAD).
    case notice(String)
    /// The file passed its checks and is in place.
    case completed(DownloadResult)
}

extension DownloadEvent {
    /// The start of a notice that is a warning (`notice`).
    static let warningPrefix = "warning: "

    /// Whether it is a notice that is a warning, which a download reports once.
    var isWarning: Bool {
        if case let .notice(message) = self { message.hasPrefix(Self.warningPrefix) } else { false }
    }

    /// Whether it is a state or the result: what a `DownloadManager` made without `streamingStates` leaves out of
    /// its stream, whose `.finished` carries the result too.
    var isStateOrResult: Bool {
        switch self {
        case .state, .completed: true
        case .started, .progress, .retry, .notice: false
        }
    }

    /// The event with its messages made safe to print (see `PrintableText`).
    var sanitised: DownloadEvent {
        switch self {
        case let .retry(reason, delay): .retry(reason: PrintableText.sanitised(reason), delay: delay)
        case let .notice(message): .notice(PrintableText.sanitised(message))
        default: self
        }
    }
}

/// A finished, verified download.
public struct DownloadResult: Sendable, Equatable {
    /// Where the file is.
    public var path: String
    public var bytes: Int64
    /// The digest it was checked against, if one was known; the length is checked whenever one was given
    /// (`lengthVerified`).
    public var verifiedDigest: ExpectedDigest?
    /// Bytes that were already on disk from an earlier run.
    public var resumedBytes: Int64
    /// Wall time of this run, in seconds.
    public var seconds: Double
    /// Body bytes received from the network in this run (more than `bytes - resumedBytes` if some were refetched).
    public var fetchedBytes: Int64
    /// Requests retried in this run.
    public var retries: Int
    /// Seconds from the start of the run to the first body byte, when any arrived.
    public var timeToFirstByte: Double?
    /// Whether the file was left as it was because the server's is not newer (`DownloadOptions.timestamping`):
    /// nothing was fetched or written, and nothing but its length may have been compared.
    public var unmodified = false
    /// With automatic connections, the number it settled on by the end; nil for a fixed count.
    public var connections: Int? = nil
    /// With cache peers (`DownloadOptions.cachePeers`), the part of `fetchedBytes` they sent; nil without peers.
    public var peerBytes: Int64? = nil
    /// Piece hashes every piece was checked against (`DownloadOptions.pieceHashes`), if there were some. When they
    /// came with the whole-file digest from the same Metalink, they stand for it: `verifiedDigest` is then nil.
    public var verifiedPieces: VerifiedPieces? = nil
    /// After a repair pass (`DownloadOptions.repair`), the byte ranges of the kept data that differed from the
    /// server's and were rewritten, merged and in file order (empty when none differed); nil without a repair pass.
    public var repairedRanges: [Range<Int64>]? = nil
    /// For an archive unpacked as it downloaded (`StreamTarget.extraction`), what was unpacked; `path` is then
    /// the archive's, kept only with `StreamOptions.keepsFile`.
    public var extraction: ExtractionSummary? = nil
    /// Whether the file was checked to have the length the server gave (`Content-Length`, a `Content-Range`'s
    /// complete length) or a document did (a Metalink's size). False for a response that gave none, as curl and wget
    /// save it: its end was only where its framing said, which for an HTTP/1 body ended by a closed connection cannot
    /// tell a cut-off file from a whole one. Without a digest, such a file is vouched for by nothing.
    public var lengthVerified = true
}

extension DownloadResult {
    /// How many pieces were checked, and by which algorithm.
    public struct VerifiedPieces: Sendable, Equatable {
        public var algorithm: DigestAlgorithm
        public var count: Int

        public init(algorithm: DigestAlgorithm, count: Int) {
            self.algorithm = algorithm
            self.count = count
        }
    }

    /// What the file was checked against, as the last line says it: `sha-256 verified against Repr-Digest`,
    /// `sha-256 verified piece by piece (4096 pieces)`, `length verified`, or, with neither a digest nor a length,
    /// `not verified: the server gave no length`.
    public var verification: String {
        if let digest = verifiedDigest { return "\(digest.algorithm) verified against \(digest.source.rawValue)" }
        if let pieces = verifiedPieces { return "\(pieces.algorithm) verified piece by piece (\(pieces.count) pieces)" }
        return lengthVerified ? "length verified" : "not verified: the server gave no length"
    }
}
