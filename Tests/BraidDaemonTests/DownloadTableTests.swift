import Testing

@testable import BraidDaemon

/// The daemon's table, event by event: aria2's statuses and queue order, what pausing or removing a download asks
/// of the manager, and what a finished transfer becomes. When each starts is the manager's (`DownloadQueueTests`).
/// No network, no threads.
@Suite("download table")
struct DownloadTableTests {
    static func task(_ number: Int, _ status: TaskStatus = .waiting) -> DaemonTask {
        let hex = String(number, radix: 16)
        let gid = String(repeating: "0", count: 16 - hex.count) + hex
        return DaemonTask(
            gid: gid, request: TaskRequest(uris: ["http://127.0.0.1/\(number)"], directory: "/d"), status: status)
    }

    static func submitted(_ effects: [DownloadTable.Effect]) -> [String] {
        effects.compactMap { if case let .submit(task) = $0 { task.gid } else { nil } }
    }

    /// A table with `tasks` added, the first `running` of them started by the manager.
    static func table(_ tasks: [DaemonTask], running: Int = 0) -> DownloadTable {
        var table = DownloadTable()
        for task in tasks { _ = table.add(task) }
        for task in tasks.prefix(running) { _ = table.started(task.gid) }
        return table
    }

    @Test("every download added is submitted to the manager and waits until the manager starts it")
    func submitsAndWaits() {
        var table = DownloadTable()
        let a = Self.task(1), b = Self.task(2)
        #expect(Self.submitted(table.add(a)) == [a.gid])
        #expect(Self.submitted(table.add(b)) == [b.gid])
        #expect(table.waitingTasks.map(\.gid) == [a.gid, b.gid])
        #expect(table.activeTasks.isEmpty)
        #expect(table.started(a.gid) == [.notify(method: "aria2.onDownloadStart", gid: a.gid)])
        #expect(table.activeTasks.map(\.gid) == [a.gid])
        #expect(table.started(a.gid) == [], "started once")
        let effects = table.finished(a.gid, .completed(path: "/d/1", length: 10, verification: "length verified"))
        #expect(effects == [.notify(method: "aria2.onDownloadComplete", gid: a.gid)])
        #expect(table.task(a.gid)?.status == .complete)
        #expect(table.stoppedTasks.map(\.gid) == [a.gid])
    }

    @Test("pausing a running download pauses its transfer, announces it, and puts it first in line")
    func pauseRunning() throws {
        var table = Self.table([Self.task(1), Self.task(2)], running: 1)
        let a = Self.task(1), b = Self.task(2)
        let effects = try table.pause(a.gid)
        #expect(effects == [.pause(gid: a.gid), .notify(method: "aria2.onDownloadPause", gid: a.gid)])
        #expect(table.task(a.gid)?.status == .paused)
        #expect(table.waitingTasks.map(\.gid) == [a.gid, b.gid], "a paused download goes to the front of the queue")
        #expect(table.started(b.gid).count == 1, "the manager gives its slot to the next")
        #expect(table.started(a.gid) == [], "a late start of a paused download leaves it paused")
    }

    @Test("unpausing lets a paused download wait again; the manager's start makes it active, announced again")
    func unpause() throws {
        var table = Self.table([Self.task(1)], running: 1)
        let a = Self.task(1)
        _ = try table.pause(a.gid)
        #expect(try table.unpause(a.gid) == [.resume(gid: a.gid)])
        #expect(table.task(a.gid)?.status == .waiting)
        #expect(table.started(a.gid) == [.notify(method: "aria2.onDownloadStart", gid: a.gid)])
        #expect(table.task(a.gid)?.status == .active)
    }

    @Test("pausing a waiting download holds it, without a notification (as aria2); unpausing lets it wait again")
    func pauseWaiting() throws {
        var table = Self.table([Self.task(1), Self.task(2)], running: 1)
        let b = Self.task(2)
        #expect(try table.pause(b.gid) == [.pause(gid: b.gid)])
        #expect(table.task(b.gid)?.status == .paused)
        #expect(try table.unpause(b.gid) == [.resume(gid: b.gid)])
        #expect(table.task(b.gid)?.status == .waiting)
    }

