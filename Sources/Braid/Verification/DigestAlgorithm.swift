import COpenSSL

/// A digest algorithm Braid can verify with, computed by OpenSSL's EVP interface.
public enum DigestAlgorithm: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case md5
    /// SHA-1, which S3 offers as `x-amz-checksum-sha1`.
    case sha1 = "sha-1"
    case sha256 = "sha-256"
    case sha512 = "sha-512"

    /// Accepts the spellings users and servers use: `md5`, `sha1`, `sha-1`, `sha256`, `sha-256`, `SHA-256`,
    /// `sha512`, `sha-512`.
    public init?(name: String) {
        switch name.lowercased() {
        case "md5": self = .md5
        case "sha1", "sha-1": self = .sha1
        case "sha256", "sha-256": self = .sha256
        case "sha512", "sha-512": self = .sha512
        default: return nil
        }
    }

    /// The digest's length in bytes.
    public var byteCount: Int {
        switch self {
        case .md5: 16
        case .sha1: 20
        case .sha256: 32
        case .sha512: 64
        }
    }

    /// How much a verification by this algorithm is worth: a stronger digest wins when several are offered.
    var strength: Int {
        switch self {
        case .md5: 0
        case .sha1: 1
        case .sha512: 2
        case .sha256: 3  // as strong for this purpose as SHA-512, and several times faster with SHA extensions
        }
    }

    public var description: String { rawValue }

    var evp: OpaquePointer? {
        switch self {
        case .md5: EVP_md5()
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        }
    }
}
