/// A deterministic stream of bytes of any size that is never stored.
///
/// Tests need multi-gigabyte files whose every byte can be checked, so the bytes are a pure function of
/// `(seed, offset)`: the 8-byte word at index `i` is the `i`-th output of a SplitMix64 generator seeded with
/// `seed`, stored little-endian. Any range is therefore produced in O(range) time from any offset, and two
/// contents differ (almost surely at every word) when their seeds differ.
public struct TestContent: Sendable, Hashable {
    /// Selects which bytes are produced; a different seed gives different bytes and different validators.
    public let seed: UInt64
    /// The length of the representation in bytes.
    public let size: UInt64

    /// Describes a content of `size` bytes generated from `seed`.
    public init(seed: UInt64, size: UInt64) {
        self.seed = seed
        self.size = size
    }

    /// Fills `buffer` with the bytes starting at `offset`.
    ///
    /// The stream is defined past `size` too, so a misbehaving server can send "more than promised" bytes
    /// that still come from the same generator.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer, from offset: UInt64) {
        var position = offset
        var index = 0
        while index < buffer.count {
            let word = Self.word(seed: seed, index: position / 8)
            let skip = Int(position % 8)
            let count = min(8 - skip, buffer.count - index)
            if count == 8 {
                buffer.storeBytes(of: word.littleEndian, toByteOffset: index, as: UInt64.self)
            } else {
                for byte in 0..<count {
                    buffer[index + byte] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(skip + byte)))
                }
            }
            index += count
            position += UInt64(count)
        }
    }

    /// The bytes in `range`, for comparisons in tests; `range` may extend past `size` like ``fill(_:from:)``.
    public func bytes(in range: Range<UInt64>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Int(range.count)) { buffer, initializedCount in
            fill(UnsafeMutableRawBufferPointer(buffer), from: range.lowerBound)
            initializedCount = buffer.count
        }
    }

    /// The `index`-th output of SplitMix64 seeded with `seed`: one add and a finalising mix, so any word is
    /// reachable without generating the ones before it.
    static func word(seed: UInt64, index: UInt64) -> UInt64 {
        var z = seed &+ (index &+ 1) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
