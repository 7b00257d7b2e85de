import COpenSSL

/// An incremental digest over OpenSSL's EVP interface. Confined to the thread that uses it.
final class Hasher {
    let algorithm: DigestAlgorithm
    private let context: OpaquePointer

    init(_ algorithm: DigestAlgorithm) {
        self.algorithm = algorithm
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, algorithm.evp, nil) == 1 else {
            fatalError("OpenSSL could not initialise \(algorithm); libcrypto is unusable")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// Ends the computation; the hasher must not be used afterwards.
    func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return Array(digest.prefix(Int(length)))
    }
}

@available(*, unavailable)
extension Hasher: Sendable {}
