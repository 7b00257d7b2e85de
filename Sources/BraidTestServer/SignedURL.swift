import Foundation

/// The test server's own signed URLs, which expire as an object store's presigned URLs do:
/// `PATH?expires=<milliseconds since 1970>&signature=<hex>`, where the signature covers the path and the expiry
/// with a key only the server knows, so a client can neither extend one nor make one up.
///
/// ``TestServer/Fault/mintSignedURL(path:validFor:)`` hands them out in redirects, and
/// ``TestServer/Fault/requireSignedURL`` serves a route only through one that has not expired.
enum SignedURL {
    /// The server's signing key; fixed, since nothing outside the tests ever sees these URLs.
    private static let key: UInt64 = 0x6272_6169_645f_6b65

    /// The request target for `path`, valid until `expires` (seconds since 1970).
    static func target(path: String, expires: Double) -> String {
        let milliseconds = Int64((expires * 1000).rounded(.down))
        return "\(path)?expires=\(milliseconds)&signature=\(signature(path: path, expires: milliseconds))"
    }

    /// Why `target` does not grant access at `now` (seconds since 1970), or nil when it does.
    static func refusal(of target: String, now: Double) -> String? {
        let parts = target.split(separator: "?", maxSplits: 1)
        let path = String(parts[0])
        var query: [Substring: Substring] = [:]
        for pair in (parts.count > 1 ? parts[1] : "").split(separator: "&") {
            let field = pair.split(separator: "=", maxSplits: 1)
            if field.count == 2 { query[field[0]] = field[1] }
        }
        guard let expiresText = query["expires"], let expires = Int64(expiresText),
            let given = query["signature"], given == Substring(signature(path: path, expires: expires))
        else { return "no valid signature" }
        guard Double(expires) / 1000 > now else { return "the signed URL expired" }
        return nil
    }

    /// FNV-1a of the key, the path and the expiry: enough to tell a forged or altered URL in tests.
    private static func signature(path: String, expires: Int64) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array("\(key)|\(path)|\(expires)".utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
