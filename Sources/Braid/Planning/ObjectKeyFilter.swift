/// Which objects below a prefix to download: glob patterns matched against each key with the prefix removed
/// (`config.json`, `onnx/model.onnx`), as `s5cmd` and `huggingface-cli` take `--include` and `--exclude`.
///
/// A key is kept when it matches at least one include (or there are none) and no exclude: an exclude wins,
/// whatever the order the patterns were given in. (`aws s3` lets the later pattern win instead; here the order
/// does not matter.)
///
/// Patterns are fnmatch's without `FNM_PATHNAME`, as Python's `fnmatch` (which `huggingface-cli` uses) reads them:
/// `*` matches any run of characters, `/` included, so `*.json` matches `config.json` and `onnx/config.json`; `**`
/// is the same as `*`; `?` matches one character; `[abc]`, `[a-z]` and `[!abc]` (or `[^abc]`) match one character
/// of a set or outside it; `\` makes the next character literal. Characters are Unicode scalars.
public struct ObjectKeyFilter: Sendable, Equatable {
    /// Keys to download; empty for all of them.
    public var includes: [String]
    /// Keys not to download, even when an include matches them.
    public var excludes: [String]

    public init(includes: [String] = [], excludes: [String] = []) {
        self.includes = includes
        self.excludes = excludes
    }

    /// Whether the object whose key, without the prefix, is `relativeKey` is to be downloaded.
    public func keeps(_ relativeKey: String) -> Bool {
        let key = Array(relativeKey.unicodeScalars)
        if excludes.contains(where: { Self.matches(pattern: Array($0.unicodeScalars), key) }) { return false }
        return includes.isEmpty || includes.contains { Self.matches(pattern: Array($0.unicodeScalars), key) }
    }

    /// Refuses an empty pattern and one with an unclosed `[`, which would otherwise match nothing without a word.
    public func validate() throws(BraidError) {
        for pattern in includes + excludes {
            guard !pattern.isEmpty else { throw .usage("an include or exclude pattern is empty", option: .objectStore) }
            guard Self.isWellFormed(Array(pattern.unicodeScalars)) else {
                throw .usage("the pattern '\(pattern)' has a '[' without its ']'", option: .objectStore)
            }
        }
    }

    /// Matches with one remembered `*` to fall back to, the classic iterative algorithm: at most the product of the
    /// two lengths, whatever the pattern (a recursive matcher is exponential on `*a*a*a*…b`).
    static func matches(pattern: [Unicode.Scalar], _ key: [Unicode.Scalar]) -> Bool {
        var p = 0
        var k = 0
        var star: (pattern: Int, key: Int)?
        while k < key.count {
            if p < pattern.count, pattern[p] == "*" {
                while p < pattern.count, pattern[p] == "*" { p += 1 }
                star = (p, k)
                continue
            }
            if p < pattern.count, let length = matchOne(pattern, at: p, key[k]) {
                p += length
                k += 1
                continue
            }
            guard let last = star else { return false }
            star = (last.pattern, last.key + 1)
            p = last.pattern
            k = last.key + 1
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }

    /// How many pattern scalars at `index` matched `scalar` (one, two for `\x`, a whole `[…]`); nil for no match.
    private static func matchOne(_ pattern: [Unicode.Scalar], at index: Int, _ scalar: Unicode.Scalar) -> Int? {
        switch pattern[index] {
        case "?":
            return 1
        case "\\" where index + 1 < pattern.count:
            return pattern[index + 1] == scalar ? 2 : nil
        case "[":
            guard let (matched, length) = matchClass(pattern, at: index, scalar) else {
                return scalar == "[" ? 1 : nil
            }
            return matched ? length : nil
        default:
            return pattern[index] == scalar ? 1 : nil
        }
    }

    /// Whether `scalar` is in the class starting at `index` (`[`), and the class's length; nil when the `[` has no
    /// `]` (then it is a literal `[`). A `]` right after `[` or `[!` belongs to the set, as fnmatch reads it.
    private static func matchClass(
        _ pattern: [Unicode.Scalar], at index: Int, _ scalar: Unicode.Scalar
    ) -> (Bool, Int)? {
        var i = index + 1
        let negated = i < pattern.count && (pattern[i] == "!" || pattern[i] == "^")
        if negated { i += 1 }
        var matched = false
        var first = true
        while i < pattern.count {
            var low = pattern[i]
            if low == "]" && !first { return (matched != negated, i - index + 1) }
            first = false
            if low == "\\", i + 1 < pattern.count {
                i += 1
                low = pattern[i]
            }
            var high = low
            if i + 2 < pattern.count, pattern[i + 1] == "-", pattern[i + 2] != "]" {
                high = pattern[i + 2]
                i += 2
                if high == "\\", i + 1 < pattern.count {
                    i += 1
                    high = pattern[i]
                }
            }
            if low.value <= scalar.value && scalar.value <= high.value { matched = true }
            i += 1
        }
        return nil
    }

    private static func isWellFormed(_ pattern: [Unicode.Scalar]) -> Bool {
        var index = 0
        while index < pattern.count {
            switch pattern[index] {
            case "\\": index += 2
            case "[":
                guard let (_, length) = matchClass(pattern, at: index, "a") else { return false }
                index += length
            default: index += 1
            }
        }
        return true
    }
}
