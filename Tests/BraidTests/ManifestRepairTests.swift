import Foundation
import Testing

@testable import Braid

/// What the manifest keeps about data that failed its digest and a repair pass rewriting it: optional, so older
/// manifests still load, and as strictly validated as the rest.
@Suite("Manifest repair state")
struct ManifestRepairTests {
    /// The valid example with every segment complete and its data recorded as failing its digest.
    static var failed: Manifest {
        var manifest = ManifestTests.valid
        manifest.segments = manifest.segments.map {
            .init(start: $0.start, end: $0.end, done: $0.end - $0.start, durable: $0.end - $0.start)
        }
        manifest.failedDigest = .init(
            algorithm: .sha256, expectedHex: ManifestTests.valid.digestHex!,
            actualHex: String(repeating: "0f", count: 32))
        return manifest
    }

    @Test("A manifest written before the repair fields existed decodes with neither")
    func oldManifestDecodes() throws {
        let encoded = try JSONEncoder().encode(ManifestTests.valid)
        var object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(object["failedDigest"] == nil && object["repair"] == nil, "nil fields are not written")
        object["failedDigest"] = nil
        let decoded = try JSONDecoder().decode(Manifest.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(decoded == ManifestTests.valid)
    }

    @Test("Complete data with a failed digest, and a repair pass with its rewritten ranges, are valid and round-trip")
    func validRepairState() throws {
        var repairing = Self.failed
        repairing.segments[1].done = 10
        repairing.segments[1].durable = 0
        repairing.repair = .init(rewritten: [.init(0..<4), .init(150..<300)])
        for manifest in [Self.failed, repairing] {
            #expect(throws: Never.self) { try manifest.validate() }
            let decoded = try JSONDecoder().decode(Manifest.self, from: try JSONEncoder().encode(manifest))
            #expect(decoded == manifest)
        }
        #expect(Self.failed.isComplete(onBoot: "boot-1"))
        #expect(!repairing.isComplete(onBoot: "boot-1"))
    }

    @Test(
        "A repair state that breaks an invariant is rejected as a manifest error",
        arguments: [
            ManifestTests.Corruption(testDescription: "a failed digest of incomplete data") {
                $0.segments[2].done = 0
                $0.segments[2].durable = 0
            },
            ManifestTests.Corruption(testDescription: "a malformed expected digest") {
                $0.failedDigest?.expectedHex = "abc"
            },
            ManifestTests.Corruption(testDescription: "an actual digest of another algorithm's length") {
                $0.failedDigest?.actualHex = String(repeating: "0f", count: 16)
            },
            ManifestTests.Corruption(testDescription: "an empty rewritten range") {
                $0.repair = .init(rewritten: [.init(5..<5)])
            },
            ManifestTests.Corruption(testDescription: "rewritten ranges out of order") {
                $0.repair = .init(rewritten: [.init(10..<20), .init(0..<5)])
            },
            ManifestTests.Corruption(testDescription: "overlapping rewritten ranges") {
                $0.repair = .init(rewritten: [.init(0..<20), .init(10..<30)])
            },
            ManifestTests.Corruption(testDescription: "a rewritten range past the end") {
                $0.repair = .init(rewritten: [.init(290..<301)])
            },
        ]
    )
    func rejected(corruption: ManifestTests.Corruption) {
        var manifest = Self.failed
        corruption.apply(&manifest)
        #expect(throws: BraidError.self) { try manifest.validate() }
    }
}

/// The comparing sink of a repair pass: which bytes differ, and how the rewritten ranges merge.
@Suite("RepairingSink")
struct RepairingSinkTests {
    func differences(_ fetched: [UInt8], _ kept: [UInt8]) -> [Range<Int>] {
        fetched.withUnsafeBytes { fetched in
            kept.withUnsafeBytes { kept in RepairingSink.differences(between: fetched, and: kept) }
        }
    }

    @Test("Equal bytes differ nowhere; runs of differences are found exactly, past a 4 KiB block boundary too")
    func exactDifferences() {
        let kept = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(differences(kept, kept).isEmpty)
        var fetched = kept
        for index in 4090..<4100 { fetched[index] ^= 0xFF }
        fetched[19_999] ^= 1
        #expect(differences(fetched, kept) == [4090..<4100, 19_999..<20_000])
    }

    @Test("Differences at most 4 KiB apart are one range; past the kept data's end every byte differs")
    func mergedDifferences() {
        let kept = [UInt8](repeating: 0, count: 10_000)
        var fetched = kept
        fetched[100] = 1
        fetched[100 + 4096 + 1] = 1
        #expect(differences(fetched, kept) == [100..<4198])
        #expect(differences(fetched, Array(kept.prefix(9_000))) == [100..<4198, 9_000..<10_000])
    }

    @Test(
        "Inserting a range joins every range it touches or comes within 4 KiB of, and keeps file order",
        arguments: [
            ([], 10..<20, [10..<20]),
            ([0..<10, 100_000..<100_010], 50_000..<50_010, [0..<10, 50_000..<50_010, 100_000..<100_010]),
            ([0..<10, 8_000..<8_010], 4_000..<4_010, [0..<8_010]),
            ([0..<10], 4_106..<4_200, [0..<4_200]),
            ([0..<10], 4_107..<4_200, [0..<10, 4_107..<4_200]),
            ([100..<200, 300..<400], 0..<1_000, [0..<1_000]),
        ] as [([Range<Int64>], Range<Int64>, [Range<Int64>])]
    )
    func insert(existing: [Range<Int64>], range: Range<Int64>, expected: [Range<Int64>]) {
        var ranges = existing
        RepairingSink.insert(range, into: &ranges)
        #expect(ranges == expected)
    }
}
