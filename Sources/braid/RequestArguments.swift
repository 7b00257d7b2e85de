import ArgumentParser
import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// How requests are made, shared by `braid get` and `braid bench`: extra headers, proxy, TLS trust, retries,
/// timeouts.
struct RequestArguments: ParsableArguments {
    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp(
            "Extra request header 'Name: value' (repeatable), sent only to the origins of the URLs you name.",
            valueName: "HEADER")
    )
    var headers: [String] = []

    @Option(
        help: ArgumentHelp("Trust the CA certificates in FILE (PEM) for HTTPS.", valueName: "FILE"),
        completion: .file()
    )
    var cacert: String?

    @Flag(
        name: [.customShort("k"), .long],
        help: "Do not verify TLS certificates (insecure: anyone on the path can swap the file)."
    )
    var insecure = false

    @Option(
        help: ArgumentHelp(
            "Protocols a redirect may lead to, as curl's --proto-redir: '=https' refuses HTTPS to HTTP downgrades.",
            valueName: "PROTOCOLS"
        )
    )
    var protoRedir: String?

    @Option(
        help: ArgumentHelp(
            "Use this proxy (http://, https://, socks5://, socks5h://, with user:password@ if needed) instead of "
                + "http_proxy, https_proxy or ALL_PROXY; '' for none.",
            valueName: "URL"
        )
    )
    var proxy: String?

    @Option(
        help: ArgumentHelp(
            "Hosts to reach without the proxy, comma-separated ('*' for all), instead of NO_PROXY.",
            valueName: "HOSTS"
        )
    )
    var noproxy: String?

    @Flag(help: "Take credentials for each host from ~/.netrc, as curl --netrc, for the origins you name only.")
    var netrc = false

    @Option(
        help: ArgumentHelp(
            "Take credentials for each host from FILE (.netrc format), for the origins you name only.",
            valueName: "FILE"),
        completion: .file())
    var netrcFile: String?

    @Option(
        name: [.customShort("b"), .long],
        help: ArgumentHelp(
            "Send the cookies of a Netscape cookie jar FILE, each to its own domain, on the origins you name only.",
            valueName: "FILE"),
        completion: .file()
    )
    var cookie: String?

    @Option(
        name: [.customShort("U"), .long],
        help: ArgumentHelp("Send TEXT as the User-Agent (default braid/VERSION).", valueName: "TEXT")
    )
    var userAgent: String?

    @Flag(
        name: .customLong("http1.1"),
        help: "Use HTTP/1.1 for every request (by default HTTP/2 where the server offers it, but for segments).")
    var http1 = false

    @Flag(
        name: .customLong("http2"),
        help: "Use HTTP/2 for every request, segments too; for http:// URLs with prior knowledge (h2c).")
    var http2 = false

    @Option(help: ArgumentHelp("Attempts per segment without progress before giving up.", valueName: "N"))
    var maxTries = 6

    @Option(help: ArgumentHelp("Seconds a connection may stall before it is replaced.", valueName: "S"))
    var stallTimeout = 30

    @Option(help: ArgumentHelp("Seconds allowed to connect.", valueName: "S"))
    var connectTimeout = 30

    /// The schemes curl's `--proto-redir` grammar allows: comma-separated protocols, each optionally prefixed
    /// with `+` (allow), `-` (deny) or `=` (allow only the ones listed), starting from http and https; `all`
    /// stands for both. A scheme other than those two is left for `DownloadOptions.validate()` to refuse.
    static func redirectSchemes(_ value: String) -> Set<String> {
        let known: Set<String> = ["http", "https"]
        var allowed = known
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
            var name = item.lowercased().filter { $0 != " " }
            var mode: Character = "+"
            if let first = name.first, "+-=".contains(first) {
                mode = first
                name.removeFirst()
            }
            let schemes: Set<String> = name == "all" ? known : [name]
            switch mode {
            case "=": allowed = schemes
            case "-": allowed.subtract(schemes)
            default: allowed.formUnion(schemes)
            }
        }
        return allowed
    }

    func validate() throws {
        if http1 && http2 { throw ValidationError("--http1.1 and --http2 cannot be used together") }
    }

    func apply(to options: inout DownloadOptions) {
        options.headers = headers
        if let protoRedir { options.redirectSchemes = Self.redirectSchemes(protoRedir) }
        options.caCertificatePath = cacert
        options.insecure = insecure
        options.proxy = proxy
        options.noProxy = noproxy
        options.userAgent = userAgent
        options.netrcPath = netrcFile ?? (netrc ? Self.homeNetrc : nil)
        options.cookieFilePath = cookie
        options.maximumAttempts = maxTries
        options.stallTimeoutSeconds = stallTimeout
        options.connectTimeoutSeconds = connectTimeout
        options.httpVersion = http1 ? .http1 : http2 ? .http2 : .automatic
    }

    /// `~/.netrc`, where curl looks with `--netrc`.
    static var homeNetrc: String {
        (getenv("HOME").map { String(cString: $0) } ?? "") + "/.netrc"
    }
}
