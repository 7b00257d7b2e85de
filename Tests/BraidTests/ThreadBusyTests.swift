import CLinuxIO
import Foundation
import Testing

/// What `-n auto` is told of its reading thread: the kernel's count of the seconds it was busy (running on a CPU),
/// which grows while it computes and not while it sleeps.
@Suite("The reading thread's busy time")
struct ThreadBusyTests {
    @Test("it grows by the CPU time a thread uses, and hardly while the thread sleeps")
    func busyAndAsleep() throws {
        let start = braid_thread_busy_seconds()
        try #require(start >= 0, "the thread's CPU clock is readable")
        // Work until the thread's own CPU clock says 50 ms were used: at least that much was busy.
        var used = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used)
        let cpuStart = Double(used.tv_sec) + Double(used.tv_nsec) / 1e9
        var spins = 0
        repeat {
            spins &+= 1
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used)
        } while Double(used.tv_sec) + Double(used.tv_nsec) / 1e9 - cpuStart < 0.05
        let afterWork = braid_thread_busy_seconds()
        #expect(afterWork - start >= 0.049, "busy \(afterWork - start) s after 50 ms of CPU (\(spins) spins)")
        // Asleep for 0.2 s: the thread does not run.
        usleep(200_000)
        let afterSleep = braid_thread_busy_seconds()
        #expect(afterSleep - afterWork < 0.05, "busy \(afterSleep - afterWork) s of a 0.2 s sleep")
    }
}
