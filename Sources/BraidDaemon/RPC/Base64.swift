/// aria2's RPC carries bytes as base64: the GET form's `params`, and `addMetalink`'s document.
enum Base64 {
    /// Base64 (standard `+/` or URL-safe `-_` alphabet, `=` padding optional) decoded; nil when it is not base64.
    static func decoded(_ text: [UInt8]) -> [UInt8]? {
        var symbols = text[...]
        while symbols.last == UInt8(ascii: "=") { symbols.removeLast() }
        guard text.count - symbols.count <= 2, symbols.count % 4 != 1 else { return nil }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(symbols.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for symbol in symbols {
            guard let value = sextet(symbol) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                decoded.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return decoded
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
