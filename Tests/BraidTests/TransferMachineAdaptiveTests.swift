import Testing

@testable import Braid

/// The machine with `-n auto`: its slots are the ceiling, and the policy sets how many of them run.
@Suite("TransferMachine with automatic connections")
struct TransferMachineAdaptiveTests {
    static let mebibytes8: Int64 = 8 << 20

    /// Eight segments of 8 MiB, eight slots, and a policy starting at 2 connections, whose first requests take
    /// 16 MiB each (two segments) until the server's answers tell what a request costs.
    static func machine() -> TransferMachine {
        let resource = TransferMachineTests.origin
        var sized = resource
        sized.length = 8 * mebibytes8
        return TransferMachine(
            resource: sized,
            sources: [Source(resource: sized, usesRanges: true)],
            scheduler: SegmentScheduler(
                ranges: (0..<8).map { Int64($0) * mebibytes8..<Int64($0 + 1) * mebibytes8 }, connectionLimit: 8,
                minimumSteal: 1 << 20),
            configuration: TransferMachine.Configuration(
                usesRanges: true, slots: 8,
                adaptiveConnections: ConnectionPolicy.Configuration(initial: 2, ceiling: 8))
        )
    }

    static func starts(_ actions: [TransferMachine.Action]) -> [Int] {
        actions.compactMap { if case let .start(slot, _, _) = $0 { slot } else { nil } }
    }

    /// The first two requests (16 MiB each) are answered at 0.05 s.
    static func answerFirstRequests(_ machine: inout TransferMachine) {
        for slot in 0..<2 {
            _ = machine.responseHead(
                slot: slot,
                headers: TransferMachineTests.head(
                    "HTTP/1.1 206 Partial Content",
                    "Content-Range: bytes \(Int64(slot) * 2 * Self.mebibytes8)-\(Int64(slot + 1) * 2 * Self.mebibytes8 - 1)/\(8 * Self.mebibytes8)",
                    "ETag: \"v1\""), now: 0.05)
        }
    }

    @Test("it starts the policy's count, and starts more once a measured step pays")
    func followsThePolicy() {
        var machine = Self.machine()
        #expect(Self.starts(machine.start(now: 0)) == [0, 1], "two of the eight slots")
        #expect(machine.progress(now: 0).targetConnections == 2)
        Self.answerFirstRequests(&machine)
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

    @Test("a connection between two requests still receives; one started on a slot left idle does not yet")
    func receivingBetweenPieces() {
        var machine = Self.machine()
        _ = machine.start(now: 0)
        #expect(machine.receivingCount == 0, "no first byte yet")
        Self.answerFirstRequests(&machine)
        #expect(machine.receivingCount == 2)
        // Slot 0 gets its whole piece and ends: its next request starts at once, on the same connection.
        let piece = Int(2 * Self.mebibytes8)
        machine.bytesReceived(slot: 0, count: piece)
        machine.bytesWritten(slot: 0, count: piece)
        let next = Self.starts(machine.transferEnded(slot: 0, result: .finished, now: 0.2))
        #expect(next == [0])
        #expect(machine.receivingCount == 2, "slot 0 waits for its next piece's first byte, and still counts")
        // The count drops to one: slot 1, left idle when its request ends, is a new connection when used again.
        machine.bytesReceived(slot: 1, count: piece)
        machine.bytesWritten(slot: 1, count: piece)
        machine.scheduler.setConnectionLimit(1)
        #expect(Self.starts(machine.transferEnded(slot: 1, result: .finished, now: 0.3)).isEmpty)
        #expect(machine.answered[1] == false && machine.receivingCount == 1)
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

extension TransferMachineAdaptiveTests {
    @Test("when the count drops, the connections beyond it stop within 64 KiB, and their rest waits for the others")
    func surplusStops() {
        var machine = Self.machine()
        let total = 8 * Self.mebibytes8
        func answer(_ actions: [TransferMachine.Action], now: Double) {
            for case let .start(slot, _, request) in actions {
                let range = request.range
                _ = machine.responseHead(
                    slot: slot,
                    headers: TransferMachineTests.head(
                        "HTTP/1.1 206 Partial Content",
                        "Content-Range: bytes \(range.lowerBound)-\(range.upperBound - 1)/\(total)", "ETag: \"v1\""),
                    now: now)
            }
        }
        answer(machine.start(now: 0), now: 0.05)
        var now = 0.05
        var shrinks: [Int] = []
        // 400 bytes a tick in all, however many connections share them: the step to 4 gains nothing.
        while now < 10 && shrinks.isEmpty {
            now += 0.1
            let busy = (0..<8).filter { slot in
                machine.scheduler.segments.contains { $0.state == .active(connection: slot) }
            }
            for slot in busy { machine.bytesReceived(slot: slot, count: 400 / busy.count) }
            let actions = machine.tick(now: now)
            answer(actions, now: now)
            shrinks += actions.compactMap { if case let .shrink(slot, _) = $0 { slot } else { nil } }
        }
        #expect(machine.policy?.target == 2, "\(String(describing: machine.policy?.reason))")
        #expect(shrinks.count == 2, "the two connections beyond the count are cut short")
        let waiting = machine.scheduler.order.filter {
            if case .waiting = machine.scheduler.segments[$0].state { true } else { false }
        }
        #expect(machine.scheduler.bytesLeft > 0 && !waiting.isEmpty)
        // A surplus connection is to close, not to idle: ended past its cut over HTTP/1.1, however fast its rest
        // would come (`TransferMachine.drains`), where a steal's victim would read it.
        let cut = shrinks[0]
        guard case let .busy(attempt) = machine.slots[cut] else {
            Issue.record("slot \(cut) is not busy")
            return
        }
        let segment = machine.scheduler.segments[attempt.segment]
        machine.bytesReceived(slot: cut, count: Int(segment.end - segment.start - segment.received))
        machine.now = attempt.startedAt + 1e-6
        #expect(machine.overran(slot: cut) == [.abort(slot: cut)])
    }
}
