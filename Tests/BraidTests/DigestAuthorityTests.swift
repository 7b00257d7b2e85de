import Testing

@testable import Braid

/// Which digest a file is held to: every ordered pair of sources, the one recorded by an earlier run and the one
/// this run offers, with the same digest, another digest of the same algorithm, and a digest of another algorithm.
@Suite("DigestAuthority")
struct DigestAuthorityTests {
    typealias Rank = DigestAuthority.Rank

    /// How the offered digest relates to the recorded one.
    enum Relation: String, CaseIterable, Sendable {
        /// Same algorithm, same bytes.
        case agrees
        /// Same algorithm, other bytes: provably another file.
        case differs
        /// Another algorithm: nothing says whether it describes the same file.
        case otherAlgorithm
    }

    /// What the authority is to decide, written per case rather than computed, so the table is the specification.
    enum Expected: String, Sendable {
        /// Hold to the recorded digest; nothing overruled.
        case recorded
        /// Hold to the recorded digest, and report the offered one as overruled.
        case recordedOverruling
        /// Hold to the offered digest.
        case offered
        /// The server's digest changed: the data goes, the offered digest holds.
        case remoteChanged
        /// Refused: the offered digest contradicts the recorded one.
        case refused
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var recorded: Rank
        var offered: Rank
        var relation: Relation
        var expected: Expected

        var testDescription: String { "recorded \(recorded), offered \(offered) that \(relation): \(expected)" }
    }

    /// One source of each rank (a server header, the Metalink, the checksum file, the user).
    static func source(_ rank: Rank) -> ExpectedDigest.Source {
        switch rank {
        case .server: .reprDigestHeader
        case .metalink: .metalink
        case .checksumFile: .checksumFile
        case .user: .user
        }
    }

    static let good = [UInt8](repeating: 0x11, count: 32)
    static let bad = [UInt8](repeating: 0x22, count: 32)
    static let otherAlgorithm = [UInt8](repeating: 0x33, count: 16)

    static func recorded(_ rank: Rank) -> ExpectedDigest {
        ExpectedDigest(algorithm: .sha256, bytes: good, source: source(rank))
    }

    static func offered(_ rank: Rank, _ relation: Relation) -> ExpectedDigest {
        switch relation {
        case .agrees: ExpectedDigest(algorithm: .sha256, bytes: good, source: source(rank))
        case .differs: ExpectedDigest(algorithm: .sha256, bytes: bad, source: source(rank))
        case .otherAlgorithm: ExpectedDigest(algorithm: .md5, bytes: otherAlgorithm, source: source(rank))
        }
    }

