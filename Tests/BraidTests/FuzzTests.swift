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
            for name in [ContentDisposition.filename(from: header), SafeName.lastComponent(of: header)?.string] {
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

    @Test("HTTP dates: whatever parses is a time from 1970 to 9999 that formats and reads back the same")
    func httpDate() {
        var generator = SeededGenerator(seed: 5)
        let seeds = [
            "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "Tue, 29 Feb 2000 23:59:60 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
        ]
        var accepted = 0
        for _ in 0..<Self.iterations {
            let text = Self.input(&generator, seeds: seeds)
            let wallClock = Double(Int64.random(in: -1_000_000_000...300_000_000_000, using: &generator))
            guard let seconds = HTTPDate.parse(text, wallClock: wallClock) else { continue }
            accepted += 1
            #expect(seconds >= 0 && seconds <= 253_402_300_799 && seconds == seconds.rounded(), "'\(text)'")
            let formatted = HTTPDate.format(secondsSince1970: Int64(seconds))
            #expect(HTTPDate.parse(formatted, wallClock: wallClock) == seconds, "'\(text)' → '\(formatted)'")
        }
        #expect(accepted > 0, "the mutations should keep some inputs valid")
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

/// Numbers at every edge an integer type has, in every header Braid reads and every option a caller sets: each
/// gives a clear error or a sane value, never a trap (an app embedding Braid would die with it).
extension FuzzTests {
    static let edgeNumbers = [
        "0", "1", "2147483648", "9007199254740992", "9007199254740993", "4611686018427387904", "9223372036854775807",
        "9223372036854775808", "-1", "-9223372036854775808", "99999999999999999999999", "+5", "1e3", "",
    ]
    static let edgeIntegers: [Int64] = [
        0, 1, -1, 1 << 31, 1 << 53, (1 << 53) + 1, 1 << 62, Int64.max, Int64.min,
    ]

    /// Plans `length` as a download would and checks the plan tiles the file within the manifest's bounds.
    static func expectSanePlan(length: Int64, connections: Int = 8, pieces: Int = 4) {
        let plan = SegmentPlanner.plan(length: length, connections: connections, piecesPerConnection: pieces)
        guard length > 0 else {
            #expect(plan.isEmpty)
            return
        }
        #expect(plan.first?.lowerBound == 0 && plan.last?.upperBound == length, "length \(length)")
        #expect(zip(plan, plan.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, "length \(length)")
        #expect(plan.count <= Manifest.maximumSegments / 10, "length \(length): \(plan.count) segments")
    }

    @Test("Content-Length at the edges: refused as a protocol error, or planned within bounds", arguments: edgeNumbers)
    func edgeContentLength(value: String) {
        var headers = ResponseHeaders()
        headers.consume(line: "HTTP/1.1 200 OK\r\n")
        headers.consume(line: "Content-Length: \(value)\r\n")
        guard let length = headers.contentLength else { return }
        #expect(length >= 0)
        do throws(BraidError) {
            try RemoteResource.checkLength(length)
            #expect(length <= RemoteResource.maximumLength)
            Self.expectSanePlan(length: length)
        } catch {
            #expect(error.code == .protocolViolation)
            #expect(length > RemoteResource.maximumLength, "\(error.message)")
        }
    }

    @Test(
        "Content-Range totals at the edges: refused as a protocol error, or planned within bounds",
        arguments: edgeNumbers)
    func edgeContentRange(value: String) {
        for header in [
            "bytes 0-0/\(value)", "bytes */\(value)", "bytes \(value)-\(value)/*", "bytes 0-\(value)/\(value)",
        ] {
            guard let parsed = ContentRange(header), let total = parsed.completeLength else { continue }
            #expect(total >= 0)
            do throws(BraidError) {
                try RemoteResource.checkLength(total)
                Self.expectSanePlan(length: total, connections: 1024, pieces: 1024)
            } catch {
                #expect(error.code == .protocolViolation)
                #expect(total > RemoteResource.maximumLength)
            }
        }
    }

    static let retryAfterDates = [
        "Fri, 31 Dec 9999 23:59:59 GMT", "Thu, 01 Jan 1970 00:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sun, 99 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 99999999999999999999 08:49:37 GMT",
    ]

    @Test(
        "Retry-After at the edges, both forms: a bounded retry, or a failure that says why",
        arguments: edgeNumbers + retryAfterDates)
    func edgeRetryAfter(value: String) {
        let kind = FailureKind.classify(status: 503, retryAfter: value, wallClock: 1_700_000_000)
        var scheduler = SegmentScheduler(ranges: [0..<100], connectionLimit: 1)
        let policy = scheduler.retryPolicy
        _ = scheduler.assign(connection: 0, now: 0)
        switch scheduler.ended(segment: 0, failure: kind, now: 0, random: 0.5) {
        case let .retry(delay):
            #expect(delay.isFinite && delay >= 0 && delay <= policy.maximumRetryAfter, "'\(value)' gave \(delay)")
            let digits = value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && !value.isEmpty
            #expect(!digits || Double(value)! <= policy.maximumRetryAfter, "'\(value)' was not refused")
        case let .fail(code, message):
            #expect(code == .protocolViolation)
            #expect(message.contains("retry after"), "\(message)")
        case .completed, .verifying:
            Issue.record("a failed segment cannot complete")
        }
    }

    @Test("Durations, rates and fractions of any size format without trapping")
    func edgeFormatting() {
        let values: [Double] = [
            0, -1, 59.5, 3600, 1e15, 9.3e18, Double(Int64.max), 1e300, .infinity, -.infinity, .nan,
            .greatestFiniteMagnitude, .leastNonzeroMagnitude,
        ]
        for value in values {
            #expect(!Formatting.duration(value).isEmpty, "\(value)")
            #expect(!Formatting.fixed(value, digits: 1).isEmpty, "\(value)")
            let integer = Formatting.integer(value)
            #expect(value.isNaN ? integer == 0 : (value >= 0) == (integer >= 0), "\(value) → \(integer)")
            #expect(!Formatting.bytes(integer).isEmpty)
        }
        #expect(Formatting.duration(3725) == "1:02:05")
        #expect(Formatting.duration(.infinity) == "--:--")
        #expect(Formatting.integer(1e300) == Int64.max)
        #expect(Formatting.integer(-.infinity) == Int64.min)
        for total in Self.edgeIntegers where total >= 0 {
            let progress = DownloadProgress(
                downloadedBytes: 1, totalBytes: total, bytesPerSecond: .leastNonzeroMagnitude,
                activeConnections: 1, retries: 0, segments: [])
            #expect(!Formatting.duration(progress.estimatedSecondsRemaining ?? 0).isEmpty)
        }
    }

    @Test(
        "A manifest's numbers at the edges: refused as invalid, or resumable within bounds",
        arguments: edgeIntegers)
    func edgeManifest(value: Int64) {
        var candidates: [Manifest] = []
        var manifest = ManifestTests.valid
        manifest.length = value
        manifest.segments = [.init(start: 0, end: value, done: value, durable: value)]
        candidates.append(manifest)
        manifest.segments = [.init(start: 0, end: value, done: value / 2, durable: 0)]
        candidates.append(manifest)
        manifest = ManifestTests.valid
        manifest.segments[1].done = value
        manifest.segments[2].durable = value
        candidates.append(manifest)
        manifest = ManifestTests.valid
        manifest.segments[1].end = value
        candidates.append(manifest)
        for manifest in candidates {
            do throws(BraidError) {
                try manifest.validate()
                #expect(manifest.length <= RemoteResource.maximumLength)
                let scheduler = SegmentScheduler(
                    ranges: manifest.segments.map { $0.start..<$0.end },
                    progress: manifest.trustedProgress(onBoot: manifest.bootID),
                    connectionLimit: 4
                )
                #expect(scheduler.totalLength == manifest.length)
            } catch {
                #expect(error.code == .manifest)
            }
        }
        if value > RemoteResource.maximumLength {
            #expect(throws: BraidError.self) { try candidates[0].validate() }
        }
    }

    @Test(
        "Every option at its edges: validate() refuses it as a usage error, or planning gives a sane plan",
        arguments: [Int.min, -1, 0, 1, 1024, 1025, 2_147_483, 2_147_484, Int(Int32.max), Int.max])
    func edgeOptions(value: Int) {
        let fields: [(String, WritableKeyPath<DownloadOptions, Int>, ClosedRange<Int>?)] = [
            ("connections", \.connections, 1...1024),
            ("piecesPerConnection", \.piecesPerConnection, 1...1024),
            ("connectTimeoutSeconds", \.connectTimeoutSeconds, 1...2_147_483),
            ("stallTimeoutSeconds", \.stallTimeoutSeconds, 1...2_147_483),
            ("maximumAttempts", \.maximumAttempts, nil),
        ]
        for (name, field, valid) in fields {
            var options = DownloadOptions()
            options[keyPath: field] = value
            do throws(BraidError) {
                try options.validate()
                #expect(valid?.contains(value) ?? (value >= 1), "\(name) = \(value) was accepted")
                Self.expectSanePlan(
                    length: RemoteResource.maximumLength, connections: options.connections,
                    pieces: options.piecesPerConnection)
                _ = options.retryPolicy.delay(afterAttempt: options.maximumAttempts, retryAfter: nil, random: 1)
            } catch {
                #expect(error.code == .usage)
                #expect(!(valid?.contains(value) ?? (value >= 1)), "\(name) = \(value) was refused: \(error.message)")
            }
        }
    }

    @Test(
        "Checkpoint intervals and byte limits at their edges: refused, or accepted and planned",
        arguments: [-Double.infinity, -1, 0, .leastNonzeroMagnitude, 0.5, 5, 1e300, .infinity, .nan])
    func edgeIntervalsAndLimits(value: Double) {
        var options = DownloadOptions()
        options.durableCheckpointInterval = value
        let valid = value.isFinite && value > 0
        #expect((try? options.validate()) != nil || !valid, "\(value) was refused")
        #expect((try? options.validate()) == nil || valid, "\(value) was accepted")
        for limit in Self.edgeIntegers {
            var options = DownloadOptions()
            options.byteLimit = limit
            guard (try? options.validate()) != nil else {
                #expect(limit < 1)
                continue
            }
            Self.expectSanePlan(length: min(limit, RemoteResource.maximumLength), connections: options.connections)
        }
    }
}
