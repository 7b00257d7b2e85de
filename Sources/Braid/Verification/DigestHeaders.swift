#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads the digests a server offers for the whole representation: `Content-MD5` (RFC 1864), `Digest`
/// (RFC 3230) and `Repr-Digest` (RFC 9530). Values that do not decode to the algorithm's length are ignored:
/// a malformed header must not make a good download fail, nor a bad one pass.
enum DigestHeaders {
    /// Every well-formed digest the headers carry.
    ///
    /// - Parameter isPartialResponse: `Content-MD5` describes the body actually sent, so it is ignored on a 206.
    static func digests(in headers: ResponseHeaders, isPartialResponse: Bool) -> [ExpectedDigest] {
        var found: [ExpectedDigest] = []
        if !isPartialResponse, let value = headers["content-md5"], let bytes = decodeBase64(value, length: 16) {
            found.append(ExpectedDigest(algorithm: .md5, bytes: bytes, source: .contentMD5))
        }
        if let value = headers["digest"] {
            found += parseDigest(value)
        }
        if let value = headers["repr-digest"] {
            found += parseReprDigest(value)
        }
        return found
    }

    /// The digest to verify against: the strongest algorithm offered.
    static func preferred(_ digests: [ExpectedDigest]) -> ExpectedDigest? {
        digests.max { $0.algorithm.strength < $1.algorithm.strength }
    }

    /// `Digest: md5=<base64>, SHA-256=<base64>` — algorithm names are case-insensitive.
    static func parseDigest(_ value: String) -> [ExpectedDigest] {
        guard value.utf8.count <= 8192 else { return [] }
        return value.split(separator: ",").compactMap { member in
            guard let equals = member.firstIndex(of: "=") else { return nil }
            let name = member[..<equals].trimmingWhitespace()
            let encoded = member[member.index(after: equals)...].trimmingWhitespace()
            guard let algorithm = DigestAlgorithm(name: name),
                let bytes = decodeBase64(encoded, length: algorithm.byteCount)
            else { return nil }
            return ExpectedDigest(algorithm: algorithm, bytes: bytes, source: .digestHeader)
        }
    }

    /// `Repr-Digest: sha-256=:<base64>:` — a structured-field dictionary of byte sequences (RFC 8941).
    static func parseReprDigest(_ value: String) -> [ExpectedDigest] {
        guard value.utf8.count <= 8192 else { return [] }
        return value.split(separator: ",").compactMap { member in
            guard let equals = member.firstIndex(of: "=") else { return nil }
            let name = member[..<equals].trimmingWhitespace()
            var item = member[member.index(after: equals)...].trimmingWhitespace()
            if let semicolon = item.firstIndex(of: ";") { item = String(item[..<semicolon]) }
            guard item.count >= 2, item.hasPrefix(":"), item.hasSuffix(":"),
                let algorithm = DigestAlgorithm(name: name),
                let bytes = decodeBase64(String(item.dropFirst().dropLast()), length: algorithm.byteCount)
            else { return nil }
            return ExpectedDigest(algorithm: algorithm, bytes: bytes, source: .reprDigestHeader)
        }
    }

    private static func decodeBase64(_ text: String, length: Int) -> [UInt8]? {
        guard text.utf8.count <= 256, let data = Data(base64Encoded: text.trimmingWhitespace()),
            data.count == length
        else { return nil }
        return [UInt8](data)
    }
}
