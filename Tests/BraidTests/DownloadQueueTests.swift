import Testing

@testable import Braid

/// A manager's queue, event by event: which downloads start when, under a fixed count or the connection caps, and
/// what pausing, resuming, cancelling and interrupting ask of them. No network, no threads.
@Suite("download queue")
struct DownloadQueueTests {
    typealias Queue = DownloadQueue<Int>

    static func queue(_ concurrency: DownloadManager.Concurrency, connections: Int = 48, perHost: Int = 16) -> Queue {
        Queue(concurrency: concurrency, caps: .init(connections: connections, perHost: perHost))
    }

    /// Submits downloads `ids` from `host`, each asking for `connections`, and returns every action.
    static func submit(
        _ ids: ClosedRange<Int>, to queue: inout Queue, host: String = "a", connections: Int = 8
    ) -> [Queue.Action] {
        ids.flatMap { queue.submit($0, host: host, requestedConnections: connections) }
    }

    @Test("a fixed count starts downloads in order while slots are free; a finished one gives its slot to the next")
    func fixedInOrder() {
        var queue = Self.queue(.fixed(2))
        #expect(Self.submit(1...3, to: &queue) == [.start(1), .start(2)])
        #expect(queue.waiting == [3])
        #expect(queue.finished(2) == [.start(3)])
        #expect(queue.running == [1, 3])
        #expect(queue.finished(2) == [], "a download finishes once")
    }

    @Test("a long line keeps its order as it is taken from the front, with a paused download put first among it")
    func longLine() {
        var queue = Self.queue(.fixed(1))
        #expect(Self.submit(1...1000, to: &queue) == [.start(1)])
        var started = [1]
        for id in 1..<400 {
            for case let .start(next) in queue.finished(id) { started.append(next) }
        }
        #expect(started == Array(1...400))
        // The running one paused goes first in line, ahead of those the taken places were freed by.
        #expect(queue.pause(400) == [.pause(400), .start(401)])
        #expect(queue.waiting.prefix(2) == [400, 402])
        #expect(queue.resume(400) == [])
        #expect(queue.finished(401) == [.proceed(400)])
        #expect(queue.waiting.count == 599)
        #expect(queue.waiting.first == 402 && queue.waiting.last == 1000)
    }

