import Testing

@testable import Braid

@Suite("TokenBucket and RateLimiter")
struct TokenBucketTests {
    static let mebibyte: Int64 = 1 << 20

    @Test("a limited bucket starts empty, then fills at its rate up to a twentieth of a second's worth")
    func fillsAtItsRate() {
        var bucket = TokenBucket(rate: Self.mebibyte, now: 100)
        #expect(!bucket.isOpen, "no burst at the start")
        bucket.refill(now: 100.01)
        #expect(abs(bucket.level - Double(Self.mebibyte) * 0.01) < 1)
        #expect(bucket.isOpen)
        bucket.refill(now: 200)
        #expect(bucket.level == Double(Self.mebibyte) / 20, "capped at the burst")
    }

    @Test("a chunk is taken whole on credit, and the debt is paid back before the next one")
    func chunkOnCredit() {
        var bucket = TokenBucket(rate: 100 << 10, now: 0)
        bucket.refill(now: 0.01)
        #expect(bucket.isOpen)
        bucket.take(64 << 10, now: 0.01)
        #expect(bucket.level < 0)
        #expect(!bucket.isOpen)
        let wait = bucket.secondsUntil(holding: 1)
        #expect(abs(wait - (1 - bucket.level) / Double(100 << 10)) < 1e-9)
        bucket.refill(now: 0.01 + wait * 0.99)
        #expect(!bucket.isOpen)
        bucket.refill(now: 0.01 + wait * 1.01)
        #expect(bucket.isOpen)
    }

    @Test("no rate takes everything; a rate set later holds from then on; nil lifts it at once")
    func changesLive() {
        var bucket = TokenBucket(rate: nil, now: 0)
        bucket.take(1 << 30, now: 0)
        #expect(bucket.isOpen && bucket.secondsUntil(holding: 1_048_576) == 0)
        bucket.setRate(Self.mebibyte, now: 1)
        bucket.take(128 << 10, now: 1.001)
        #expect(!bucket.isOpen, "limited from the change on")
        bucket.setRate(nil, now: 1.002)
        #expect(bucket.isOpen)
        bucket.setRate(0, now: 1.003)
        #expect(bucket.rate == nil, "zero is no limit")
    }

    /// Eight greedy connections, served in turn as the engine serves them, each taking 128 KiB chunks whenever the
    /// bucket is open: every second gets the rate within 5 %, and every connection gets some of it.
    @Test("greedy connections get the rate second by second, and none starves", arguments: [4 << 20, 512 << 10])
    func holdsPerSecond(rate: Int) {
        var bucket = TokenBucket(rate: Int64(rate), now: 0)
        let connections = 8
        let chunk = 128 << 10
        var perSecond = [Int](repeating: 0, count: 20)
        var perConnection = [[Int]](repeating: [Int](repeating: 0, count: connections), count: 20)
        var cursor = 0
        var now = 0.0
        while now < 20 {
            bucket.refill(now: now)
            for offset in 0..<connections where bucket.isOpen {
                let connection = (cursor + offset) % connections
                bucket.take(chunk, now: now)
                perSecond[Int(now)] += chunk
                perConnection[Int(now)][connection] += chunk
                cursor = (connection + 1) % connections
            }
            now += max(0.001, bucket.secondsUntil(holding: max(8192, Double(rate) / 100)))
        }
        for second in 1..<20 {
            let deviation = Double(perSecond[second]) / Double(rate) - 1
            #expect(abs(deviation) <= 0.05, "second \(second): \(deviation)")
        }
        // At 512 KiB/s eight connections share four chunks a second: over any two seconds each gets one.
        for second in stride(from: 2, to: 20, by: 2) {
            let share = zip(perConnection[second], perConnection[second + 1]).map { $0 + $1 }
            #expect(share.allSatisfy { $0 > 0 }, "second \(second): \(share)")
        }
    }

    @Test("a download's bytes count against its manager's overall limit too")
    func chain() {
        let start = TransferEngine.now()
        let overall = RateLimiter(rate: Self.mebibyte)
        let download = RateLimiter(rate: nil, parent: overall)
        #expect(download.effectiveRate == Self.mebibyte)
        #expect(!download.mayReceive(now: start), "the overall limit starts empty")
        #expect(download.mayReceive(now: start + 0.02))
        download.took(1 << 20, now: start + 0.02)
        #expect(!overall.mayReceive(now: start + 0.03), "the download's bytes were counted by the manager")
        #expect(download.secondsUntil(holding: 1, now: start + 0.03) > 0.9)
        overall.rate = nil
        #expect(download.mayReceive(now: start + 0.04), "lifted while running")
        download.rate = 2 * Self.mebibyte
        #expect(download.effectiveRate == 2 * Self.mebibyte)
    }

    @Test("admitting a chunk counts it against the whole chain, and a closed parent admits nothing")
    func admit() {
        let start = TransferEngine.now()
        let overall = RateLimiter(rate: Self.mebibyte)
        let download = RateLimiter(rate: nil, parent: overall)
        #expect(!download.admit(1000, now: start), "the overall limit starts empty")
        #expect(download.admit(1 << 20, now: start + 0.02))
        #expect(!overall.mayReceive(now: start + 0.03), "the manager counted the download's chunk")
        #expect(!download.admit(1000, now: start + 0.03))
        let alone = RateLimiter(rate: nil)
        #expect(alone.admit(1 << 30, now: start), "no limit admits everything")
    }

    @Test(
        "rates are written as curl and aria2 take them",
        arguments: [
            ("512K", Int64(512 << 10)), ("10M", 10 << 20), ("1.5G", 3 << 29), ("4m/s", 4 << 20), ("2MiB", 2 << 20),
            ("1000", 1000),
        ])
    func parsesRates(text: String, bytes: Int64) throws {
        #expect(try ByteCount.rate(text) == bytes)
    }

    @Test("zero is no limit; anything else that is not a rate is refused, naming the option")
    func refusesNonRates() throws {
        #expect(try ByteCount.rate("0") == nil)
        for text in ["fast", "-1M", "", "1.2.3M", "99999999T", "1e9"] {
            #expect(throws: BraidError.self, "\(text)") { try ByteCount.rate(text) }
            #expect((try? ByteCount.rate(text)) == nil)
            do {
                _ = try ByteCount.rate(text)
            } catch {
                #expect(error.option == .rateLimit && error.code == .usage)
            }
        }
    }
}
