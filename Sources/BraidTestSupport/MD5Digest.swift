import Foundation

/// The MD5 of a file, in the two spellings tests need: hex for `--checksum md5=…`, base64 for `Content-MD5`.
///
/// Computed by the `openssl` command rather than in-process, so the target stays dependency-free and the
/// reference digest does not share code with the implementation under test.
public struct MD5Digest: Equatable, Sendable, CustomStringConvertible {
    /// The 16 digest bytes.
    public let bytes: [UInt8]

    /// A digest from its 32 hexadecimal digits; `nil` if `hex` is not one.
    public init?(hex: some StringProtocol) {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for pair in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: digits[pair...pair + 1], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    /// The digest as 32 lowercase hexadecimal digits.
    public var hex: String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The digest as RFC 1864 wants it in a `Content-MD5` header.
    public var base64: String {
        Data(bytes).base64EncodedString()
    }

    public var description: String { hex }

    /// The digest of the file at `url`, from `openssl dgst -md5`.
    public static func of(fileAt url: URL) async throws -> MD5Digest {
        let result = try await ChildProcess.run("openssl", ["dgst", "-md5", "-r", url.path])
        guard result.status.isSuccess, let digest = MD5Digest(hex: result.standardOutput.prefix(32)) else {
            throw TestSupportError.commandFailed(
                "openssl dgst -md5 \(url.path)",
                status: result.status,
                stderr: result.standardError + result.standardOutput
            )
        }
        return digest
    }
}
