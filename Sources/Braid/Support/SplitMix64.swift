/// A small, seedable generator (SplitMix64), so that a run that depends on chance (the jitter of retry delays)
/// can be replayed exactly, in tests above all (the daemon's fuzz test seeds its mutations with it too).
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0...1.
    package mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}
