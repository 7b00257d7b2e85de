#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The file name a server proposes in `Content-Disposition` (RFC 6266), made a safe name (`SafeName`).
///
/// The header is untrusted input: the name it gives is reduced to its last path component and made safe by
/// replacement, so the result can never escape the directory it is joined to, nor read as something else.
enum ContentDisposition {
    /// The file name made safe, or nil when the header has none worth using.
    static func filename(from header: String) -> String? {
        guard header.utf8.count <= 4096 else { return nil }
        var plain: String?
        var extended: String?
        for parameter in splitParameters(header).dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let name = parameter[..<equals].trimmingWhitespace().lowercased()
            let value = parameter[parameter.index(after: equals)...].trimmingWhitespace()
            switch name {
            case "filename": plain = unquote(value)
            case "filename*": extended = decodeExtended(value)
            default: continue
            }
        }
        return (extended ?? plain).flatMap { SafeName.lastComponent(of: $0)?.string }
    }

    private static func splitParameters(_ header: String) -> [Substring] {
        var parts: [Substring] = []
        var start = header.startIndex
        var inQuotes = false
        var index = header.startIndex
        while index < header.endIndex {
            let character = header[index]
            if character == "\"" {
                inQuotes.toggle()
            } else if character == "\\" && inQuotes {
                index = header.index(after: index)
                if index == header.endIndex { break }
            } else if character == ";" && !inQuotes {
                parts.append(header[start..<index])
                start = header.index(after: index)
            }
            index = header.index(after: index)
        }
        parts.append(header[start..<header.endIndex])
        return parts
    }

    private static func unquote(_ value: String) -> String {
        guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { return value }
        var result = ""
        var escaped = false
        for character in value.dropFirst().dropLast() {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// Decodes RFC 8187 `charset'language'percent-encoded`; only UTF-8 and ISO-8859-1 are meaningful here.
    private static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        guard charset == "utf-8" || charset == "iso-8859-1", let bytes = percentDecodedBytes(parts[2]) else {
            return nil
        }
        if charset == "utf-8" {
            return String(validating: bytes, as: UTF8.self)
        }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    /// Decodes `%XX` escapes as UTF-8, as in a URL path; nil for a malformed escape or invalid UTF-8.
    static func percentDecoded(_ text: some StringProtocol) -> String? {
        percentDecodedBytes(text).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// The bytes `%XX` escapes stand for, the rest as it is (with `plusAsSpace`, `+` as a space, as in a form);
    /// nil for a malformed escape.
    static func percentDecodedBytes(_ text: some StringProtocol, plusAsSpace: Bool = false) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusAsSpace: bytes.append(UInt8(ascii: " "))
            default: bytes.append(byte)
            }
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
