import Testing

@testable import Braid

/// The rate shown while a download runs (the command line's status line, the daemon's `downloadSpeed`): no rate
/// until it is worked out over `SpeedMeter.minimumSpan`, then bytes over the last few seconds.
@Suite("speed meter")
struct SpeedMeterTests {
    @Test("the first bytes over the first milliseconds are no rate: zero until the samples span minimumSpan")
    func zeroUntilMinimumSpan() {
        var meter = SpeedMeter()
        meter.reset(bytes: 0, at: 10)
        meter.record(bytes: 1768, at: 10.000_000_5)
        #expect(meter.bytesPerSecond == 0)
        meter.record(bytes: 64 << 10, at: 10 + SpeedMeter.minimumSpan / 2)
        #expect(meter.bytesPerSecond == 0)
        meter.record(bytes: 1 << 20, at: 11)
        #expect(meter.bytesPerSecond == Double(1 << 20))
    }

    @Test("past the window, the rate is that of the last few seconds")
    func windowed() {
        var meter = SpeedMeter(window: 3)
        meter.reset(bytes: 0, at: 0)
        for second in 1...10 { meter.record(bytes: Int64(second) * (second <= 5 ? 100 : 1000), at: Double(second)) }
        // Samples from 7 s on: 7,000 bytes at 7 s to 10,000 at 10 s.
        #expect(meter.bytesPerSecond == 1000)
    }

    @Test("a file read whole in one request shows no rate before minimumSpan, then bytes over seconds")
    func oneRequest() {
        #expect(DownloadProgress.oneRequest(received: 1768, of: 1768, seconds: 0.000_000_23).bytesPerSecond == 0)
        #expect(DownloadProgress.oneRequest(received: 1768, of: 1768, seconds: 0).bytesPerSecond == 0)
        let progress = DownloadProgress.oneRequest(received: 1 << 20, of: 2 << 20, seconds: 2)
        #expect(progress.bytesPerSecond == Double(512 << 10))
    }
}
