import Foundation
import Testing

@testable import Braid

/// The digests a server offers in `Content-MD5`, `Digest` (RFC 3230) and `Repr-Digest` (RFC 9530). Malformed
/// values are ignored, never trusted and never fatal.
@Suite("DigestHeaders")
struct DigestHeadersTests {
    /// The digests of "abc", the FIPS test vector.
    static let md5 = ExpectedDigest.decodeHex("900150983cd24fb0d6963f7d28e17f72")!
    static let sha256 = ExpectedDigest.decodeHex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")!
    static let sha512 = ExpectedDigest.decodeHex(
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
            + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")!
    static let md5Base64 = Data(md5).base64EncodedString()
    static let sha256Base64 = Data(sha256).base64EncodedString()
    static let sha512Base64 = Data(sha512).base64EncodedString()

    func headers(_ lines: [String]) -> ResponseHeaders {
        var headers = ResponseHeaders()
        headers.consume(line: "HTTP/1.1 200 OK")
        for line in lines { headers.consume(line: line) }
        return headers
    }

    // MARK: - Content-MD5

    @Test("Content-MD5 describes the whole body of a 200")
    func contentMD5() {
        let found = DigestHeaders.digests(in: headers(["Content-MD5: \(Self.md5Base64)"]), isPartialResponse: false)
        #expect(found == [ExpectedDigest(algorithm: .md5, bytes: Self.md5, source: .contentMD5)])
    }

    @Test("Content-MD5 on a 206 describes only the part sent, so it is ignored")
    func contentMD5OnPartialResponse() {
        let found = DigestHeaders.digests(in: headers(["Content-MD5: \(Self.md5Base64)"]), isPartialResponse: true)
        #expect(found.isEmpty)
    }

    @Test(
        "A Content-MD5 that is not 16 bytes of base64 is ignored",
        arguments: ["", "not base64!", "AAAA", "\(md5Base64)AA=="])
    func malformedContentMD5(value: String) {
        #expect(DigestHeaders.digests(in: headers(["Content-MD5: \(value)"]), isPartialResponse: false).isEmpty)
    }

    // MARK: - Digest (RFC 3230)

    @Test("Digest: names are case-insensitive and every well-formed member is kept")
    func digestMembers() {
        let found = DigestHeaders.parseDigest(
            "MD5=\(Self.md5Base64), SHA-256=\(Self.sha256Base64),sha-512=\(Self.sha512Base64)")
        #expect(found.map(\.algorithm) == [.md5, .sha256, .sha512])
        #expect(found.map(\.bytes) == [Self.md5, Self.sha256, Self.sha512])
        #expect(found.allSatisfy { $0.source == .digestHeader })
    }

    @Test(
        "Digest: unknown algorithms, bad base64 and wrong lengths are skipped, the rest kept",
        arguments: [
            "SHA=qZk+NkcGgWq6PiVxeFDCbJzQ2J0=, sha-256=\(sha256Base64)",
            "UNIXsum=30637, sha-256=\(sha256Base64)",
            "md5=%%%%, sha-256=\(sha256Base64)",
            "md5=\(sha256Base64), sha-256=\(sha256Base64)",
            "sha-512=\(sha256Base64), sha-256=\(sha256Base64)",
            "garbage, sha-256=\(sha256Base64), =",
            "sha-256 = \(sha256Base64)",
        ]
    )
    func digestSkipsBadMembers(value: String) {
        #expect(
            DigestHeaders.parseDigest(value) == [
                ExpectedDigest(algorithm: .sha256, bytes: Self.sha256, source: .digestHeader)
            ])
    }

    @Test("Digest values read through the headers, repeated fields included")
    func digestThroughHeaders() {
        let found = DigestHeaders.digests(
            in: headers(["digest: md5=\(Self.md5Base64)", "Digest: sha-256=\(Self.sha256Base64)"]),
            isPartialResponse: true
        )
        #expect(found.map(\.algorithm) == [.md5, .sha256])
    }

    // MARK: - Repr-Digest (RFC 9530)

