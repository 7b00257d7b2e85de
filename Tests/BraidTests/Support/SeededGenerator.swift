@testable import Braid

/// The library's SplitMix64: a small deterministic generator, so a failing fuzz case reproduces on every run
/// and machine.
typealias SeededGenerator = SplitMix64

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