    /// Every ordered pair of ranks under each relation: 4 × 4 × 3 rows.
    static let table: [Case] = [
        // Recorded from the server: a later server digest is its word now (of the same algorithm but other
        // bytes, the file changed); any given digest outranks it.
        Case(recorded: .server, offered: .server, relation: .agrees, expected: .offered),
        Case(recorded: .server, offered: .server, relation: .differs, expected: .remoteChanged),
        Case(recorded: .server, offered: .server, relation: .otherAlgorithm, expected: .offered),
        Case(recorded: .server, offered: .metalink, relation: .agrees, expected: .offered),
        Case(recorded: .server, offered: .metalink, relation: .differs, expected: .offered),
        Case(recorded: .server, offered: .metalink, relation: .otherAlgorithm, expected: .offered),
        Case(recorded: .server, offered: .checksumFile, relation: .agrees, expected: .offered),
        Case(recorded: .server, offered: .checksumFile, relation: .differs, expected: .offered),
        Case(recorded: .server, offered: .checksumFile, relation: .otherAlgorithm, expected: .offered),
        Case(recorded: .server, offered: .user, relation: .agrees, expected: .offered),
        Case(recorded: .server, offered: .user, relation: .differs, expected: .offered),
        Case(recorded: .server, offered: .user, relation: .otherAlgorithm, expected: .offered),
        // Recorded from a Metalink: the server never replaces it; a Metalink, a checksum file or the user must
        // give the same digest or be refused.
        Case(recorded: .metalink, offered: .server, relation: .agrees, expected: .recorded),
        Case(recorded: .metalink, offered: .server, relation: .differs, expected: .recordedOverruling),
        Case(recorded: .metalink, offered: .server, relation: .otherAlgorithm, expected: .recorded),
        Case(recorded: .metalink, offered: .metalink, relation: .agrees, expected: .offered),
        Case(recorded: .metalink, offered: .metalink, relation: .differs, expected: .refused),
        Case(recorded: .metalink, offered: .metalink, relation: .otherAlgorithm, expected: .refused),
        Case(recorded: .metalink, offered: .checksumFile, relation: .agrees, expected: .offered),
        Case(recorded: .metalink, offered: .checksumFile, relation: .differs, expected: .refused),
        Case(recorded: .metalink, offered: .checksumFile, relation: .otherAlgorithm, expected: .refused),
        Case(recorded: .metalink, offered: .user, relation: .agrees, expected: .offered),
        Case(recorded: .metalink, offered: .user, relation: .differs, expected: .refused),
        Case(recorded: .metalink, offered: .user, relation: .otherAlgorithm, expected: .refused),
        // Recorded from a checksum file.
        Case(recorded: .checksumFile, offered: .server, relation: .agrees, expected: .recorded),
        Case(recorded: .checksumFile, offered: .server, relation: .differs, expected: .recordedOverruling),
        Case(recorded: .checksumFile, offered: .server, relation: .otherAlgorithm, expected: .recorded),
        Case(recorded: .checksumFile, offered: .metalink, relation: .agrees, expected: .recorded),
        Case(recorded: .checksumFile, offered: .metalink, relation: .differs, expected: .recordedOverruling),
        Case(recorded: .checksumFile, offered: .metalink, relation: .otherAlgorithm, expected: .recorded),
        Case(recorded: .checksumFile, offered: .checksumFile, relation: .agrees, expected: .offered),
        Case(recorded: .checksumFile, offered: .checksumFile, relation: .differs, expected: .refused),
        Case(recorded: .checksumFile, offered: .checksumFile, relation: .otherAlgorithm, expected: .refused),
        Case(recorded: .checksumFile, offered: .user, relation: .agrees, expected: .offered),
        Case(recorded: .checksumFile, offered: .user, relation: .differs, expected: .refused),
        Case(recorded: .checksumFile, offered: .user, relation: .otherAlgorithm, expected: .refused),
        // Recorded from the user: only the same digest from the user again is accepted; every weaker one that
        // disagrees is overruled (the rerun: a server's Content-MD5 of bad bytes never wins).
        Case(recorded: .user, offered: .server, relation: .agrees, expected: .recorded),
        Case(recorded: .user, offered: .server, relation: .differs, expected: .recordedOverruling),
        Case(recorded: .user, offered: .server, relation: .otherAlgorithm, expected: .recorded),
        Case(recorded: .user, offered: .metalink, relation: .agrees, expected: .recorded),
        Case(recorded: .user, offered: .metalink, relation: .differs, expected: .recordedOverruling),
        Case(recorded: .user, offered: .metalink, relation: .otherAlgorithm, expected: .recorded),
        Case(recorded: .user, offered: .checksumFile, relation: .agrees, expected: .recorded),
        Case(recorded: .user, offered: .checksumFile, relation: .differs, expected: .recordedOverruling),
        Case(recorded: .user, offered: .checksumFile, relation: .otherAlgorithm, expected: .recorded),
        Case(recorded: .user, offered: .user, relation: .agrees, expected: .offered),
        Case(recorded: .user, offered: .user, relation: .differs, expected: .refused),
        Case(recorded: .user, offered: .user, relation: .otherAlgorithm, expected: .refused),
    ]

    @Test("The table covers every ordered pair of ranks under every relation, once")
    func tableIsComplete() {
        let pairs = Set(Self.table.map { "\($0.recorded)/\($0.offered)/\($0.relation)" })
        #expect(pairs.count == Self.table.count)
        #expect(Self.table.count == Rank.allCases.count * Rank.allCases.count * Relation.allCases.count)
    }

    @Test("Recorded × offered: which digest holds, or a change of the remote file, or a refusal", arguments: table)
    func pair(_ row: Case) {
        let recorded = Self.recorded(row.recorded)
        let offered = Self.offered(row.offered, row.relation)
        let decision = DigestAuthority(recorded: recorded, offered: [offered]).decision
        let expected: DigestAuthority.Decision =
            switch row.expected {
            case .recorded: .holdTo(recorded, overruled: nil)
            case .recordedOverruling: .holdTo(recorded, overruled: offered)
            case .offered: .holdTo(offered, overruled: nil)
            case .remoteChanged: .remoteChanged(holdTo: offered)
            case .refused: .contradiction(recorded: recorded, given: offered)
            }
        #expect(decision == expected)
    }

