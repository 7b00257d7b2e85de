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
            "Extra request header 'Name: value' (repeatable), sent only to the origins of the URLs given.",
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
            "Use this proxy: http:// (the default scheme), https://, socks5:// or socks5h://, with "
                + "user:password@ if needed; overrides http_proxy, https_proxy, ALL_PROXY; '' for none.",
            valueName: "URL"
        )
    )
    var proxy: String?

    @Option(
        help: ArgumentHelp(
            "Hosts to reach without the proxy, comma-separated (a name covers its subdomains; '*' for all), "
                + "instead of NO_PROXY.",
            valueName: "HOSTS"
        )
    )
    var noproxy: String?

    @Flag(help: "Take each host's login from ~/.netrc, as curl --netrc; an entry goes to its own host only.")
    var netrc = false

    @Option(
        help: ArgumentHelp("Take each host's login from FILE (.netrc format), as --netrc does.", valueName: "FILE"),
        completion: .file())
    var netrcFile: String?

    @Option(
        name: [.customShort("b"), .long],
        help: ArgumentHelp(
            "Send the cookies of a Netscape cookie jar FILE, each to its own domain.", valueName: "FILE"),
        completion: .file()
    )
    var cookie: String?

    @Option(
        name: [.customShort("U"), .long],
        help: ArgumentHelp("Send TEXT as the User-Agent (default braid/VERSION).", valueName: "TEXT")
    )
    var userAgent: String?

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
    }

    /// `~/.netrc`, where curl looks with `--netrc`.
    static var homeNetrc: String {
        (getenv("HOME").map { String(cString: $0) } ?? "") + "/.netrc"
    }
}
