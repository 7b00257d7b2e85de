/// Which digest a file is held to: the one from the strongest source that ever gave one for it.
///
/// Sources rank the user (`--checksum`, a list's `checksum=`, an RPC `checksum`: ``ExpectedDigest/Source/user``)
/// above a checksum file, a checksum file above a Metalink, and a Metalink above the server's headers. The
/// manifest records the digest a download is held to with its source (`Manifest.expectedDigest`), so the rank
/// outlives the run that gave it; a digest given by the user, a checksum file or a Metalink also outlives the
/// partial data (``outlivesData(_:)``). A weaker source never replaces a recorded stronger one, and a run that
/// gives a digest contradicting one recorded from its own rank or a lower given one is refused.
///
/// Every feature that needs the file's digest asks this type (a download, its resume and repair, a file already
/// at the destination, timestamping, a Metalink, the daemon); none chooses on its own. See docs/SECURITY.md.
struct DigestAuthority: Sendable, Equatable {
    /// How far a source is trusted, weakest first.
    enum Rank: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
        /// A response header: `Content-MD5`, `Digest`, `Repr-Digest`, `x-goog-hash`, `x-amz-checksum-*`, an S3
        /// `ETag`. It vouches for the bytes no more than the server that sends them.
        case server
        /// A Metalink document's whole-file hash.
        case metalink
        /// A line of a `SHA256SUMS`-style file.
        case checksumFile
        /// A digest the user gave for this very download.
        case user

        init(_ source: ExpectedDigest.Source) {
            switch source {
            case .user: self = .user
            case .checksumFile: self = .checksumFile
            case .metalink: self = .metalink
            case .contentMD5, .digestHeader, .reprDigestHeader, .contentDigestHeader, .googHash, .amzChecksumSHA256,
                .amzChecksumSHA1, .entityTag:
                self = .server
            }
        }

        static func < (lhs: Rank, rhs: Rank) -> Bool { lhs.rawValue < rhs.rawValue }

        var description: String {
            switch self {
            case .server: "server"
            case .metalink: "metalink"
            case .checksumFile: "checksum file"
            case .user: "user"
            }
        }
    }

    /// What a download does about its digest.
    enum Decision: Equatable, Sendable {
        /// Verify the file against `digest` (nil: there is none, only the length is checked) and record it.
        /// `overruled` is a weaker digest of the same algorithm that disagrees with it: reported, never used.
        case holdTo(ExpectedDigest?, overruled: ExpectedDigest?)
        /// The server's digest differs from the one it gave before: the remote file changed, so the partial data
        /// goes, and the file is held to `digest` from now on.
        case remoteChanged(holdTo: ExpectedDigest?)
        /// This run gives `given`, which contradicts `recorded`, a digest an earlier run was given by a source of
        /// the same or a lower rank: refused before any traffic (the partial download must be discarded first).
        case contradiction(recorded: ExpectedDigest, given: ExpectedDigest)

        /// The digest the file is held to; nil for none, and for a contradiction, which holds it to nothing yet.
        var digest: ExpectedDigest? {
            switch self {
            case let .holdTo(digest, _), let .remoteChanged(digest): digest
            case .contradiction: nil
            }
        }
    }

    /// The digest an earlier run held the file to, from its manifest.
    var recorded: ExpectedDigest?
    /// Every digest this run has for the file, from any source: the user's, the checksum file's line, the
    /// Metalink's hashes, the server's headers.
    var offered: [ExpectedDigest]

    init(recorded: ExpectedDigest?, offered: [ExpectedDigest]) {
        self.recorded = recorded
        self.offered = offered
    }

    /// Whether `digest` still applies once the partial data is gone: one given for the file wanted (by the user, a
    /// checksum file or a Metalink) does; the server's describes only the file it was serving then.
    static func outlivesData(_ digest: ExpectedDigest) -> Bool {
        Rank(digest.source) > .server
    }

    /// The decision for the recorded digest and the ones offered.
    var decision: Decision {
        let best = Self.strongest(offered)
        guard let recorded else { return .holdTo(best, overruled: overruling(best)) }
        let recordedRank = Rank(recorded.source)
        if recordedRank > .server {
            // A digest given before binds: one given now by the same or a stronger source must be the same one.
            let contrary = offered.filter { Rank($0.source) >= recordedRank && !Self.same($0, recorded) }
            if let given = Self.strongest(contrary) { return .contradiction(recorded: recorded, given: given) }
        } else if offered.contains(where: {
            Rank($0.source) == .server && $0.algorithm == recorded.algorithm && $0.bytes != recorded.bytes
        }) {
            return .remoteChanged(holdTo: best)
        }
        // The recorded digest holds unless one at least as strong is offered (then the same one, for a given
        // digest, or the server's word now, for a server's).
        guard let best, Rank(best.source) >= recordedRank else {
            return .holdTo(recorded, overruled: overruling(recorded))
        }
        return .holdTo(best, overruled: overruling(best))
    }

    /// The authority once the partial data is gone: a recorded digest that does not outlive the data is forgotten.
    var withoutData: DigestAuthority {
        DigestAuthority(recorded: recorded.flatMap { Self.outlivesData($0) ? $0 : nil }, offered: offered)
    }

    /// The strongest source's digest; among several of that source, the strongest algorithm.
    private static func strongest(_ digests: [ExpectedDigest]) -> ExpectedDigest? {
        guard let rank = digests.map({ Rank($0.source) }).max() else { return nil }
        return DigestHeaders.preferred(digests.filter { Rank($0.source) == rank })
    }

    /// The strongest offered digest from a weaker source than `held` that has its algorithm but other bytes.
    private func overruling(_ held: ExpectedDigest?) -> ExpectedDigest? {
        guard let held else { return nil }
        let dissenting = offered.filter {
            Rank($0.source) < Rank(held.source) && $0.algorithm == held.algorithm && $0.bytes != held.bytes
        }
        return dissenting.max { Rank($0.source) < Rank($1.source) }
    }

    private static func same(_ first: ExpectedDigest, _ second: ExpectedDigest) -> Bool {
        first.algorithm == second.algorithm && first.bytes == second.bytes
    }
}
