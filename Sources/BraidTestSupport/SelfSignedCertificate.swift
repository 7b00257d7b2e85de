import Foundation

/// A throwaway certificate for 127.0.0.1 and localhost, made with the `openssl` command.
///
/// The certificate is its own issuer, so clients trust it exactly when given it as their CA file
/// (`curl --cacert`, `aria2c --ca-certificate`, `braid --cacert`) and reject it otherwise.
struct SelfSignedCertificate {
    /// The PEM certificate, to pass to clients as their CA file.
    let certificatePath: String
    /// The PEM private key, for the server only.
    let keyPath: String

    /// Generates a P-256 key and a two-day certificate in `directory`.
    static func generate(in directory: URL) async throws -> SelfSignedCertificate {
        let certificate = SelfSignedCertificate(
            certificatePath: directory.appendingPathComponent("cert.pem").path,
            keyPath: directory.appendingPathComponent("key.pem").path
        )
        let arguments = [
            "req", "-x509", "-nodes", "-days", "2",
            "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", certificate.keyPath,
            "-out", certificate.certificatePath,
        ]
        let result = try await ChildProcess.run("openssl", arguments)
        guard result.status.isSuccess else {
            throw TestSupportError.commandFailed("openssl req", status: result.status, stderr: result.standardError)
        }
        return certificate
    }
}
