#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A digest the finished file must match, and where it came from (for the error message when it does not).
public struct ExpectedDigest: Sendable, Equatable, Codable, CustomStringConvertible {
    /// Where an expected digest was learnt.
    public enum Source: String, Sendable, Codable {
        case user = "--checksum"
        case contentMD5 = "Content-MD5"
        case digestHeader = "Digest"
        case reprDigestHeader = "Repr-Digest"
        /// RFC 9530's `Content-Digest` of one response's content (a range of the file).
        case contentDigestHeader = "Content-Digest"
        /// Google Cloud Storage's `x-goog-hash: crc32c=…, md5=…`.
        case googHash = "x-goog-hash"
        /// Amazon S3's full-object `x-amz-checksum-sha256`.
        case amzChecksumSHA256 = "x-amz-checksum-sha256"
        /// Amazon S3's full-object `x-amz-checksum-sha1`.
        case amzChecksumSHA1 = "x-amz-checksum-sha1"
        /// An S3 `ETag` that is the MD5 of the object (a single-part upload).
        case entityTag = "ETag"
        /// A line of a `SHA256SUMS`-style file given with `--checksum-file`.
        case checksumFile = "checksum-file"
        /// A `<hash>` of a Metalink (RFC 5854) file.
        case metalink = "metalink"

        /// Whether the server sent it, the weakest rank of `DigestAuthority`, which alone decides what it counts for.
        public var isFromServer: Bool { DigestAuthority.Rank(self) == .server }
    }

    public var algorithm: DigestAlgorithm
    /// The raw digest bytes.
    public var bytes: [UInt8]
    public var source: Source

    public init(algorithm: DigestAlgorithm, bytes: [UInt8], source: Source) {
        self.algorithm = algorithm
        self.bytes = bytes
        self.source = source
    }

    /// Parses the `ALG=HEX` form (`braid --checksum`, a list's `checksum=`); a malformed one is a usage error whose
    /// `option` is `.expectedDigest`.
    public init(checksumArgument: String) throws(BraidError) {
        guard let equals = checksumArgument.firstIndex(of: "=") else {
            throw .usage(
                "a checksum must be written ALG=HEX (md5, sha-1, sha-256 or sha-512), got '\(checksumArgument)'",
                option: .expectedDigest
            )
        }
        let name = String(checksumArgument[..<equals])
        let hex = String(checksumArgument[checksumArgument.index(after: equals)...])
        guard let algorithm = DigestAlgorithm(name: name) else {
            throw .usage(
                "unknown checksum algorithm '\(name)'; use md5, sha-1, sha-256 or sha-512", option: .expectedDigest)
        }
        guard let bytes = Self.decodeHex(hex), bytes.count == algorithm.byteCount else {
            throw .usage(
                "a \(algorithm) checksum has \(algorithm.byteCount * 2) hexadecimal digits, got '\(hex)'",
                option: .expectedDigest
            )
        }
        self.init(algorithm: algorithm, bytes: bytes, source: .user)
    }

    /// Lower-case hexadecimal, as `md5sum` and `sha256sum` print it.
    public var hex: String { Self.encodeHex(bytes) }

    public var description: String { "\(algorithm)=\(hex) (from \(source.rawValue))" }

    static func encodeHex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decodeHex(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = hexNibble(utf8[index]), let low = hexNibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexNibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }
}
