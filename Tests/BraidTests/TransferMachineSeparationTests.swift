import Testing

@testable import Braid

/// A list's file of a few MiB whose requests all started as streams of its lane's shared connection, when the lane
/// turns to a connection a request (`StreamsPerConnection`): its requests stop at their next 64 KiB boundary, and
/// the rest of each piece waits for a request of its own (`TransferMachine.connectionsSeparated(slots:)`).
@Suite("TransferMachine moving requests off a shared connection")
struct TransferMachineSeparationTests {
    static let kibibyte: Int64 = 1 << 10
    static let mebibyte: Int64 = 1 << 20

    /// A 4 MiB file planned as four pieces of 1 MiB, all four requested at once over four slots.
    static func machine(usesRanges: Bool = true) -> TransferMachine {
        var resource = TransferMachineTests.origin
        resource.length = 4 * mebibyte
        let ranges = usesRanges ? (0..<4).map { Int64($0) * mebibyte..<Int64($0 + 1) * mebibyte } : [0..<4 * mebibyte]
        return TransferMachine(
            resource: resource,
            sources: [Source(resource: resource, usesRanges: usesRanges)],
            scheduler: SegmentScheduler(ranges: ranges, connectionLimit: usesRanges ? 4 : 1),
            configuration: TransferMachine.Configuration(usesRanges: usesRanges, slots: usesRanges ? 4 : 1)
        )
    }

    static func starts(_ actions: [TransferMachine.Action]) -> [Range<Int64>] {
        actions.compactMap { if case let .start(_, _, request) = $0 { request.range } else { nil } }
    }

    @Test("Shared requests stop at their next 64 KiB boundary, and a new request fetches each one's rest")
    func sharedRequestsMoveTheirRest() {
        var machine = Self.machine()
        #expect(Self.starts(machine.start(now: 0)).count == 4)
        for slot in 0..<4 {
            let start = Int64(slot) * Self.mebibyte
            _ = machine.responseHead(
                slot: slot,
                headers: TransferMachineTests.partial(start, start + Self.mebibyte - 1, of: 4 * Self.mebibyte),
                now: 0.1)
        }
        machine.deliver(slot: 0, bytes: 100_000)
        // 900,000 in: the rest beyond the next boundary (917,504) is 128 KiB, not worth a request of its own.
        machine.deliver(slot: 1, bytes: 900_000)

        // Slots 0, 1 and 2 share a connection; slot 3 has one of its own and is left alone.
        let actions = machine.connectionsSeparated(slots: [0, 1, 2])
        #expect(
            actions == [
                .shrink(slot: 0, end: 128 * Self.kibibyte),
                .shrink(slot: 2, end: 2 * Self.mebibyte + 64 * Self.kibibyte),
            ])

        // Slot 0 reaches its new end and ends; the free slot takes the rest of its piece, on a request of its own.
        machine.deliver(slot: 0, bytes: Int(128 * Self.kibibyte) - 100_000)
        let ended = machine.transferEnded(slot: 0, result: .finished, now: 0.5)
        #expect(Self.starts(ended) == [128 * Self.kibibyte..<Self.mebibyte])
        #expect(machine.statistics.retries == 0)
    }

    @Test("A response read whole from byte 0, without ranges, cannot move its rest: nothing changes")
    func withoutRangesNothingMoves() {
        var machine = Self.machine(usesRanges: false)
        _ = machine.start(now: 0)
        machine.deliver(slot: 0, bytes: 100_000)
        #expect(machine.connectionsSeparated(slots: [0]) == [])
    }
}
