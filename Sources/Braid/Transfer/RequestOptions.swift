/// How every request of a download is made: the user's headers, TLS trust, timeouts.
struct RequestOptions: Sendable {
    var headers: [String] = []
    var userAgent: String = "braid/\(BraidVersion.current)"
    var caCertificatePath: String?
    var insecure = false
    var connectTimeoutSeconds = 30
    /// A connection slower than `lowSpeedBytesPerSecond` for this long is considered stalled and replaced.
    var stallTimeoutSeconds = 30
    var lowSpeedBytesPerSecond = 1024
    var maximumRedirects = 10
    /// libcurl's receive buffer per connection: chunks this large are written straight from it. 128 KiB keeps
    /// 16 connections within a few MiB while each write still amortises its system call.
    var receiveBufferSize = 128 << 10
    var verbose = false

    /// The user's headers minus credentials, for requests that go to a host other than the one the user named:
    /// a redirect must not carry `Authorization` or `Cookie` to a third party.
    func headers(forHost host: String?, originalHost: String?) -> [String] {
        guard let host, let originalHost, host.lowercased() != originalHost.lowercased() else { return headers }
        return headers.filter { line in
            let name = line.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
            return name != "authorization" && name != "cookie" && name != "proxy-authorization"
        }
    }
}

/// The library's version, sent in the User-Agent and printed by `braid --version`.
public enum BraidVersion {
    public static let current = "0.1.0"
}
