#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The sidecar `FILE.braid`: what is being downloaded and how much of each segment is already in `FILE.part`, as
/// two marks, `done` (written) and `durable` (flushed to the disk), with the `bootID` that says which to trust on
/// resume. It is written only after the data it describes (`ManifestStore`).
///
/// Design: `docs/design/durability.md#the-manifest-and-crash-ordering`.
struct Manifest: Codable, Equatable, Sendable {
    static let formatName = "braid-manifest"
    static let currentVersion = 1
    static let maximumSegments = 100_000

    /// One byte range of the file and the length of its prefix already written.
    struct Segment: Codable, Equatable, Sendable {
        var start: Int64
        var end: Int64
        var done: Int64
        var durable: Int64
        /// Bytes from `start` checked against digests (piece hashes or `Content-Digest`), when the download checks
        /// them; absent otherwise. A resume trusts only these without checking again.
        var verified: Int64? = nil
    }

    var format: String = Self.formatName
    var version: Int = Self.currentVersion
    /// The URL as the user gave it, without `user:password@` (see `URLUserinfo`); a manifest for another URL
    /// is never applied.
    var url: String
    /// The URL after redirects, where segments are fetched from, without `user:password@` either.
    var resolvedURL: String
    var length: Int64
    var etag: String?
    var lastModified: String?
    /// The digest the file is held to, and its source, whose rank `DigestAuthority` reads: a weaker source never
    /// replaces it, and a later run that gives a different one from the same or a higher rank is refused.
    var digestAlgorithm: DigestAlgorithm?
    var digestHex: String?
    var digestSource: ExpectedDigest.Source?
    var bootID: String
    /// Empty when no data is kept (`keepsData`): the manifest is then only the record of the digest.
    var segments: [Segment]
    /// Set when the complete data in `FILE.part` failed its digest: the data is kept for a repair (`--repair`).
    var failedDigest: FailedDigest? = nil
    /// Set while a repair pass rewrites `FILE.part`: the segments are then the pass's progress, not the data's.
    var repair: Repair? = nil
    /// Set for a download used while it arrives (`-o -`, `--extract`): what was released from `FILE.part`, and how
    /// far an archive is unpacked. Absent from older manifests, which then describe no stream.
    var stream: Stream? = nil

    /// Whether this manifest was written for `url`, compared without credentials on either side: manifests no
    /// longer store them, and older ones did.
    func belongs(to url: String) -> Bool {
        URLUserinfo.removed(from: self.url) == URLUserinfo.removed(from: url)
    }

    /// Whether `FILE.part` holds data this manifest describes; one that keeps none only records the digest.
    var keepsData: Bool { !segments.isEmpty }

    /// Whether it records any downloaded byte: written to a segment, released from a stream, or kept for a repair.
    /// One that records none gives a rerun nothing to resume, only the digest it holds the file to.
    var recordsDownloadedBytes: Bool {
        failedDigest != nil || repair != nil || stream != nil || segments.contains { $0.done > 0 }
    }

    var expectedDigest: ExpectedDigest? {
        guard let algorithm = digestAlgorithm, let hex = digestHex, let source = digestSource,
            let bytes = ExpectedDigest.decodeHex(hex), bytes.count == algorithm.byteCount
        else { return nil }
        return ExpectedDigest(algorithm: algorithm, bytes: bytes, source: source)
    }

    /// How many bytes of each segment may be trusted now: everything written if this is the boot that wrote it,
    /// else only what had been synced to disk.
    func trustedProgress(onBoot bootID: String) -> [Int64] {
        segments.map { bootID == self.bootID ? $0.done : $0.durable }
    }

    /// Checks every invariant a manifest from disk must hold before any of it is believed.
    func validate() throws(BraidError) {
        guard format == Self.formatName else { throw .manifest("it is not a Braid manifest") }
        guard version == Self.currentVersion else {
            throw .manifest("it has format version \(version); this Braid reads version \(Self.currentVersion)")
        }
        guard length >= 0 else { throw .manifest("it records a negative length") }
        guard length <= RemoteResource.maximumLength else {
            throw .manifest("it records a length of \(length) bytes, more than Braid can download (at most 8 PiB)")
        }
        guard segments.count <= Self.maximumSegments else { throw .manifest("it records too many segments") }
        if digestAlgorithm != nil || digestHex != nil || digestSource != nil, expectedDigest == nil {
            throw .manifest("its recorded digest is malformed")
        }
        if segments.isEmpty {
            // An empty file, or only the record of a digest: there is no data for a failed digest or a repair.
            guard failedDigest == nil, repair == nil else {
                throw .manifest("it records a digest failure without data")
            }
            return
        }
        guard let first = segments.first, first.start == 0 else {
            throw .manifest("its segments do not start at byte 0")
        }
        var expectedStart: Int64 = 0
        for (index, segment) in segments.enumerated() {
            guard segment.start == expectedStart else {
                throw .manifest(
                    "segment \(index) starts at \(segment.start), expected \(expectedStart) (gap or overlap)")
            }
            guard segment.end > segment.start, segment.end <= length else {
                throw .manifest("segment \(index) has bounds \(segment.start)..<\(segment.end) outside 0..<\(length)")
            }
            guard segment.done >= 0, segment.done <= segment.end - segment.start else {
                throw .manifest("segment \(index) claims \(segment.done) bytes done of \(segment.end - segment.start)")
            }
            guard segment.durable >= 0, segment.durable <= segment.done else {
                throw .manifest("segment \(index) claims more durable bytes than written")
            }
            if let verified = segment.verified, verified < 0 || verified > segment.done {
                throw .manifest("segment \(index) claims \(verified) bytes verified of \(segment.done) written")
            }
            expectedStart = segment.end
        }
        guard expectedStart == length else { throw .manifest("its segments end at \(expectedStart), not at \(length)") }
        try validateRepairState()
    }
}

extension Manifest {
    /// A manifest that keeps no data, only the digest the file is held to: what is left when the partial data is
    /// discarded (the remote file changed, the server stopped resuming, the data failed without a way to repair
    /// it) while a digest given by the user, a checksum file or a Metalink must still apply to the next run.
    init(recordOf digest: ExpectedDigest, url: String, resolvedURL: String, length: Int64) {
        self.init(
            url: URLUserinfo.removed(from: url), resolvedURL: URLUserinfo.removed(from: resolvedURL), length: length,
            etag: nil, lastModified: nil, digestAlgorithm: digest.algorithm, digestHex: digest.hex,
            digestSource: digest.source, bootID: BootID.current, segments: [])
    }
}
