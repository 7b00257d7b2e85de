import CCurl

/// Where the user's credentials may go: to the origins (scheme, host and port) of the URLs the user named, and to
/// no other, whichever server or document led a request elsewhere.
///
/// The user names a URL on the command line, in a list file, in an RPC call, or in a Metalink file given by its
/// path. A URL Braid learned from a server (a redirect's target, a served Metalink's URLs, anything later) is
/// sent credentials only when its origin is one of those: the server chose it, so it is not a place the user chose
/// to send them. Every request asks `permits(_:to:)` through `EasyHandle.configure(url:options:headers:)`, the one
/// place a request gets its URL, login, netrc, cookies, headers and AWS signature; no feature decides it again.
///
/// See docs/SECURITY.md, "Credentials go only where the user sent them".
public struct CredentialScope: Sendable, Equatable {
    /// What a request may carry on the user's behalf.
    public enum Credential: Sendable, CaseIterable {
        /// The extra header lines (`DownloadOptions.headers`, `-H`), all of them: any may hold a secret.
        case header
        /// The cookie jar's cookies (`DownloadOptions.cookieFilePath`, `-b`). A jar scopes a cookie by domain, not
        /// port or scheme, and names any domain it likes; the cookie engine runs only for a permitted origin.
        case cookie
        /// A login from the netrc file (`DownloadOptions.netrcPath`), which libcurl would match by host alone.
        case netrc
        /// The `user:password@` of a URL the user named, sent to that URL's origin as HTTP authentication.
        case userinfo
        /// The AWS SigV4 signature (`DownloadOptions.awsSignature`) and the session token that goes with it: a
        /// request to another origin is sent unsigned.
        case awsSignature
    }

    /// The scope that permits nothing: no URL named.
    static let nowhere = CredentialScope(userNamed: [])

    /// Each origin the user named, with the userinfo (as written, still percent-encoded) of the first URL naming
    /// it that had one.
    private var logins: [Origin: String?] = [:]
    /// The first URL named, as the scope was made of it: a download's first request goes there, and a list's small
    /// file makes no other, so neither that request nor the manager that counts the download's connections by host
    /// parses it again (`grant(for:)`, `origin(of:)`).
    private var first: Named?

    /// A URL the user named, parsed once.
    private struct Named: Sendable {
        let url: String
        /// Its origin; nil when it has none.
        let origin: Origin?
        /// What a request to it may carry, worked out once every URL named is known.
        let grant: Grant
    }

    /// The scope of the URLs in `urls`, all named by the user. A URL with no origin libcurl can parse adds none.
    public init(userNamed urls: [String]) {
        var firstParsed: (Origin?, userinfo: String?)?
        for (index, url) in urls.enumerated() {
            let parsed = Self.parse(url)
            if index == 0 { firstParsed = parsed }
            guard case let (origin?, userinfo)? = parsed else { continue }
            if case .some(.some) = logins[origin] { continue }
            logins[origin] = userinfo
        }
        if let url = urls.first {
            first = Named(url: url, origin: firstParsed?.0, grant: grant(for: url, parsed: firstParsed))
        }
    }

    /// Two scopes are equal when they permit the same: the logins by origin, not which URL was named first.
    public static func == (lhs: CredentialScope, rhs: CredentialScope) -> Bool {
        lhs.logins == rhs.logins
    }

    /// `url`'s origin (nil when it has none), from the parse the scope made when `url` is the first URL named.
    func origin(of url: String) -> Origin? {
        guard let first, first.url == url else { return Origin(url: url) }
        return first.origin
    }

    /// Whether a request to `url` may carry `credential`: only when `url`'s origin is one the user named. The
    /// same rule holds for every kind; a URL without a parsable origin may carry none.
    public func permits(_ credential: Credential, to url: String) -> Bool {
        grant(for: url).permits(credential)
    }

    /// `url` as it is requested: its own userinfo replaced with the one the user wrote for its origin, or removed
    /// when the user wrote none or named another origin. A server's URL (a redirect, a Metalink) can neither
    /// receive the user's login for another origin nor carry one of its own choosing.
    func requestURL(for url: String) -> String {
        grant(for: url).requestURL
    }

    /// What one request to a URL may carry, decided on one parse of it: a list asks for every file's request.
    struct Grant {
        /// The URL as it is requested (`requestURL(for:)`).
        let requestURL: String
        /// Whether the URL's origin is one the user named: the one rule for every kind of credential.
        let isUserNamed: Bool

        func permits(_ credential: Credential) -> Bool { isUserNamed }
    }

    /// What a request to `url` may carry (`permits(_:to:)`) and the URL it is made to (`requestURL(for:)`).
    func grant(for url: String) -> Grant {
        if let first, first.url == url { return first.grant }
        return grant(for: url, parsed: Self.parse(url))
    }

    /// `grant(for:)` of `url`, given its parse.
    private func grant(for url: String, parsed: (Origin?, userinfo: String?)?) -> Grant {
        // Unparsable, it has no origin and libcurl will not request it: it is left as it is.
        guard let (origin, userinfo) = parsed else { return Grant(requestURL: url, isUserNamed: false) }
        let named = origin.flatMap { logins[$0] }
        let login = named ?? nil
        guard login != userinfo else { return Grant(requestURL: url, isUserNamed: named != nil) }
        return Grant(requestURL: Self.replacingUserinfo(of: url, with: login), isUserNamed: named != nil)
    }

    /// `url` with the userinfo `login` (none when nil) in place of its own.
    private static func replacingUserinfo(of url: String, with login: String?) -> String {
        Origin.parsing(url) { handle in
            let (user, password) = Self.split(login)
            guard curl_url_set(handle, CURLUPART_USER, user, 0) == CURLUE_OK,
                curl_url_set(handle, CURLUPART_PASSWORD, password, 0) == CURLUE_OK
            else { return nil }
            return Origin.part(handle, CURLUPART_URL)
        } ?? URLUserinfo.removed(from: url)
    }

    /// `url`'s origin (nil when it has none) and its `user` or `user:password`, as written (nil without one),
    /// from one parse; nil when libcurl cannot parse it.
    private static func parse(_ url: String) -> (Origin?, userinfo: String?)? {
        Origin.parsing(url) { handle in
            let origin = Origin(parsed: handle)
            let user = Origin.part(handle, CURLUPART_USER)
            let userinfo = user.map { user in Origin.part(handle, CURLUPART_PASSWORD).map { "\(user):\($0)" } ?? user }
            return (origin, userinfo)
        }
    }

    private static func split(_ userinfo: String?) -> (user: String?, password: String?) {
        guard let userinfo else { return (nil, nil) }
        guard let colon = userinfo.firstIndex(of: ":") else { return (userinfo, nil) }
        return (String(userinfo[..<colon]), String(userinfo[userinfo.index(after: colon)...]))
    }
}
