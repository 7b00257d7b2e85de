import Braid
import Testing

@testable import BraidBench

/// The interleaved order of a benchmark and the inputs it refuses, with the parsers of its command-line values.
@Suite("BenchSchedule")
struct BenchScheduleTests {
    @Test("Rounds interleave the counts: 1, 2, 4, 1, 2, 4, … with sequence numbers from 1")
    func interleaved() throws {
        let schedule = try BenchSchedule(connectionCounts: [1, 2, 4], repeats: 3)
        #expect(schedule.slots.map(\.connections) == [1, 2, 4, 1, 2, 4, 1, 2, 4])
        #expect(schedule.slots.map(\.round) == [1, 1, 1, 2, 2, 2, 3, 3, 3])
        #expect(schedule.slots.map(\.sequence) == Array(1...9))
        #expect(schedule.runCount == 9)
    }

    @Test("Counts are measured in ascending order whatever order they were given in")
    func sorted() throws {
        let schedule = try BenchSchedule(connectionCounts: [16, 1, 4], repeats: 2)
        #expect(schedule.connectionCounts == [1, 4, 16])
        #expect(schedule.slots.map(\.connections) == [1, 4, 16, 1, 4, 16])
    }

    @Test(
        "Empty lists, counts out of range, duplicates and fewer than one repeat are usage errors",
        arguments: [
            ([], 3, "at least one"), ([0, 1], 3, "between 1 and 1024"), ([1, -2], 3, "got -2"),
            ([1, 1025], 3, "got 1025"), ([1, 2, 2], 3, "listed twice"), ([1, 2], 0, "measured at least once"),
        ] as [([Int], Int, String)]
    )
    func refused(counts: [Int], repeats: Int, message: String) {
        #expect {
            try BenchSchedule(connectionCounts: counts, repeats: repeats)
        } throws: { error in
            guard let error = error as? BraidError else { return false }
            return error.code == .usage && error.message.contains(message)
        }
    }

    @Test(
        "A connection list is comma-separated, spaces allowed",
        arguments: [("1,2,4,8", [1, 2, 4, 8]), (" 1, 16 ,32", [1, 16, 32]), ("8", [8]), ("", []), ("0", [0])]
    )
    func connectionList(text: String, counts: [Int]) throws {
        #expect(try BenchArgument.connectionCounts(text) == counts)
    }

    @Test("A connection list with a gap or a word in it is refused", arguments: ["1,,2", "1,two", "1,2,", "1;2"])
    func badConnectionList(text: String) {
        #expect(throws: BraidError.self) { try BenchArgument.connectionCounts(text) }
    }

    @Test(
        "Byte counts take binary units in any case, with or without iB",
        arguments: [
            ("1048576", 1 << 20), ("512K", 512 << 10), ("64M", 64 << 20), ("64MiB", 64 << 20), ("2g", 2 << 30),
            ("1.5G", 3 << 29), ("4GB", 4 << 30), ("1T", 1 << 40), ("0", 0),
        ] as [(String, Int64)]
    )
    func byteCounts(text: String, bytes: Int64) throws {
        #expect(try BenchArgument.byteCount(text) == bytes)
    }

    @Test(
        "Byte counts that are not numbers, negative or absurdly large are refused",
        arguments: ["", "M", "-1M", "1X", "1e3", "9999999T"])
    func badByteCounts(text: String) {
        #expect(throws: BraidError.self) { try BenchArgument.byteCount(text) }
    }

    @Test(
        "A byte limit is a byte count, or all for the whole resource",
        arguments: [("64M", 64 << 20), ("all", nil), ("ALL", nil), (" all ", nil), ("1", 1)] as [(String, Int64?)]
    )
    func byteLimits(text: String, limit: Int64?) throws {
        #expect(try BenchArgument.byteLimit(text) == limit)
    }

    @Test("By default a run fetches 64 MiB: the default schedule takes a minute at 16 MiB/s, under 4 GiB in all")
    func defaultByteLimit() {
        let total = BenchConfiguration.defaultByteLimit * Int64(BenchSchedule.defaultRunCount)
        #expect(BenchConfiguration.defaultByteLimit == 64 << 20)
        #expect(Double(total) / Double(16 << 20) == 60)
        #expect(total < BenchAdvisory.totalBytesThreshold, "no warning of the volume by default")
    }

    @Test(
        "The report's limit is nil when the resource is no longer than the limit, or when there is none",
        arguments: [
            (64 << 20, 16 << 20, nil), (64 << 20, 64 << 20, nil), (64 << 20, 80 << 20, 64 << 20),
            (64 << 20, nil, 64 << 20), (nil, 80 << 20, nil),
        ] as [(Int64?, Int64?, Int64?)]
    )
    func appliedByteLimit(limit: Int64?, length: Int64?, applied: Int64?) {
        #expect(BenchRunner.byteLimit(limit, length: length) == applied)
    }

    @Test("A refused benchmark schedule names the argument")
    func refusedSchedule() {
        let counts = #expect(throws: BraidError.self) { try BenchSchedule(connectionCounts: [], repeats: 1) }
        #expect(counts?.option == .connectionCounts)
        let repeats = #expect(throws: BraidError.self) { try BenchSchedule(connectionCounts: [1], repeats: 0) }
        #expect(repeats?.option == .repeats)
        #expect(repeats?.message.contains("--") == false, "\(repeats?.message ?? "")")
    }
}
