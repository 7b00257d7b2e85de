import Testing

@testable import BraidDaemon

/// The daemon's queue, event by event: aria2's statuses, which downloads start when, and what pausing or removing
/// a running one asks of its transfer. No network, no threads.
@Suite("download table")
struct DownloadTableTests {
    static func task(_ number: Int, _ status: TaskStatus = .waiting) -> DaemonTask {
        let hex = String(number, radix: 16)
        let gid = String(repeating: "0", count: 16 - hex.count) + hex
        return DaemonTask(
            gid: gid, request: TaskRequest(uris: ["http://127.0.0.1/\(number)"], directory: "/d"), status: status)
    }

    static func started(_ effects: [DownloadTable.Effect]) -> [String] {
        effects.compactMap { if case let .start(task) = $0 { task.gid } else { nil } }
    }

    @Test("downloads start in queue order while slots are free; the rest wait")
    func startsInOrder() {
        var table = DownloadTable(maximumActive: 2)
        let a = Self.task(1), b = Self.task(2), c = Self.task(3)
        #expect(Self.started(table.add(a)) == [a.gid])
        #expect(Self.started(table.add(b)) == [b.gid])
        #expect(Self.started(table.add(c)) == [])
        #expect(table.activeTasks.map(\.gid) == [a.gid, b.gid])
        #expect(table.waitingTasks.map(\.status) == [.waiting])
        let effects = table.finished(a.gid, .completed(path: "/d/1", length: 10, verification: "length verified"))
        #expect(effects.contains(.notify(method: "aria2.onDownloadComplete", gid: a.gid)))
        #expect(Self.started(effects) == [c.gid])
        #expect(table.task(a.gid)?.status == .complete)
        #expect(table.stoppedTasks.map(\.gid) == [a.gid])
    }

    @Test("each start is announced with onDownloadStart")
    func startNotifies() {
        var table = DownloadTable(maximumActive: 1)
        let a = Self.task(1)
        #expect(table.add(a).contains(.notify(method: "aria2.onDownloadStart", gid: a.gid)))
    }

    @Test("pausing a running download interrupts it; its slot is held until the transfer reports back")
    func pauseRunning() throws {
        var table = DownloadTable(maximumActive: 1)
        let a = Self.task(1), b = Self.task(2)
        _ = table.add(a)
        _ = table.add(b)
        let effects = try table.pause(a.gid)
        #expect(effects.contains(.interrupt(gid: a.gid)))
        #expect(effects.contains(.notify(method: "aria2.onDownloadPause", gid: a.gid)))
        #expect(Self.started(effects) == [], "the interrupted transfer still holds the slot")
        #expect(table.task(a.gid)?.status == .paused)
        #expect(table.waitingTasks.map(\.gid) == [a.gid, b.gid], "a paused download goes to the front of the queue")
        #expect(Self.started(table.finished(a.gid, .stopped)) == [b.gid])
        #expect(table.task(a.gid)?.status == .paused)
    }

    @Test("unpausing before the interrupted transfer has reported back does not start a second transfer")
    func unpauseWhileWindingDown() throws {
        var table = DownloadTable(maximumActive: 2)
        let a = Self.task(1)
        _ = table.add(a)
        _ = try table.pause(a.gid)
        #expect(Self.started(try table.unpause(a.gid)) == [])
        #expect(table.task(a.gid)?.status == .waiting)
        #expect(Self.started(table.finished(a.gid, .stopped)) == [a.gid])
        #expect(table.task(a.gid)?.status == .active)
    }

    @Test("pausing a waiting download holds it, without a notification (as aria2); unpausing lets it wait again")
    func pauseWaiting() throws {
        var table = DownloadTable(maximumActive: 1)
        let a = Self.task(1), b = Self.task(2)
        _ = table.add(a)
        _ = table.add(b)
        let effects = try table.pause(b.gid)
        #expect(effects == [])
        #expect(Self.started(table.finished(a.gid, .completed(path: "/d/1", length: 1, verification: ""))) == [])
        #expect(Self.started(try table.unpause(b.gid)) == [b.gid])
    }

