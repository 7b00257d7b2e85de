import BraidTestSupport
import Foundation
import SystemPackage
import Testing

@testable import Braid

/// The piece verifier's threads against a real file: matching pieces, a bad one, one past the end of the file,
/// and piece hashes' arithmetic.
@Suite("PieceVerifier")
struct PieceVerifierTests {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        let hasher = Hasher(.sha256)
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }

    @Test("checks each piece of a segment on its threads and reports the ones that do not match")
    func checksPieces() throws {
        let directory = try TemporaryDirectory(prefix: "braid-verifier")
        defer { directory.remove() }
        let bytes = (0..<(3 << 16)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let path = directory.appending("f").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let pieces = PieceHashes(
            algorithm: .sha256, pieceLength: 1 << 16,
            digests: (0..<3).map { Self.sha256(Array(bytes[($0 << 16)..<(($0 + 1) << 16)])) })
        var wrong = pieces
        wrong.digests[1][0] ^= 1
        let verifier = PieceVerifier(reading: try FileDescriptor.open(FilePath(path), .readOnly), threads: 2)
        defer { verifier.stop() }

        verifier.submit(segment: 0, checks: pieces.checks(within: 0..<(3 << 16), totalLength: 3 << 16))
        verifier.submit(segment: 1, checks: wrong.checks(within: 0..<(3 << 16), totalLength: 3 << 16))
        verifier.submit(segment: 2, checks: [PieceCheck(range: (3 << 16)..<(4 << 16), algorithm: .sha256, digest: [])])
        verifier.submit(segment: 3, checks: [])
        let results = verifier.waitForResults(count: 4).sorted { $0.segment < $1.segment }

        #expect(results.map(\.segment) == [0, 1, 2, 3])
        #expect(results.map(\.bad) == [[], [(1 << 16)..<(2 << 16)], [(3 << 16)..<(4 << 16)], []])
    }

    @Test("piece hashes: ranges, the pieces inside a range, the last shorter piece, and validation")
    func pieceArithmetic() throws {
        let pieces = PieceHashes(
            algorithm: .sha256, pieceLength: 100, digests: Array(repeating: [UInt8](repeating: 0, count: 32), count: 3))
        #expect(pieces.range(ofPiece: 2, totalLength: 250) == 200..<250)
        #expect(pieces.pieces(within: 0..<250, totalLength: 250) == 0..<3)
        #expect(pieces.pieces(within: 50..<200, totalLength: 250) == 1..<2)
        #expect(pieces.pieces(within: 150..<180, totalLength: 250).isEmpty)
        #expect(throws: BraidError.self) { try pieces.validate(totalLength: 301) }
        #expect(throws: BraidError.self) { try pieces.validate(totalLength: 200) }
        try pieces.validate(totalLength: 201)
        let zero = PieceHashes(algorithm: .sha256, pieceLength: 0, digests: [])
        #expect(throws: BraidError.self) { try zero.validate(totalLength: 0) }
    }
}
