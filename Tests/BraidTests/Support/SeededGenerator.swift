/// SplitMix64: a small deterministic generator, so a failing fuzz case reproduces on every run and machine.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SeededGenerator {
    /// `count` bytes of deterministic noise.
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    /// A copy of `text` with a few random edits: bytes replaced, inserted, deleted, or a slice duplicated.
    mutating func mutate(_ text: String, alphabet: [UInt8]) -> String {
        var bytes = Array(text.utf8)
        for _ in 0..<Int.random(in: 1...4, using: &self) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &self)
            let byte =
                Bool.random(using: &self)
                ? alphabet.randomElement(using: &self)! : UInt8.random(in: 0...255, using: &self)
            switch Int.random(in: 0..<4, using: &self) {
            case 0 where !bytes.isEmpty: bytes[position] = byte
            case 1: bytes.insert(byte, at: position)
            case 2 where !bytes.isEmpty: bytes.remove(at: position)
            default:
                let end = min(bytes.count, position + Int.random(in: 0...8, using: &self))
                bytes.insert(contentsOf: bytes[position..<end], at: position)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