    @Test("Repr-Digest: byte sequences between colons, parameters after ';' ignored")
    func reprDigest() {
        let found = DigestHeaders.parseReprDigest("sha-256=:\(Self.sha256Base64):;x=1, sha-512=:\(Self.sha512Base64):")
        #expect(
            found == [
                ExpectedDigest(algorithm: .sha256, bytes: Self.sha256, source: .reprDigestHeader),
                ExpectedDigest(algorithm: .sha512, bytes: Self.sha512, source: .reprDigestHeader),
            ]
        )
    }

    @Test(
        "Repr-Digest: a member that is not a byte sequence of the right length is skipped",
        arguments: [
            "sha-256=\(sha256Base64)",
            "sha-256=:\(sha256Base64)",
            "sha-256=\(sha256Base64):",
            "sha-256=:",
            "sha-256=::",
            "sha-256=:\(md5Base64):",
            "sha-256=:!!!!:",
            "md4=:\(md5Base64):",
        ]
    )
    func reprDigestSkipsBadMembers(value: String) {
        #expect(DigestHeaders.parseReprDigest(value).isEmpty)
    }

    @Test("All three headers together yield every digest, in a stable order")
    func allHeaders() {
        let found = DigestHeaders.digests(
            in: headers([
                "Content-MD5: \(Self.md5Base64)",
                "Digest: sha-512=\(Self.sha512Base64)",
                "Repr-Digest: sha-256=:\(Self.sha256Base64):",
            ]),
            isPartialResponse: false
        )
        #expect(found.map(\.source) == [.contentMD5, .digestHeader, .reprDigestHeader])
    }

    @Test("Oversized headers are ignored")
    func oversized() {
        let value = String(repeating: "md5=\(Self.md5Base64), ", count: 400)
        #expect(DigestHeaders.parseDigest(value).isEmpty)
        #expect(DigestHeaders.parseReprDigest(value).isEmpty)
    }

    // MARK: - preferred

    @Test(
        "The preferred digest is SHA-256 over SHA-512 over MD5, whatever the order offered",
        arguments: [
            ([DigestAlgorithm.md5, .sha512, .sha256], DigestAlgorithm.sha256),
            ([.sha256, .sha512, .md5], .sha256),
            ([.sha512, .md5], .sha512),
            ([.md5, .sha512], .sha512),
            ([.md5], .md5),
        ]
    )
    func preferred(offered: [DigestAlgorithm], winner: DigestAlgorithm) {
        let digests = offered.map { ExpectedDigest(algorithm: $0, bytes: [], source: .digestHeader) }
        #expect(DigestHeaders.preferred(digests)?.algorithm == winner)
    }

    @Test("Nothing offered, nothing preferred")
    func preferredOfNothing() {
        #expect(DigestHeaders.preferred([]) == nil)
    }
}

/// The user's `--checksum ALG=HEX`.
@Suite("ExpectedDigest")
struct ExpectedDigestTests {
    @Test(
        "Accepts the usual spellings of each algorithm and either case of hex",
        arguments: [
            ("md5=900150983cd24fb0d6963f7d28e17f72", DigestAlgorithm.md5),
            ("MD5=900150983CD24FB0D6963F7D28E17F72", .md5),
            ("sha1=a9993e364706816aba3e25717850c26c9cd0d89d", .sha1),
            ("sha256=ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", .sha256),
            ("sha-256=ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", .sha256),
            ("SHA-256=BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", .sha256),
            ("sha512=" + String(repeating: "ab", count: 64), .sha512),
            ("SHA-512=" + String(repeating: "AB", count: 64), .sha512),
        ]
    )
    func accepts(argument: String, algorithm: DigestAlgorithm) throws {
        let digest = try ExpectedDigest(checksumArgument: argument)
        #expect(digest.algorithm == algorithm)
        #expect(digest.source == .user)
        #expect(digest.bytes.count == algorithm.byteCount)
        #expect(digest.hex == String(argument.split(separator: "=")[1]).lowercased())
    }

    @Test(
        "Rejects what cannot be a digest, as a usage error",
        arguments: [
            "",
            "900150983cd24fb0d6963f7d28e17f72",
            "md4=900150983cd24fb0d6963f7d28e17f72",
            "sha-384=a9993e364706816aba3e25717850c26c9cd0d89d",
            "=900150983cd24fb0d6963f7d28e17f72",
            "md5=",
            "md5=900150983cd24fb0d6963f7d28e17f7",
            "md5=900150983cd24fb0d6963f7d28e17f7200",
            "md5=900150983cd24fb0d6963f7d28e17fzz",
            "md5= 900150983cd24fb0d6963f7d28e17f72",
            "md5=0x900150983cd24fb0d6963f7d28e17f",
            "sha-256=900150983cd24fb0d6963f7d28e17f72",
            "md5==900150983cd24fb0d6963f7d28e17f72",
        ]
    )
    func rejects(argument: String) {
        let error = #expect(throws: BraidError.self) { try ExpectedDigest(checksumArgument: argument) }
        #expect(error?.code == .usage)
        #expect(error?.message.isEmpty == false)
    }

    @Test("Hex round-trips through decodeHex and hex")
    func hexRoundTrip() {
        var generator = SeededGenerator(seed: 7)
        for count in [0, 1, 16, 32, 64] {
            let bytes = generator.bytes(count)
            let digest = ExpectedDigest(algorithm: .md5, bytes: bytes, source: .user)
            #expect(ExpectedDigest.decodeHex(digest.hex) == bytes)
            #expect(digest.hex == digest.hex.lowercased())
        }
    }

    @Test(
        "Algorithm names: the spellings users and servers use",
        arguments: [
            ("md5", DigestAlgorithm.md5), ("MD5", .md5), ("sha1", .sha1), ("SHA-1", .sha1), ("sha256", .sha256),
            ("Sha-256", .sha256),
            ("sha512", .sha512), ("SHA-512", .sha512),
        ])
    func algorithmNames(name: String, algorithm: DigestAlgorithm) {
        #expect(DigestAlgorithm(name: name) == algorithm)
    }

    @Test("Unknown algorithm names", arguments: ["", "sha", "sha-384", "md5 ", "sha_256"])
    func unknownAlgorithmNames(name: String) {
        #expect(DigestAlgorithm(name: name) == nil)
    }
}
