import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("ChildProcess")
struct ChildProcessTests {
    @Test("run returns the exit code and both output streams")
    func runCapturesOutput() async throws {
        let result = try await ChildProcess.run("sh", ["-c", "echo to-stdout; echo to-stderr >&2; exit 3"])
        #expect(result.status == .exited(3))
        #expect(!result.status.isSuccess)
        #expect(result.standardOutput == "to-stdout\n")
        #expect(result.standardError == "to-stderr\n")
    }

    @Test("output far larger than a pipe buffer does not stall the child")
    func largeOutput() async throws {
        let result = try await ChildProcess.run("head", ["-c", "5000000", "/dev/zero"], timeout: .seconds(30))
        #expect(result.status.isSuccess)
        #expect(result.standardOutput.utf8.count == 5_000_000)
    }

    @Test("an explicit environment replaces the inherited one")
    func environment() async throws {
        let result = try await ChildProcess.run(
            "/bin/sh",
            ["-c", "echo \"$BRAID_FIXTURE_VALUE-${HOME:-unset}\""],
            environment: ["BRAID_FIXTURE_VALUE": "42"]
        )
        #expect(result.standardOutput == "42-unset\n")
    }

    @Test("a signal sent mid-run is reported as the cause of death", arguments: [SIGINT, SIGTERM, SIGKILL])
    func signalTermination(signal: Int32) async throws {
        let child = try ChildProcess("sleep", ["600"])
        #expect(child.status == nil)
        child.send(signal)
        #expect(try await child.waitForExit(timeout: .seconds(10)) == .signalled(signal))
    }

    @Test("a child in a process group of its own takes a group signal with its children, as on Ctrl-C")
    func processGroup() async throws {
        // A sleep far longer than the test, so that a test held up on a busy machine still finds it running;
        // the group is killed however the test ends.
        let child = try ChildProcess("sh", ["-c", "sleep 600 & echo $! >&2; wait"], newProcessGroup: true)
        defer {
            child.sendToGroup(SIGKILL)
            child.stop(signal: SIGKILL)
        }
        try await child.waitUntil("the shell to start its sleep", timeout: .seconds(10)) {
            child.standardError.hasSuffix("\n")
        }
        let sleeper = try #require(pid_t(child.standardError.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(getpgid(child.processIdentifier) == child.processIdentifier)
        #expect(getpgid(sleeper) == child.processIdentifier)

        child.sendToGroup(SIGTERM)

        #expect(try await child.waitForExit(timeout: .seconds(10)) == .signalled(SIGTERM))
        try await Polling.until("the sleep to be gone", timeout: .seconds(10)) { !ProcessTable.isRunning(sleeper) }
    }

    @Test("waitUntil returns once stderr says so, and the child is still running")
    func waitForStandardError() async throws {
        let child = try ChildProcess("sh", ["-c", "echo starting >&2; sleep 0.2; echo ready >&2; exec sleep 600"])
        try await child.waitUntilStandardError(contains: "ready", timeout: .seconds(10))
        #expect(child.status == nil)
        #expect(child.standardError == "starting\nready\n")
        #expect(child.stop() == .signalled(SIGTERM))
    }

    @Test("waitUntil can watch a file the child writes")
    func waitForFileSize() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("growing")
        let child = try ChildProcess("sh", ["-c", "head -c 100000 /dev/zero > \"$0\"; exec sleep 600", file.path])
        defer { child.stop(signal: SIGKILL) }
        try await child.waitUntil("the file to reach 100000 bytes", timeout: .seconds(10)) {
            let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
            return (attributes?[.size] as? Int ?? 0) >= 100_000
        }
        #expect(child.status == nil)
    }

    @Test("a child that exits first fails the wait at once instead of at the deadline")
    func exitBeforeCondition() async throws {
        let child = try ChildProcess("sh", ["-c", "echo giving up >&2; exit 2"])
        let started = ContinuousClock.now
        await #expect(throws: TestSupportError.self) {
            try await child.waitUntilStandardError(contains: "never printed", timeout: .seconds(120))
        }
        // Far from the deadline even on a machine so loaded that the waiting task runs late.
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(child.status == .exited(2))
    }

    @Test("a wait past its deadline throws and leaves the child to the caller")
    func waitTimesOut() async throws {
        let child = try ChildProcess("sleep", ["600"])
        await #expect(throws: TestSupportError.self) {
            try await child.waitForExit(timeout: .milliseconds(100))
        }
        #expect(child.status == nil)
        #expect(child.stop(signal: SIGINT) == .signalled(SIGINT))
    }

    @Test("stop escalates to SIGKILL when the child ignores the polite signal")
    func stopEscalates() async throws {
        // A sleep far longer than the test, so that a test held up on a busy machine still finds it running: the
        // stop ends it.
        let child = try ChildProcess("sh", ["-c", "trap '' TERM; echo trapped >&2; exec sleep 600"])
        try await child.waitUntilStandardError(contains: "trapped", timeout: .seconds(10))
        #expect(child.stop(signal: SIGTERM, gracePeriod: .milliseconds(200)) == .signalled(SIGKILL))
    }

    @Test("an unknown program is reported by name")
    func missingExecutable() {
        #expect(throws: TestSupportError.self) {
            try ChildProcess("braid-no-such-program")
        }
    }
}
