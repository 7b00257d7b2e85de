import COpenSSL
import Foundation

extension TestContent {
    /// The digest of the whole content, computed in chunks so that contents of many gigabytes cost time but
    /// no memory.
    public func digest(_ algorithm: DigestAlgorithm) -> [UInt8] {
        digest(algorithm, of: 0..<size)
    }

    /// The digest of the bytes in `range`, such as one piece of a Metalink's `<pieces>`.
    public func digest(_ algorithm: DigestAlgorithm, of range: Range<UInt64>) -> [UInt8] {
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestInit_ex(context, algorithm.evp, nil) == 1, "EVP_DigestInit_ex failed")
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
        defer { chunk.deallocate() }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = Int(min(UInt64(chunk.count), range.upperBound - offset))
            let slice = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<count])
            fill(slice, from: offset)
            precondition(EVP_DigestUpdate(context, slice.baseAddress, count) == 1, "EVP_DigestUpdate failed")
            offset += UInt64(count)
        }
        var result = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &result, &length) == 1, "EVP_DigestFinal_ex failed")
        return Array(result.prefix(Int(length)))
    }

    /// The digest as lowercase hex, the form `md5sum`/`sha256sum` print and checksum files contain.
    public func hexDigest(_ algorithm: DigestAlgorithm) -> String {
        Self.hex(digest(algorithm))
    }

    /// Lowercase hex of `bytes`.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The digest in base64, the form `Content-MD5`, `Digest` and `Repr-Digest` headers carry.
    public func base64Digest(_ algorithm: DigestAlgorithm) -> String {
        Data(digest(algorithm)).base64EncodedString()
    }
}

extension TestContent.DigestAlgorithm {
    /// OpenSSL's implementation of the algorithm.
    fileprivate var evp: OpaquePointer? {
        switch self {
        case .md5: EVP_md5()
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        }
    }
}