    @Test("automatic: small files from one host run as many at a time as the per-host cap")
    func automaticSmallFiles() {
        var queue = Self.queue(.automatic)
        // Before any probe, each counts as the 8 connections it asks for: two fill the host's 16.
        #expect(Self.submit(1...40, to: &queue) == [.start(1), .start(2)])
        // Probed, the first plans one connection: the others now count as one each, and the host fills with 16.
        let started = queue.probed(1, connections: 1)
        #expect(started == (3...16).map { .start($0) })
        #expect(queue.running.count == 16)
        // The others' probes plan the one connection each was counted for: nothing changes, nothing starts.
        for id in 2...16 { #expect(queue.probed(id, connections: 1) == [], "\(id)") }
        // Each one that finishes lets exactly one more in.
        #expect(queue.finished(1) == [.start(17)])
        // One that plans more than it was counted for holds more of the host: the next finish lets none in.
        #expect(queue.probed(17, connections: 2) == [])
        #expect(queue.finished(2) == [])
        #expect(queue.finished(3) == [.start(18)])
    }

    @Test("automatic: a download submitted after others finished or were probed counts them as they are now")
    func automaticSubmitAfterChanges() {
        var queue = Self.queue(.automatic, perHost: 4)
        #expect(Self.submit(1...4, to: &queue, connections: 1) == [.start(1), .start(2), .start(3), .start(4)])
        #expect(queue.submit(5, host: "a", requestedConnections: 1) == [], "the host is full")
        #expect(queue.finished(1) == [.start(5)])
        #expect(queue.submit(6, host: "a", requestedConnections: 1) == [])
        // Probed at two connections: those not probed yet now count as two each, 2 + 2 + 2 + 2 of the host's 4.
        #expect(queue.probed(2, connections: 2) == [])
        #expect(queue.finished(3) == [])
        #expect(queue.submit(7, host: "b", requestedConnections: 1) == [.start(7)], "another host has room")
        #expect(queue.finished(4) == [])
        #expect(queue.finished(5) == [.start(6)])
        #expect(queue.submit(8, host: "a", requestedConnections: 1) == [])
        #expect(queue.running == [2, 7, 6])
    }

    @Test("automatic: large files from one host run as many as fill the per-host cap with their connections")
    func automaticLargeFiles() {
        var queue = Self.queue(.automatic)
        #expect(Self.submit(1...4, to: &queue) == [.start(1), .start(2)])
        #expect(queue.probed(1, connections: 8) == [])
        #expect(queue.probed(2, connections: 8) == [])
        #expect(queue.finished(1) == [.start(3)])
        // A file too short to split plans one connection, which leaves room for the next.
        #expect(queue.probed(3, connections: 1) == [.start(4)])
    }

    @Test("automatic: a full host lets a download from another host go first; the overall cap stops everything")
    func automaticHosts() {
        var queue = Self.queue(.automatic, connections: 20, perHost: 16)
        #expect(Self.submit(1...3, to: &queue, host: "a") == [.start(1), .start(2)])
        #expect(queue.submit(4, host: "b", requestedConnections: 8) == [.start(4)])
        #expect(queue.running.count == 3, "16 to a and 8 to b: past the overall 20, nothing more starts")
        #expect(queue.submit(5, host: "c", requestedConnections: 1) == [])
        #expect(queue.probed(4, connections: 2) == [.start(5)])
        #expect(queue.waiting == [3])
    }

    @Test("automatic: never more than the ceiling at once, whatever the caps")
    func automaticCeiling() {
        var queue = Self.queue(.automatic, connections: 10_000, perHost: 10_000)
        let ceiling = DownloadManager.Concurrency.automaticCeiling
        #expect(Self.submit(1...(ceiling + 10), to: &queue, connections: 1).count == ceiling)
    }

    @Test("automatic connections count what they hold or aim for, as they grow")
    func automaticConnectionsGrow() {
        var queue = Self.queue(.automatic, perHost: 4)
        #expect(Self.submit(1...3, to: &queue, connections: 1) == [.start(1), .start(2), .start(3)])
        #expect(queue.connections(1, 2) == [], "1 + 2 + 1 fill the host's 4")
        #expect(queue.submit(4, host: "a", requestedConnections: 1) == [])
        #expect(queue.connections(1, 1) == [.start(4)])
    }

    @Test("pausing a waiting download holds it, without touching it; resuming lines it up again in its place")
    func holdWaiting() {
        var queue = Self.queue(.fixed(1))
        _ = Self.submit(1...3, to: &queue)
        #expect(queue.pause(2) == [.hold(2, true)])
        #expect(queue.phase(of: 2) == .held)
        #expect(queue.finished(1) == [.start(3)], "the held one is passed over")
        #expect(queue.resume(2) == [.hold(2, false)])
        #expect(queue.finished(3) == [.start(2)])
    }

    @Test("pausing a running download pauses it, gives its slot to the next, and puts it first in line")
    func pauseRunning() {
        var queue = Self.queue(.fixed(1))
        _ = Self.submit(1...3, to: &queue)
        #expect(queue.pause(1) == [.pause(1), .start(2)])
        #expect(queue.waiting == [1, 3])
        #expect(queue.phase(of: 1) == .paused)
        #expect(queue.resume(1) == [], "resumed, it waits for a slot")
        #expect(queue.finished(2) == [.proceed(1)], "and goes on before the ones behind it")
        #expect(queue.running == [1])
    }

    @Test("pausing a resumed download before it went on keeps it paused, with nothing to tell the download")
    func pauseResuming() {
        var queue = Self.queue(.fixed(1))
        _ = Self.submit(1...2, to: &queue)
        _ = queue.pause(1)
        _ = queue.resume(1)
        #expect(queue.pause(1) == [])
        #expect(queue.finished(2) == [], "still paused: nothing to go on")
        #expect(queue.resume(1) == [.proceed(1)])
    }

    @Test("ordering puts the named downloads in line in that order, in their places; the rest and running ones stay")
    func order() {
        var queue = Self.queue(.fixed(1))
        _ = Self.submit(1...5, to: &queue)
        _ = queue.pause(3)
        // In line: 2, 3 (held), 4, 5. 1 runs and 9 is unknown: both are passed over.
        queue.order([5, 3, 2, 1, 9, 5])
        #expect(queue.waiting == [5, 3, 4, 2])
        #expect(queue.running == [1])
        #expect(queue.finished(1) == [.start(5)], "the one moved first starts first")
        #expect(queue.finished(5) == [.start(4)], "the held one is still passed over")
    }

    @Test("a download submitted paused is held until resumed")
    func submitPaused() {
        var queue = Self.queue(.fixed(3))
        #expect(queue.submit(1, host: "a", requestedConnections: 8, held: true) == [.hold(1, true)])
        #expect(queue.running.isEmpty)
        #expect(queue.resume(1) == [.hold(1, false), .start(1)])
    }

    @Test("cancelling: a waiting or held one ends at once; a running one keeps its slot until it has finished")
    func cancel() {
        var queue = Self.queue(.fixed(1))
        _ = Self.submit(1...4, to: &queue)
        _ = queue.pause(3)
        #expect(queue.cancel(2) == [.end(2, .cancelled)])
        #expect(queue.cancel(3) == [.end(3, .cancelled)])
        #expect(queue.cancel(1, removingPartialFile: true) == [.cancel(1, removingPartialFile: true)])
        #expect(queue.running == [1])
        #expect(queue.resume(1) == [] && queue.pause(1) == [], "an ending download is left to end")
        #expect(queue.finished(1) == [.start(4)])
        #expect(!queue.contains(1) && !queue.contains(2) && !queue.contains(3))
    }

    @Test("a cancelled paused download never goes on, and holds no slot while it winds down")
    func cancelPaused() {
        var queue = Self.queue(.fixed(1))
        _ = Self.submit(1...2, to: &queue)
        _ = queue.pause(1)
        _ = queue.resume(1)
        #expect(queue.cancel(1) == [.cancel(1, removingPartialFile: false)])
        #expect(queue.finished(2) == [])
        #expect(queue.finished(1) == [])
        #expect(queue.isEmpty)
    }

    @Test("interrupting all: started ones are interrupted, the rest end at once in line order, nothing starts again")
    func interruptAll() {
        var queue = Self.queue(.fixed(2))
        _ = Self.submit(1...5, to: &queue)
        _ = queue.pause(1)  // 3 starts in its place
        _ = queue.pause(4)
        #expect(
            queue.interruptAll() == [
                .interrupt(2), .interrupt(3), .interrupt(1), .end(4, .interrupted), .end(5, .interrupted),
            ])
        #expect(queue.finished(2) == [], "nothing starts after")
        #expect(queue.submit(6, host: "a", requestedConnections: 1) == [.end(6, .interrupted)])
        #expect(queue.cancel(3) == [.cancel(3, removingPartialFile: false)])
        _ = queue.finished(1)
        _ = queue.finished(3)
        #expect(queue.isEmpty)
    }

    @Test("raising the count starts more at once; lowering it stops none; switching to automatic fills the caps")
    func changeConcurrency() {
        var queue = Self.queue(.fixed(1))
        _ = Self.submit(1...20, to: &queue, connections: 1)
        #expect(queue.setConcurrency(.fixed(3)) == [.start(2), .start(3)])
        #expect(queue.setConcurrency(.fixed(1)) == [])
        #expect(queue.finished(1) == [], "three ran, one may: none starts until fewer than one run")
        #expect(queue.setConcurrency(.automatic) == (4...17).map { .start($0) })
    }

    @Test("a download submitted twice is queued once")
    func duplicate() {
        var queue = Self.queue(.fixed(1))
        #expect(queue.submit(1, host: "a", requestedConnections: 1) == [.start(1)])
        #expect(queue.submit(1, host: "a", requestedConnections: 1) == [])
        #expect(queue.running == [1] && queue.waiting.isEmpty)
    }
}