    @Test("Nothing recorded: the offered digest holds, whatever its source", arguments: Rank.allCases)
    func nothingRecorded(_ rank: Rank) {
        let offered = Self.offered(rank, .agrees)
        #expect(DigestAuthority(recorded: nil, offered: [offered]).decision == .holdTo(offered, overruled: nil))
    }

    @Test("Nothing offered: the recorded digest holds, whatever its source", arguments: Rank.allCases)
    func nothingOffered(_ rank: Rank) {
        let recorded = Self.recorded(rank)
        #expect(DigestAuthority(recorded: recorded, offered: []).decision == .holdTo(recorded, overruled: nil))
    }

    @Test("Nothing recorded or offered: only the length is checked")
    func nothing() {
        #expect(DigestAuthority(recorded: nil, offered: []).decision == .holdTo(nil, overruled: nil))
    }

    @Test("Within one run the strongest source wins, and a weaker one of its algorithm that disagrees is overruled")
    func withinOneRun() {
        let user = Self.recorded(.user)
        let checksumFile = Self.offered(.checksumFile, .differs)
        let metalink = Self.offered(.metalink, .otherAlgorithm)
        let server = Self.offered(.server, .differs)
        let decision = DigestAuthority(recorded: nil, offered: [server, metalink, checksumFile, user]).decision
        #expect(decision == .holdTo(user, overruled: checksumFile))
    }

    @Test("Among the server's headers the strongest algorithm wins, as before")
    func serverPreference() {
        let md5 = ExpectedDigest(algorithm: .md5, bytes: Self.otherAlgorithm, source: .contentMD5)
        let sha256 = ExpectedDigest(algorithm: .sha256, bytes: Self.good, source: .reprDigestHeader)
        #expect(DigestAuthority(recorded: nil, offered: [md5, sha256]).decision == .holdTo(sha256, overruled: nil))
    }

    @Test("The issue's rerun: a recorded --checksum holds against the server's Content-MD5 of the bad bytes")
    func rerunAfterMismatch() {
        let user = Self.recorded(.user)
        let contentMD5 = ExpectedDigest(algorithm: .md5, bytes: Self.otherAlgorithm, source: .contentMD5)
        #expect(DigestAuthority(recorded: user, offered: [contentMD5]).decision == .holdTo(user, overruled: nil))
    }

    @Test("A contradiction is found whatever else agrees: the same user digest and another checksum file line")
    func contradictionAmongAgreement() {
        let recorded = Self.recorded(.checksumFile)
        let user = Self.offered(.user, .agrees)
        let checksumFile = Self.offered(.checksumFile, .differs)
        let decision = DigestAuthority(recorded: recorded, offered: [user, checksumFile]).decision
        #expect(decision == .contradiction(recorded: recorded, given: checksumFile))
    }

    @Test("Once the partial data is gone, a given digest still holds and the server's recorded one does not")
    func withoutData() {
        let server = Self.offered(.server, .otherAlgorithm)
        for rank in Rank.allCases {
            let recorded = Self.recorded(rank)
            let decision = DigestAuthority(recorded: recorded, offered: [server]).withoutData.decision
            #expect(decision.digest == (rank == .server ? server : recorded), "\(rank)")
        }
    }

    @Test(
        "Every source has its rank: the user, a checksum file, a Metalink, and every server header below them",
        arguments: [
            (ExpectedDigest.Source.user, Rank.user), (.checksumFile, .checksumFile), (.metalink, .metalink),
            (.contentMD5, .server), (.digestHeader, .server), (.reprDigestHeader, .server),
            (.contentDigestHeader, .server), (.googHash, .server), (.amzChecksumSHA256, .server),
            (.amzChecksumSHA1, .server), (.entityTag, .server),
        ])
    func ranks(_ source: ExpectedDigest.Source, _ rank: Rank) {
        #expect(Rank(source) == rank)
        #expect(
            DigestAuthority.outlivesData(ExpectedDigest(algorithm: .md5, bytes: [], source: source)) == (rank > .server)
        )
    }
}
