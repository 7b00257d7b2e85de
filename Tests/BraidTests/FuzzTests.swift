import Foundation
import Testing

@testable import Braid

/// Every parser of server-controlled text, fed thousands of random and mutated inputs from a seeded generator:
/// none may crash, and whatever they accept must satisfy the invariants the rest of Braid relies on.
@Suite("Fuzz")
struct FuzzTests {
    static let iterations = 3000

    /// Bytes that the grammars care about, so that mutations often land near something meaningful.
    static let alphabet = Array("bytes */-0123456789 ;=\"'\\%:,.abcdefABCDEF+/\r\n\t\u{0}".utf8)

    /// A random string: mostly grammar bytes, sometimes any byte (decoded as UTF-8, with repairs).
    static func randomText(_ generator: inout SeededGenerator, maximumLength: Int = 64) -> String {
        let count = Int.random(in: 0...maximumLength, using: &generator)
        let bytes = (0..<count).map { _ in
            Int.random(in: 0..<8, using: &generator) == 0
                ? UInt8.random(in: 0...255, using: &generator) : alphabet.randomElement(using: &generator)!
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Either fresh noise or a mutation of one of `seeds`.
    static func input(_ generator: inout SeededGenerator, seeds: [String]) -> String {
        if Bool.random(using: &generator) {
            return randomText(&generator)
        }
        return generator.mutate(seeds.randomElement(using: &generator)!, alphabet: alphabet)
    }

    @Test("ContentRange: whatever parses is a consistent range")
    func contentRange() {
        var generator = SeededGenerator(seed: 1)
        let seeds = [
            "bytes 0-0/1", "bytes 100-199/1000", "bytes */1000", "bytes 5-9/*", "bytes 0-99999999999/100000000000",
        ]
        var accepted = 0
        for _ in 0..<Self.iterations {
            let header = Self.input(&generator, seeds: seeds)
            guard let parsed = ContentRange(header) else { continue }
            accepted += 1
            #expect(parsed.range != nil || parsed.completeLength != nil, "'\(header)'")
            if let range = parsed.range {
                #expect(range.lowerBound >= 0 && range.lowerBound <= range.upperBound, "'\(header)'")
                if let complete = parsed.completeLength { #expect(range.upperBound < complete, "'\(header)'") }
            }
            if let complete = parsed.completeLength { #expect(complete >= 0, "'\(header)'") }
        }
        #expect(accepted > 0, "the mutations should keep some inputs valid")
    }

    @Test("Digest and Repr-Digest: whatever parses has the algorithm's exact length")
    func digestHeaders() {
        var generator = SeededGenerator(seed: 2)
        let md5 = Data(repeating: 7, count: 16).base64EncodedString()
        let sha256 = Data(repeating: 9, count: 32).base64EncodedString()
        let seeds = [
            "md5=\(md5)", "SHA-256=\(sha256), md5=\(md5)", "sha-256=:\(sha256):",
            "sha-256=:\(sha256):;a=1, md5=:\(md5):",
        ]
        var accepted = 0
        for _ in 0..<Self.iterations {
            let header = Self.input(&generator, seeds: seeds)
            let found = DigestHeaders.parseDigest(header) + DigestHeaders.parseReprDigest(header)
            accepted += found.count
            for digest in found {
                #expect(digest.bytes.count == digest.algorithm.byteCount, "'\(header)'")
            }
        }
        #expect(accepted > 0)
    }

    @Test("Content-Disposition: a name that comes out is one component, never hidden, never a separator")
    func contentDisposition() {
        var generator = SeededGenerator(seed: 3)
        let seeds = [
            "attachment; filename=\"a.txt\"", "attachment; filename*=UTF-8''%2E%2E%2Fx",
            "inline; filename=../../etc/passwd",
            "attachment; filename=\"\\\\..\\\\x\"; filename*=utf-8'en'%C3%A9",
        ]
        var named = 0
        for _ in 0..<Self.iterations {
            let header = Self.input(&generator, seeds: seeds)
            for name in [ContentDisposition.filename(from: header), ContentDisposition.sanitise(header)] {
                guard let name else { continue }
                named += 1
                #expect(!name.isEmpty)
                #expect(!name.utf8.contains(UInt8(ascii: "/")), "'\(header)' gave '\(name)'")
                #expect(!name.utf8.contains(UInt8(ascii: "\\")), "'\(header)' gave '\(name)'")
                #expect(name.utf8.first != UInt8(ascii: "."), "'\(header)' gave '\(name)'")
                #expect(name.utf8.count <= 200)
                #expect(!name.unicodeScalars.contains { $0.properties.generalCategory == .control })
            }
        }
        #expect(named > 0)
    }

    @Test("Manifest: whatever decodes and validates has contiguous, in-bounds segments")
    func manifest() throws {
        var generator = SeededGenerator(seed: 4)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let seed = String(decoding: try encoder.encode(ManifestTests.valid), as: UTF8.self)
        var empty = ManifestTests.valid
        empty.length = 0
        empty.segments = []
        let seeds = [seed, String(decoding: try encoder.encode(empty), as: UTF8.self)]
        var decoded = 0
        var valid = 0
        for _ in 0..<Self.iterations {
            let text = generator.mutate(seeds.randomElement(using: &generator)!, alphabet: Self.alphabet)
            guard let manifest = try? JSONDecoder().decode(Manifest.self, from: Data(text.utf8)) else { continue }
            decoded += 1
            guard (try? manifest.validate()) != nil else { continue }
            valid += 1
            #expect(manifest.length >= 0)
            var expectedStart: Int64 = 0
            for segment in manifest.segments {
                #expect(segment.start == expectedStart, "\(text)")
                #expect(segment.start < segment.end && segment.end <= manifest.length, "\(text)")
                #expect(segment.done >= 0 && segment.done <= segment.end - segment.start, "\(text)")
                #expect(segment.durable >= 0 && segment.durable <= segment.done, "\(text)")
                expectedStart = segment.end
            }
            #expect(expectedStart == manifest.length, "\(text)")
            for progress in [manifest.trustedProgress(onBoot: manifest.bootID), manifest.trustedProgress(onBoot: "?")] {
                _ = SegmentScheduler(
                    ranges: manifest.segments.map { $0.start..<$0.end }, progress: progress, connectionLimit: 4)
            }
        }
        #expect(decoded > 0)
        #expect(valid > 0)
    }
}
