@testable import Braid

/// The library's SplitMix64: a failing property case reproduces on every run and machine.
typealias SeededGenerator = SplitMix64
