#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads the digests a server offers for the whole representation: `Content-MD5` (RFC 1864), `Digest`
/// (RFC 3230), `Repr-Digest` (RFC 9530), and those the object stores send: Google Cloud Storage's `x-goog-hash`,
/// Amazon S3's full-object `x-amz-checksum-*` and the `ETag` of an S3 single-part upload. Values that do not
/// decode to the algorithm's length are ignored: a malformed header must not make a good download fail, nor a bad
/// one pass.
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
        if let value = headers["x-goog-hash"] {
            found += parseGoogHash(value)
        }
        found += amazonChecksums(in: headers)
        if let digest = amazonEntityTag(in: headers) {
            found.append(digest)
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
    static func parseReprDigest(_ value: String, source: ExpectedDigest.Source = .reprDigestHeader) -> [ExpectedDigest]
    {
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
            return ExpectedDigest(algorithm: algorithm, bytes: bytes, source: source)
        }
    }

    /// `Content-Digest: sha-256=:<base64>:` (RFC 9530), the same syntax as `Repr-Digest`, but of the content the
    /// response carries: on a `206`, of the range only.
    static func parseContentDigest(_ value: String) -> [ExpectedDigest] {
        parseReprDigest(value, source: .contentDigestHeader)
    }

    /// `x-goog-hash: crc32c=n03x6A==, md5=Ojk9c3dhfxgoKVVHYwFbHQ==` — only the MD5 is kept; a composite object
    /// has none (CRC32C alone is not checked).
    static func parseGoogHash(_ value: String) -> [ExpectedDigest] {
        guard value.utf8.count <= 8192 else { return [] }
        return value.split(separator: ",").compactMap { member in
            guard let equals = member.firstIndex(of: "=") else { return nil }
            let name = member[..<equals].trimmingWhitespace().lowercased()
            let encoded = member[member.index(after: equals)...].trimmingWhitespace()
            guard name == "md5", let bytes = decodeBase64(encoded, length: 16) else { return nil }
            return ExpectedDigest(algorithm: .md5, bytes: bytes, source: .googHash)
        }
    }

    /// S3's `x-amz-checksum-sha256` and `x-amz-checksum-sha1`, only when they cover the whole object: a checksum
    /// of a multipart upload's part checksums (`x-amz-checksum-type: COMPOSITE`, or a value ending in `-N`)
    /// is not a digest of the bytes. S3 keeps SHA checksums of a multipart upload (whose `ETag` ends in `-N`)
    /// only as composites, and some S3 look-alikes send those without saying so.
    static func amazonChecksums(in headers: ResponseHeaders) -> [ExpectedDigest] {
        guard amazonChecksumKinds.contains(where: { headers[$0.name] != nil }) else { return [] }
        if let type = headers["x-amz-checksum-type"], type.trimmingWhitespace().uppercased() != "FULL_OBJECT" {
            return []
        }
        if let tag = headers["etag"], isMultipartEntityTag(tag) { return [] }
        return amazonChecksumKinds.compactMap { name, algorithm, source in
            guard let value = headers[name], !isComposite(value),
                let bytes = decodeBase64(value, length: algorithm.byteCount)
            else { return nil }
            return ExpectedDigest(algorithm: algorithm, bytes: bytes, source: source)
        }
    }

    /// The whole-object checksums S3 sends, by header.
    private static let amazonChecksumKinds:
        [(name: String, algorithm: DigestAlgorithm, source: ExpectedDigest.Source)] =
            [
                ("x-amz-checksum-sha1", .sha1, .amzChecksumSHA1),
                ("x-amz-checksum-sha256", .sha256, .amzChecksumSHA256),
            ]

    /// An `ETag` is the object's MD5 only where S3 says so: a strong tag of 32 hexadecimal digits, without the
    /// `-N` of a multipart upload, from a server that identifies as S3 or moto, on an object not encrypted with KMS
    /// or a customer key (whose tags are not digests).
    static func amazonEntityTag(in headers: ResponseHeaders) -> ExpectedDigest? {
        // The tag's shape first: it rules out nearly every other server's at once.
        guard let tag = headers["etag"]?.trimmingWhitespace(), tag.utf8.count == 34 else { return nil }
        // `x-amz-request-id` and `x-amz-id-2` are S3's; `x-amzn-requestid` is how moto, the S3 stand-in, says it.
        let isS3 =
            headers["server"]?.lowercased().contains("amazons3") == true || headers["x-amz-request-id"] != nil
            || headers["x-amz-id-2"] != nil || headers["x-amzn-requestid"] != nil
        guard isS3,
            headers["x-amz-server-side-encryption-customer-algorithm"] == nil,
            headers["x-amz-server-side-encryption"]?.lowercased().hasPrefix("aws:kms") != true
        else { return nil }
        return md5(ofEntityTag: tag)
    }

    /// The MD5 an S3 `ETag` has the shape of: a strong, quoted tag of 32 hexadecimal digits (not a multipart
    /// upload's `…-N`). Whether it is the MD5 of the bytes depends on the object's encryption too, which a listing
    /// does not say (`amazonEntityTag(in:)`).
    static func md5(ofEntityTag tag: String) -> ExpectedDigest? {
        let tag = tag.trimmingWhitespace()
        guard tag.utf8.count == 34, tag.hasPrefix("\""), tag.hasSuffix("\""),
            let bytes = ExpectedDigest.decodeHex(String(tag.dropFirst().dropLast())), bytes.count == 16
        else { return nil }
        return ExpectedDigest(algorithm: .md5, bytes: bytes, source: .entityTag)
    }

    /// The `ETag` S3 gives a multipart upload: `"<32 hex digits>-<part count>"`.
    private static func isMultipartEntityTag(_ tag: String) -> Bool {
        let parts = tag.trimmingWhitespace().split(separator: "-")
        guard parts.count == 2, parts[0].hasPrefix("\""), parts[1].hasSuffix("\"") else { return false }
        let hex = String(parts[0].dropFirst())
        let count = parts[1].dropLast()
        return hex.utf8.count == 32 && ExpectedDigest.decodeHex(hex) != nil && !count.isEmpty
            && count.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// A multipart checksum is written `<base64>-<part count>`; standard base64 has no `-`.
    private static func isComposite(_ value: String) -> Bool {
        value.contains("-")
    }

    private static func decodeBase64(_ text: String, length: Int) -> [UInt8]? {
        guard text.utf8.count <= 256, let data = Data(base64Encoded: text.trimmingWhitespace()),
            data.count == length
        else { return nil }
        return [UInt8](data)
    }
}
