import Testing

@testable import Braid

/// The machine with `-n auto`: its slots are the ceiling, and the policy sets how many of them run.
@Suite("TransferMachine with automatic connections")
struct TransferMachineAdaptiveTests {
    /// Eight segments of 1000 bytes, eight slots, and a policy starting at 2 connections.
    static func machine() -> TransferMachine {
        let resource = TransferMachineTests.origin
        var sized = resource
        sized.length = 8000
        return TransferMachine(
            resource: sized,
            sources: [Source(resource: sized, options: RequestOptions(), usesRanges: true)],
            scheduler: SegmentScheduler(
                ranges: (0..<8).map { Int64($0 * 1000)..<Int64($0 * 1000 + 1000) }, connectionLimit: 8,
                minimumSteal: 1 << 20),
            configuration: TransferMachine.Configuration(
                usesRanges: true, slots: 8,
                adaptiveConnections: ConnectionPolicy.Configuration(initial: 2, ceiling: 8))
        )
    }

    static func starts(_ actions: [TransferMachine.Action]) -> [Int] {
        actions.compactMap { if case let .start(slot, _, _) = $0 { slot } else { nil } }
    }

    @Test("it starts the policy's count, and starts more once a measured step pays")
    func followsThePolicy() {
        var machine = Self.machine()
        #expect(Self.starts(machine.start(now: 0)) == [0, 1], "two of the eight slots")
        #expect(machine.progress(now: 0).targetConnections == 2)
        for slot in 0..<2 {
            _ = machine.responseHead(
                slot: slot,
                headers: TransferMachineTests.head(
                    "HTTP/1.1 206 Partial Content",
                    "Content-Range: bytes \(slot * 1000)-\(slot * 1000 + 999)/8000", "ETag: \"v1\""), now: 0.05)
        }
        var started: [Int] = []
        var now = 0.0
        while now < 1.2 && started.isEmpty {
            now += 0.1
            // 100 bytes a tick on each connection.
            for slot in 0..<2 { machine.bytesReceived(slot: slot, count: 100) }
            started += Self.starts(machine.tick(now: now))
        }
        #expect(started == [2, 3], "a first measurement, then a step to four")
        #expect(machine.policy?.target == 4)
        #expect(machine.scheduler.activeCount == 4)
    }

    @Test("a refusal lowers the scheduler's limit to the connections the server accepted")
    func refusal() {
        var machine = Self.machine()
        _ = machine.start(now: 0)
        _ = machine.responseHead(
            slot: 1, headers: TransferMachineTests.head("HTTP/1.1 503 Service Unavailable"), now: 0.05)
        _ = machine.transferEnded(slot: 1, result: .finished, now: 0.06)
        #expect(machine.policy?.target == 1)
        #expect(machine.policy?.reason == .refused)
        #expect(machine.scheduler.connectionLimit == 1)
        #expect(machine.progress(now: 0.1).connectionsReason == "the server refused a connection")
    }
}
