import Testing

@testable import Braid

/// The lifecycle is a pure value: each test walks a download through its stages as `DownloadJob` does.
@Suite("DownloadLifecycle")
struct DownloadLifecycleTests {
    /// A lifecycle that has probed and prepared, and is transferring.
    static func transferring() -> DownloadLifecycle {
        var lifecycle = DownloadLifecycle()
        lifecycle.advance()
        lifecycle.advance()
        return lifecycle
    }

    @Test("A download goes probing → preparing → transferring → verifying → committing → finished")
    func happyPath() {
        var lifecycle = DownloadLifecycle()
        var stages = [lifecycle.stage]
        for _ in 0..<5 {
            lifecycle.advance()
            stages.append(lifecycle.stage)
        }
        #expect(stages == [.probing, .preparing, .transferring, .verifying, .committing, .finished])
        #expect(lifecycle.restarts == 0)
    }

    @Test("A file already complete at the destination finishes from preparing, with nothing transferred")
    func alreadyComplete() {
        var lifecycle = DownloadLifecycle()
        lifecycle.advance()
        lifecycle.alreadyComplete()
        #expect(lifecycle.stage == .finished)
    }

    @Test("A conditional probe answered 304 finishes from probing: the local copy is up to date")
    func notModified() {
        var lifecycle = DownloadLifecycle()
        lifecycle.notModified()
        #expect(lifecycle.stage == .finished)
    }

    @Test("A measured transfer finishes without verifying or committing")
    func measured() {
        var lifecycle = Self.transferring()
        lifecycle.measured()
        #expect(lifecycle.stage == .finished)
    }

    @Test("A pause waits, then probes the server anew")
    func pauseProbesAgain() {
        var lifecycle = Self.transferring()
        lifecycle.paused()
        #expect(lifecycle.stage == .paused)
        lifecycle.advance()
        #expect(lifecycle.stage == .probing)
        #expect(lifecycle.restarts == 0, "a pause is not a restart")
    }

    @Test("A changed remote file restarts from the probe, keeping ranges and trusting HEAD")
    func remoteChanged() throws {
        var lifecycle = Self.transferring()
        let notice = try lifecycle.restart(.remoteChanged("the file on the server changed"))
        #expect(notice == "the file on the server changed; discarding the partial download and starting again")
        #expect(lifecycle.stage == .probing)
        #expect(lifecycle.restarts == 1)
        #expect(!lifecycle.forcesSingleStream)
        #expect(!lifecycle.distrustsHead)
    }

    @Test("Ignored ranges make every later attempt a single stream")
    func rangesIgnored() throws {
        var lifecycle = Self.transferring()
        #expect(try lifecycle.restart(.rangesIgnored).contains("single stream"))
        #expect(lifecycle.forcesSingleStream)
        lifecycle.advance()
        lifecycle.advance()
        _ = try lifecycle.restart(.remoteChanged("changed"))
        #expect(lifecycle.forcesSingleStream, "a later restart does not forget the server ignores ranges")
    }

    @Test("A Content-Range that contradicts HEAD makes later probes use a ranged GET")
    func lengthDisagrees() throws {
        var lifecycle = Self.transferring()
        #expect(try lifecycle.restart(.lengthDisagrees("HEAD said 10")).hasSuffix("probing again with a range request"))
        #expect(lifecycle.distrustsHead)
        #expect(!lifecycle.forcesSingleStream)
    }

    @Test("After three restarts the fourth gives up with a protocol error naming the reason")
    func givesUp() throws {
        var lifecycle = DownloadLifecycle()
        for _ in 0..<DownloadLifecycle.maximumRestarts {
            lifecycle.advance()
            lifecycle.advance()
            _ = try lifecycle.restart(.remoteChanged("changed"))
        }
        lifecycle.advance()
        lifecycle.advance()
        let error = #expect(throws: BraidError.self) { try lifecycle.restart(.remoteChanged("changed again")) }
        #expect(error?.code == .protocolViolation)
        #expect(error?.message.hasSuffix("gave up after 3 restarts") == true)
    }

    @Test("What transfers cost adds up across pauses and restarts; the time to first byte is the first one's")
    func spentAddsUp() {
        var lifecycle = DownloadLifecycle()
        lifecycle.record(TransferMachine.Statistics(fetchedBytes: 100, retries: 1, timeToFirstByte: nil))
        lifecycle.record(TransferMachine.Statistics(fetchedBytes: 50, retries: 0, timeToFirstByte: 0.2))
        lifecycle.record(TransferMachine.Statistics(fetchedBytes: 25, retries: 2, timeToFirstByte: 0.1))
        #expect(lifecycle.spent == TransferMachine.Statistics(fetchedBytes: 175, retries: 3, timeToFirstByte: 0.2))
    }
}