    @Test("pause and unpause are refused where aria2 refuses them, with its messages")
    func refusals() throws {
        var table = DownloadTable(maximumActive: 1)
        let a = Self.task(1)
        _ = table.add(a)
        #expect(throws: DownloadTable.Refusal(message: "GID#\(a.gid) cannot be unpaused now")) {
            try table.unpause(a.gid)
        }
        #expect(throws: DownloadTable.Refusal(message: "GID ffffffffffffffff is not found")) {
            try table.pause("ffffffffffffffff")
        }
        _ = table.finished(a.gid, .failed(code: 3, message: "404"))
        #expect(throws: DownloadTable.Refusal(message: "GID#\(a.gid) cannot be paused now")) {
            try table.pause(a.gid)
        }
    }

    @Test("removing a running download cancels its transfer, lists it as removed, and frees its slot only when it ends")
    func removeRunning() throws {
        var table = DownloadTable(maximumActive: 1)
        let a = Self.task(1), b = Self.task(2)
        _ = table.add(a)
        _ = table.add(b)
        let effects = try table.remove(a.gid)
        #expect(effects.contains(.cancel(gid: a.gid)))
        #expect(effects.contains(.notify(method: "aria2.onDownloadStop", gid: a.gid)))
        #expect(Self.started(effects) == [])
        #expect(table.stoppedTasks.map(\.status) == [.removed])
        #expect(table.task(a.gid)?.errorCode == 31)
        #expect(throws: DownloadTable.Refusal.self) { try table.removeResult(a.gid) }
        #expect(Self.started(table.finished(a.gid, .stopped)) == [b.gid])
        #expect(table.task(a.gid)?.status == .removed)
        try table.removeResult(a.gid)
        #expect(table.task(a.gid) == nil)
        #expect(table.stoppedTotal == 1)
    }

    @Test("removing a waiting or paused download forgets it at once, silently, as aria2 does")
    func removeWaiting() throws {
        var table = DownloadTable(maximumActive: 1)
        let a = Self.task(1), b = Self.task(2), c = Self.task(3)
        _ = table.add(a)
        _ = table.add(b)
        _ = table.add(c)
        _ = try table.pause(c.gid)
        #expect(try table.remove(b.gid) == [])
        #expect(try table.remove(c.gid) == [])
        #expect(table.task(b.gid) == nil && table.task(c.gid) == nil)
        #expect(table.stoppedTasks.isEmpty && table.waitingTasks.isEmpty)
        // A paused download whose transfer is still winding down is cancelled, then forgotten.
        _ = try table.pause(a.gid)
        #expect(try table.remove(a.gid) == [.cancel(gid: a.gid)])
        #expect(table.finished(a.gid, .stopped) == [])
        #expect(table.task(a.gid) == nil)
    }

    @Test("a failure of a running download is an error with aria2's code; one of a paused download is not")
    func failures() throws {
        var table = DownloadTable(maximumActive: 2)
        let a = Self.task(1), b = Self.task(2)
        _ = table.add(a)
        _ = table.add(b)
        let effects = table.finished(a.gid, .failed(code: 32, message: "sha-256 mismatch"))
        #expect(effects.contains(.notify(method: "aria2.onDownloadError", gid: a.gid)))
        #expect(table.task(a.gid)?.errorCode == 32)
        #expect(table.task(a.gid)?.status == .error)
        _ = try table.pause(b.gid)
        _ = table.finished(b.gid, .failed(code: 6, message: "reset"))
        #expect(table.task(b.gid)?.status == .paused)
    }

    @Test("a transfer that stops unasked (the daemon is stopping) waits to be started again")
    func stoppedUnasked() {
        var table = DownloadTable(maximumActive: 1)
        let a = Self.task(1)
        _ = table.add(a)
        _ = table.finished(a.gid, .stopped)
        #expect(table.task(a.gid)?.status == .active, "restarted at once: a slot is free")
    }

    @Test("a session read back: active ones wait to start again, paused stay paused, stopped are listed")
    func readBack() {
        var table = DownloadTable(maximumActive: 1)
        let effects = [Self.task(1, .complete), Self.task(2, .paused), Self.task(3, .active), Self.task(4, .waiting)]
            .flatMap { table.add($0) }
        #expect(Self.started(effects) == [Self.task(3).gid])
        #expect(table.task(Self.task(2).gid)?.status == .paused)
        #expect(table.task(Self.task(4).gid)?.status == .waiting)
        #expect(table.stoppedTasks.map(\.gid) == [Self.task(1).gid])
    }

    @Test("raising max-concurrent-downloads starts more at once; lowering it stops none")
    func changeMaximum() {
        var table = DownloadTable(maximumActive: 1)
        for number in 1...3 { _ = table.add(Self.task(number)) }
        #expect(Self.started(table.setMaximumActive(3)).count == 2)
        #expect(table.setMaximumActive(1).isEmpty)
        #expect(table.activeTasks.count == 3)
        #expect(
            Self.started(table.finished(Self.task(1).gid, .completed(path: "/d/1", length: 1, verification: ""))) == [])
    }

    @Test("purging forgets every stopped download but one whose transfer is still ending")
    func purge() throws {
        var table = DownloadTable(maximumActive: 2)
        _ = table.add(Self.task(1))
        _ = table.add(Self.task(2))
        _ = table.finished(Self.task(1).gid, .completed(path: "/d/1", length: 1, verification: ""))
        _ = try table.remove(Self.task(2).gid)
        #expect(table.stoppedTasks.count == 2)
        table.purgeResults()
        #expect(table.stoppedTasks.map(\.gid) == [Self.task(2).gid])
    }
}