    @Test(
        "changePosition moves a waiting or paused download as aria2 does, stops at the ends, and tells the manager",
        arguments: [
            // Queue 2 3 4 5 (1 runs); moving 4 (at 2).
            (DownloadTable.Origin.start, 0, 0, [4, 2, 3, 5]),
            (.start, -7, 0, [4, 2, 3, 5]),
            (.start, 3, 3, [2, 3, 5, 4]),
            (.start, Int.max, 3, [2, 3, 5, 4]),
            (.current, -1, 1, [2, 4, 3, 5]),
            (.current, Int.min, 0, [4, 2, 3, 5]),
            (.current, 1, 3, [2, 3, 5, 4]),
            (.end, 0, 3, [2, 3, 5, 4]),
            (.end, -2, 1, [2, 4, 3, 5]),
            (.end, 5, 3, [2, 3, 5, 4]),
        ]
    )
    func changePosition(origin: DownloadTable.Origin, offset: Int, position: Int, order: [Int]) throws {
        var table = Self.table((1...5).map { Self.task($0) }, running: 1)
        _ = try table.pause(Self.task(3).gid)
        let moved = try table.move(Self.task(4).gid, by: offset, from: origin)
        let gids = order.map { Self.task($0).gid }
        #expect(moved.position == position)
        #expect(table.waitingTasks.map(\.gid) == gids)
        #expect(moved.effects == [.reorder(gids)])
        #expect(table.task(Self.task(3).gid)?.status == .paused, "a paused one keeps its status")
    }

