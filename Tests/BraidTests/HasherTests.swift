import BraidTestSupport
import Foundation
import SystemPackage
import Testing

@testable import Braid

/// OpenSSL's digests through `Hasher`, and `PrefixHasher` following a file as it is completed in order.
@Suite("Hasher")
struct HasherTests {
    static func digest(_ algorithm: DigestAlgorithm, of bytes: [UInt8]) -> String {
        let hasher = Braid.Hasher(algorithm)
        bytes.withUnsafeBytes { hasher.update($0) }
        return ExpectedDigest.encodeHex(hasher.finalize())
    }

    @Test(
        "Known test vectors",
        arguments: [
            (DigestAlgorithm.md5, "", "d41d8cd98f00b204e9800998ecf8427e"),
            (.md5, "abc", "900150983cd24fb0d6963f7d28e17f72"),
            (.md5, "The quick brown fox jumps over the lazy dog", "9e107d9d372bb6826bd81d3542a419d6"),
            (.sha1, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
            (.sha256, "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (.sha256, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                .sha512, "abc",
                "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                    + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
            ),
        ]
    )
    func vectors(algorithm: DigestAlgorithm, input: String, hex: String) {
        #expect(Self.digest(algorithm, of: Array(input.utf8)) == hex)
    }

    @Test("A digest has the algorithm's length", arguments: DigestAlgorithm.allCases)
    func length(algorithm: DigestAlgorithm) {
        let hasher = Braid.Hasher(algorithm)
        #expect(hasher.finalize().count == algorithm.byteCount)
    }

    @Test("Feeding bytes in pieces gives the digest of the whole", arguments: DigestAlgorithm.allCases)
    func incremental(algorithm: DigestAlgorithm) {
        var generator = SeededGenerator(seed: 11)
        let bytes = generator.bytes(100_003)
        let hasher = Braid.Hasher(algorithm)
        var offset = 0
        for step in [0, 1, 63, 64, 65, 4096, 12_345] + Array(repeating: 20_000, count: 5) {
            let end = min(bytes.count, offset + step)
            bytes[offset..<end].withUnsafeBytes { hasher.update($0) }
            offset = end
        }
        bytes[offset...].withUnsafeBytes { hasher.update($0) }
        #expect(ExpectedDigest.encodeHex(hasher.finalize()) == Self.digest(algorithm, of: bytes))
    }
}

@Suite("PrefixHasher")
final class PrefixHasherTests {
    let directory: ScratchDirectory
    let bytes: [UInt8]
    let path: FilePath

    init() throws {
        directory = try ScratchDirectory()
        var generator = SeededGenerator(seed: 99)
        bytes = generator.bytes(300_007)
        path = FilePath(directory.file("data.part"))
        try Data(bytes).write(to: URL(fileURLWithPath: path.string))
    }

    func hasher(_ algorithm: DigestAlgorithm, blockSize: Int = 4096) throws -> PrefixHasher {
        let hasher = PrefixHasher(
            algorithm: algorithm, reading: try FileDescriptor.open(path, .readOnly), blockSize: blockSize)
        hasher.start()
        return hasher
    }

    @Test(
        "Advancing in uneven steps, then finishing, gives the digest of the whole file",
        arguments: DigestAlgorithm.allCases
    )
    func unevenSteps(algorithm: DigestAlgorithm) throws {
        let hasher = try hasher(algorithm)
        defer { hasher.stop() }
        for watermark in [1, 2, 4095, 4096, 4097, 70_000, 69_999, 150_000, 299_999, 300_007] as [Int64] {
            hasher.advance(to: watermark)
        }
        hasher.finish(totalLength: 300_007)
        let digest = try hasher.waitForDigest()
        #expect(ExpectedDigest.encodeHex(digest) == HasherTests.digest(algorithm, of: bytes))
        #expect(hasher.hashedBytes == 300_007)
    }

    @Test("Finishing before the prefix is complete waits for the rest of the file")
    func finishBeforeComplete() throws {
        let hasher = try hasher(.sha256, blockSize: 1000)
        defer { hasher.stop() }
        hasher.finish(totalLength: 300_007)
        hasher.advance(to: 100_000)
        hasher.advance(to: 300_007)
        #expect(ExpectedDigest.encodeHex(try hasher.waitForDigest()) == HasherTests.digest(.sha256, of: bytes))
    }

    @Test("An empty file has the empty digest")
    func emptyFile() throws {
        try Data().write(to: URL(fileURLWithPath: path.string))
        let hasher = try hasher(.md5)
        defer { hasher.stop() }
        hasher.finish(totalLength: 0)
        #expect(ExpectedDigest.encodeHex(try hasher.waitForDigest()) == "d41d8cd98f00b204e9800998ecf8427e")
    }

    @Test("A file shorter than its promised prefix fails with a local I/O error")
    func shortFile() throws {
        let hasher = try hasher(.md5)
        defer { hasher.stop() }
        hasher.advance(to: 400_000)
        hasher.finish(totalLength: 400_000)
        let error = #expect(throws: BraidError.self) { try hasher.waitForDigest() }
        #expect(error?.code == .localIO)
        #expect(error?.message.contains("300007") == true)
    }

    @Test("Reading ahead of confirmation, it digests the file as it is written; the digest waits for confirmation")
    func readsAhead() async throws {
        let hasher = try hasher(.md5, blockSize: 1000)
        defer { hasher.stop() }
        hasher.finish(totalLength: 300_007)
        hasher.hashAhead(to: 300_007)
        try await Polling.until("the hasher to read ahead", timeout: .seconds(60)) { hasher.hashedBytes == 300_007 }
        hasher.advance(to: 300_007)
        #expect(ExpectedDigest.encodeHex(try hasher.waitForDigest()) == HasherTests.digest(.md5, of: bytes))
    }

    @Test("Bytes read ahead, thrown away and written again, are digested as they end up: it starts over")
    func rewindStartsOver() async throws {
        let hasher = try hasher(.sha256, blockSize: 1000)
        defer { hasher.stop() }
        hasher.advance(to: 50_000)
        hasher.hashAhead(to: 200_000)
        try await Polling.until("the hasher to read ahead", timeout: .seconds(60)) { hasher.hashedBytes == 200_000 }
        // A response that broke its word: what it wrote from 100,000 on is written again, differently.
        var rewritten = bytes
        for index in 100_000..<200_000 { rewritten[index] ^= 0x5A }
        hasher.rewind(to: 100_000)
        let writer = try FileDescriptor.open(path, .writeOnly)
        defer { try? writer.close() }
        _ = try rewritten[100_000..<200_000].withUnsafeBytes { try writer.write(toAbsoluteOffset: 100_000, $0) }
        hasher.hashAhead(to: 300_007)
        hasher.advance(to: 300_007)
        hasher.finish(totalLength: 300_007)
        let digest = ExpectedDigest.encodeHex(try hasher.waitForDigest())
        #expect(digest == HasherTests.digest(.sha256, of: rewritten))
        #expect(digest != HasherTests.digest(.sha256, of: bytes))
    }

    @Test("Cancelling stops the hasher and fails the wait")
    func cancel() throws {
        let hasher = try hasher(.sha512)
        defer { hasher.stop() }
        hasher.advance(to: 1000)
        hasher.cancel()
        let error = #expect(throws: BraidError.self) { try hasher.waitForDigest() }
        #expect(error?.code == .localIO)
    }
}
