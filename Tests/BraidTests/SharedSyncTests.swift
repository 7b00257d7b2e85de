import BraidTestSupport
import Synchronization
import Testing

@testable import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// Directory syncs shared by the downloads of a list (`OpenDirectory.synchronize()`): each caller returns only after
/// a flush that started after it asked, and the callers that ask during one flush share the next.
@Suite("shared sync")
struct SharedSyncTests {
    /// A flush that counts itself and then holds until the test lets it end.
    final class HeldFlush: Sendable {
        let started = Mutex(0)
        let allowed = Mutex(0)
        /// The calls of `perform` that came back.
        let returned = Mutex(0)

        func run() {
            let number = started.withLock { started in
                started += 1
                return started
            }
            // The test lets flushes end one at a time, by number; a short poll, not a wait for timing.
            while allowed.withLock({ $0 }) < number { usleep(200) }
        }

        func allow(_ number: Int) { allowed.withLock { $0 = number } }
    }

    /// Calls `perform` on a thread of its own, which ends with the call.
    static func call(_ sync: SharedSync, _ flush: HeldFlush) -> WorkerThread {
        let thread = WorkerThread {
            sync.perform { flush.run() }
            flush.returned.withLock { $0 += 1 }
        }
        thread.start()
        return thread
    }

    static let patience = Duration.seconds(60)

    @Test("A caller never takes a flush that ended before it asked")
    func sequentialCallersFlushEachTime() {
        let sync = SharedSync()
        let count = Mutex(0)
        for _ in 0..<3 { sync.perform { count.withLock { $0 += 1 } } }
        #expect(count.withLock { $0 } == 3)
    }

    @Test("Callers that ask while a flush is under way wait for the next one, which they share")
    func callersDuringAFlushShareTheNext() async throws {
        let sync = SharedSync()
        let flush = HeldFlush()
        var threads = [Self.call(sync, flush)]
        try await Polling.until("the first flush to start", timeout: Self.patience) {
            flush.started.withLock { $0 } == 1
        }
        for _ in 0..<3 { threads.append(Self.call(sync, flush)) }
        try await Polling.until("three callers to wait", timeout: Self.patience) { sync.waiting == 3 }

        flush.allow(1)
        try await Polling.until("the second flush to start", timeout: Self.patience) {
            flush.started.withLock { $0 } == 2
        }
        // The first flush began before the others asked: it answers only its own caller.
        try await Polling.until("the first caller to return", timeout: Self.patience) {
            flush.returned.withLock { $0 } == 1
        }
        #expect(sync.waiting == 2)

        flush.allow(2)
        try await Polling.until("every caller to return", timeout: Self.patience) {
            flush.returned.withLock { $0 } == 4
        }
        for thread in threads { thread.join() }
        #expect(flush.started.withLock { $0 } == 2)
    }
}
