/// How many bytes may be received now, for a rate limit: tokens accrue at `rate` bytes a second up to `burst`,
/// and each chunk received takes its size.
///
/// A chunk is taken whole while any token is left, so the level can go below zero by up to one chunk; that debt
/// is paid back before the next chunk. Over any span the bytes taken are therefore `rate × span`, give or take
/// `burst` plus one chunk, which is what keeps a limit within a few per cent second by second. Time is passed in,
/// so the bucket is tested without a clock.
struct TokenBucket: Equatable, Sendable {
    /// Bytes a second; nil for no limit.
    private(set) var rate: Int64?
    /// Tokens in hand; negative while a chunk taken on credit is paid back.
    private(set) var level: Double = 0
    private var updatedAt: Double

    /// Starts empty, so a limited transfer does not begin with a burst.
    init(rate: Int64?, now: Double) {
        self.rate = rate.flatMap { $0 > 0 ? $0 : nil }
        updatedAt = now
    }

    /// The most tokens the bucket holds: a twentieth of a second's worth, and at least 16 KiB so a low limit still
    /// lets whole chunks through.
    var burst: Double {
        guard let rate else { return .infinity }
        return max(Double(16 << 10), Double(rate) / 20)
    }

    /// Whether a chunk may be taken now.
    var isOpen: Bool { rate == nil || level > 0 }

    mutating func refill(now: Double) {
        defer { updatedAt = max(updatedAt, now) }
        guard let rate, now > updatedAt else { return }
        level = min(burst, level + Double(rate) * (now - updatedAt))
    }

    /// Takes `count` bytes' worth of tokens, on credit if need be.
    mutating func take(_ count: Int, now: Double) {
        refill(now: now)
        guard rate != nil else { return }
        level -= Double(count)
    }

    /// Seconds until the bucket holds `amount` tokens (0 when it already does, or has no limit).
    func secondsUntil(holding amount: Double) -> Double {
        guard let rate, level < amount else { return 0 }
        return (min(amount, burst) - level) / Double(rate)
    }

    /// Changes the rate from `now` on; what accrued until now stays, within the new burst.
    mutating func setRate(_ newRate: Int64?, now: Double) {
        refill(now: now)
        rate = newRate.flatMap { $0 > 0 ? $0 : nil }
        level = rate == nil ? 0 : min(level, burst)
    }
}
