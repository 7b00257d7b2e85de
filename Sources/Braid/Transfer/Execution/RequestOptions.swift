/// How every request of a download is made: the user's credentials and where they may go, redirects, TLS trust,
/// timeouts.
struct RequestOptions: Sendable {
    /// The user's extra header lines. They may carry credentials (`Authorization`, `Cookie`, API keys), so they
    /// go only where `credentials` permits.
    var headers: [String] = []
    /// Where the user's credentials (`headers`, the cookie jar, the netrc file, a URL's userinfo) may go: by
    /// default nowhere, and for a download the origins of the URLs the user named.
    var credentials = CredentialScope.nowhere
    /// The schemes a redirect may lead to (`--proto-redir`).
    var redirectSchemes = Self.webSchemes
    var userAgent = Self.braidUserAgent
    /// `CURLOPT_PROXY`: `nil` leaves libcurl to read the proxy environment variables, `""` disables any proxy.
    var proxy: String?
    /// `CURLOPT_NOPROXY`: `nil` leaves libcurl to read `NO_PROXY`.
    var noProxy: String?
    /// A `.netrc` file to take credentials from, per host (`CURLOPT_NETRC_FILE`), for the origins `credentials`
    /// permits; nil for none.
    var netrcPath: String?
    /// A Netscape cookie jar to send cookies from, each to the domain and path it is scoped to, for the origins
    /// `credentials` permits.
    var cookieFilePath: String?
    /// Signs each request with AWS SigV4, for the origins `credentials` permits; nil signs nothing.
    var awsSignature: AWSSignature?
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
    var httpVersion = DownloadOptions.HTTPVersion.automatic

    // Made once, not for every request's options: a list makes a thousand.
    private static let webSchemes: Set<String> = ["http", "https"]
    private static let braidUserAgent = "braid/\(BraidVersion.current)"
}