    @Test("changePosition refuses an active or unknown download in aria2's words; a move to its own place is a no-op")
    func changePositionRefusals() throws {
        var table = Self.table((1...3).map { Self.task($0) }, running: 1)
        let active = Self.task(1).gid, unknown = Self.task(9).gid
        #expect(throws: DownloadTable.Refusal(message: "GID#\(active) not found in the waiting queue.")) {
            try table.move(active, by: 0, from: .start)
        }
        #expect(throws: DownloadTable.Refusal(message: "GID \(unknown) is not found")) {
            try table.move(unknown, by: 0, from: .start)
        }
        let stay = try table.move(Self.task(3).gid, by: 0, from: .end)
        #expect(stay.position == 1 && stay.effects == [])
    }

    @Test("a download added at a position is queued there and the manager told the order; past the end it is last")
    func addAtPosition() {
        var table = Self.table((1...3).map { Self.task($0) }, running: 1)
        let effects = table.add(Self.task(4), at: 1)
        let order = [2, 4, 3].map { Self.task($0).gid }
        #expect(effects == [.submit(Self.task(4)), .reorder(order)])
        #expect(table.add(Self.task(5), at: 3) == [.submit(Self.task(5))], "3 is the end: as if none was given")
        #expect(table.waitingTasks.map(\.gid) == [2, 4, 3, 5].map { Self.task($0).gid })
    }

    @Test(
        "a gid is read as aria2 reads one: whole, or a prefix no other gid has, in either case",
        arguments: [
            // aria2's own cases (GroupIdTest.testExpandUnique), with its three gids.
            ("ff8", "GID ff8 is not unique"),
            ("ffg", "Invalid GID ffg"),
            (String(repeating: "a", count: 17), "Invalid GID \(String(repeating: "a", count: 17))"),
            ("", "Invalid GID "),
            ("ff800000000", "GID ff800000000 is not unique"),
            ("ff8000000001", "ff80000000010000"),
            ("ff8000000002", "ff80000000020001"),
            ("fff800000003", "fff8000000030000"),
            ("ff80000000031", "GID ff80000000031 is not found"),
            ("FF8000000002", "ff80000000020001"),
            ("fff8000000030000", "fff8000000030000"),
            ("0123456789abcdef", "GID 0123456789abcdef is not found"),
        ]
    )
    func resolve(text: String, outcome: String) {
        var table = DownloadTable()
        for gid in ["ff80000000010000", "ff80000000020001", "fff8000000030000"] {
            _ = table.add(
                DaemonTask(
                    gid: gid, request: TaskRequest(uris: ["http://127.0.0.1/"], directory: "/d"), status: .paused))
        }
        do {
            #expect(try table.resolve(text) == outcome)
        } catch {
            #expect(error.message == outcome)
        }
    }

    @Test("a gid refused is quoted in at most a line")
    func resolveLongText() {
        let table = DownloadTable()
        #expect(throws: DownloadTable.Refusal(message: "Invalid GID " + String(repeating: "g", count: 100) + "…")) {
            try table.resolve(String(repeating: "g", count: 1 << 20))
        }
    }

    @Test("a download added paused is submitted paused")
    func addPaused() {
        var table = DownloadTable()
        let task = Self.task(1, .paused)
        #expect(table.add(task) == [.submit(task)])
        #expect(table.waitingTasks.map(\.status) == [.paused])
    }

    @Test("pause and unpause are refused where aria2 refuses them, with its messages")
    func refusals() throws {
        var table = Self.table([Self.task(1)], running: 1)
        let a = Self.task(1)
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

    @Test("removing a running download cancels its transfer, lists it as removed, and keeps its result until it ends")
    func removeRunning() throws {
        var table = Self.table([Self.task(1), Self.task(2)], running: 1)
        let a = Self.task(1)
        let effects = try table.remove(a.gid)
        #expect(effects == [.cancel(gid: a.gid), .notify(method: "aria2.onDownloadStop", gid: a.gid)])
        #expect(table.stoppedTasks.map(\.status) == [.removed])
        #expect(table.task(a.gid)?.errorCode == 31)
        #expect(throws: DownloadTable.Refusal.self) { try table.removeResult(a.gid) }
        #expect(table.finished(a.gid, .stopped) == [])
        #expect(table.task(a.gid)?.status == .removed)
        try table.removeResult(a.gid)
        #expect(table.task(a.gid) == nil)
        #expect(table.stoppedTotal == 1)
    }

    @Test("removing a waiting or paused download cancels it and forgets it at once, silently, as aria2 does")
    func removeWaiting() throws {
        var table = Self.table([Self.task(1), Self.task(2), Self.task(3)], running: 1)
        let a = Self.task(1), b = Self.task(2), c = Self.task(3)
        _ = try table.pause(c.gid)
        #expect(try table.remove(b.gid) == [.cancel(gid: b.gid)])
        #expect(try table.remove(c.gid) == [.cancel(gid: c.gid)])
        #expect(table.task(b.gid) == nil && table.task(c.gid) == nil)
        #expect(table.finished(b.gid, .stopped) == [], "its report finds nothing to change")
        #expect(table.stoppedTasks.isEmpty && table.waitingTasks.isEmpty)
        _ = try table.pause(a.gid)
        #expect(try table.remove(a.gid) == [.cancel(gid: a.gid)])
        #expect(table.finished(a.gid, .stopped) == [])
        #expect(table.task(a.gid) == nil)
    }

    @Test("a failure is an error with aria2's code, whether it ran, waited or was paused; a removed one stays removed")
    func failures() throws {
        var table = Self.table([Self.task(1), Self.task(2), Self.task(3), Self.task(4)], running: 2)
        let a = Self.task(1), b = Self.task(2), c = Self.task(3), d = Self.task(4)
        let effects = table.finished(a.gid, .failed(code: 32, message: "sha-256 mismatch"))
        #expect(effects == [.notify(method: "aria2.onDownloadError", gid: a.gid)])
        #expect(table.task(a.gid)?.errorCode == 32)
        #expect(table.task(a.gid)?.status == .error)
        _ = try table.pause(b.gid)
        _ = table.finished(b.gid, .failed(code: 6, message: "reset"))
        #expect(table.task(b.gid)?.status == .error, "paused, it has nothing left to go on")
        _ = table.finished(c.gid, .failed(code: 1, message: "bad URL"))
        #expect(table.task(c.gid)?.status == .error, "one that failed before it ran")
        _ = table.started(d.gid)
        _ = try table.remove(d.gid)
        _ = table.finished(d.gid, .failed(code: 6, message: "reset"))
        #expect(table.task(d.gid)?.status == .removed)
        #expect(table.stoppedTotal == 4)
    }

    @Test("a transfer that stops unasked (the daemon is stopping) waits to be started again; paused stays paused")
    func stoppedUnasked() throws {
        var table = Self.table([Self.task(1), Self.task(2), Self.task(3)], running: 2)
        let a = Self.task(1), b = Self.task(2), c = Self.task(3)
        _ = try table.pause(b.gid)
        _ = table.finished(a.gid, .stopped)
        _ = table.finished(b.gid, .stopped)
        _ = table.finished(c.gid, .stopped)
        #expect(table.waitingTasks.map(\.gid) == [a.gid, b.gid, c.gid])
        #expect(table.waitingTasks.map(\.status) == [.waiting, .paused, .waiting])
    }

    @Test("a session read back: active ones wait to start again, paused stay paused, stopped are listed")
    func readBack() {
        var table = DownloadTable()
        let effects = [Self.task(1, .complete), Self.task(2, .paused), Self.task(3, .active), Self.task(4, .waiting)]
            .flatMap { table.add($0) }
        #expect(Self.submitted(effects) == [Self.task(2).gid, Self.task(3).gid, Self.task(4).gid])
        #expect(table.task(Self.task(2).gid)?.status == .paused)
        #expect(table.task(Self.task(3).gid)?.status == .waiting)
        #expect(table.task(Self.task(4).gid)?.status == .waiting)
        #expect(table.stoppedTasks.map(\.gid) == [Self.task(1).gid])
        #expect(table.stoppedTotal == 1, "stopped ones read back count in numStoppedTotal, never below numStopped")
    }

    @Test("purging forgets every stopped download but one whose transfer is still ending")
    func purge() throws {
        var table = Self.table([Self.task(1), Self.task(2)], running: 2)
        _ = table.finished(Self.task(1).gid, .completed(path: "/d/1", length: 1, verification: ""))
        _ = try table.remove(Self.task(2).gid)
        #expect(table.stoppedTasks.count == 2)
        table.purgeResults()
        #expect(table.stoppedTasks.map(\.gid) == [Self.task(2).gid])
    }

    @Test("past maximumResults the oldest stopped download is forgotten, one still ending kept until it ends")
    func resultsCapped() throws {
        var table = DownloadTable(maximumResults: 2)
        for number in 1...4 { _ = table.add(Self.task(number)) }
        for number in 1...4 { _ = table.started(Self.task(number).gid) }
        _ = try table.remove(Self.task(1).gid)
        _ = table.finished(Self.task(2).gid, .completed(path: "/d/2", length: 1, verification: ""))
        _ = table.finished(Self.task(3).gid, .failed(code: 3, message: "not found"))
        #expect(table.stoppedTasks.map(\.gid) == [Self.task(1).gid, Self.task(3).gid], "the removed one still ends")
        #expect(table.task(Self.task(2).gid) == nil)
        _ = table.finished(Self.task(1).gid, .stopped)
        _ = table.finished(Self.task(4).gid, .completed(path: "/d/4", length: 1, verification: ""))
        #expect(table.stoppedTasks.map(\.gid) == [Self.task(3).gid, Self.task(4).gid])
        #expect(table.stoppedTotal == 4)
    }

    @Test("a session with more stopped downloads than maximumResults is read back with the newest of them")
    func readBackCapped() {
        var table = DownloadTable(maximumResults: 2)
        for number in 1...5 { _ = table.add(Self.task(number, .complete)) }
        #expect(table.stoppedTasks.map(\.gid) == [Self.task(4).gid, Self.task(5).gid])
    }
}
