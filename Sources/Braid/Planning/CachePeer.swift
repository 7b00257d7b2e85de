import CCurl

/// A cache peer: an ordinary caching proxy that a fleet shares, named by a URL template such as
/// `http://cache-3:8080/{scheme}/{host}{path}`, which says where it serves the origin URL's bytes.
///
/// The template's placeholders are filled from the origin URL (the one the probe resolved) as libcurl parses it:
/// `{scheme}` (`https`), `{host}` (the host, with `:port` when the URL gives one) and `{path}` (the path and, after
/// `?`, the query, kept as written: a signed URL's signature goes with it, so that the cache can fetch the file).
/// `{path}` is required; a login in the template (`http://user:pw@cache:8080/…`) is the only credential a peer is
/// ever sent (`RequestOptions.forCachePeers`).
///
/// Design: `docs/design/cache-peers.md`.
public struct CachePeer: Sendable, Equatable {
    /// The template as given: also what rendezvous hashing knows the peer by, so every host must write it alike.
    public let template: String
    /// Its scheme, host and port, for messages: no login, no placeholders.
    let name: String
    /// Its scheme, login, host and port (`http://user:pw@cache:8080/`), the one URL whose login it may be sent.
    let base: String

    /// Parses `template`; a usage error says what is wrong with it.
    public init(template: String) throws(BraidError) {
        guard template.utf8.count <= 4096,
            !template.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
        else {
            throw .usage(
                "the cache peer '\(template.prefix(200))' is too long or has a space or control character",
                option: .cachePeers)
        }
        guard template.contains("{path}") else {
            throw .usage(
                "the cache peer '\(template)' has no {path}: every file would be asked for at the same URL",
                option: .cachePeers)
        }
        // Parsed with stand-ins: `{path}` starts with a slash, the others are one path segment.
        let rest = template.replacing("{path}", with: "/").replacing("{scheme}", with: "x").replacing(
            "{host}", with: "x")
        guard !rest.contains("{"), !rest.contains("}") else {
            throw .usage(
                "the cache peer '\(template)' has a placeholder other than {scheme}, {host} and {path}",
                option: .cachePeers)
        }
        guard let origin = Origin(url: rest), origin.scheme == "http" || origin.scheme == "https",
            let parts = Origin.parsing(rest, { handle in Self.authority(handle) })
        else {
            throw .usage(
                "the cache peer '\(template)' is not an http:// or https:// URL template", option: .cachePeers)
        }
        guard Self.authorityIsLiteral(template) else {
            throw .usage(
                "the cache peer '\(template)' has a placeholder in its host: only its path may have them",
                option: .cachePeers)
        }
        self.template = template
        name = "\(origin.scheme)://\(parts.host)"
        base = "\(origin.scheme)://\(parts.login.map { $0 + "@" } ?? "")\(parts.host)/"
    }

    /// The peers of a list as `--cache-peers`, `cache-peers=` and `BRAID_CACHE_PEERS` give them: templates
    /// separated by commas or white space (a comma in a template is written `%2C`); empty for none.
    public static func list(parsing text: String) throws(BraidError) -> [CachePeer] {
        var peers: [CachePeer] = []
        for item in text.split(whereSeparator: { $0 == "," || $0.isWhitespace }) {
            peers.append(try CachePeer(template: String(item)))
        }
        guard peers.count <= DownloadOptions.maximumCachePeers else {
            throw .usage(
                "at most \(DownloadOptions.maximumCachePeers) cache peers, got \(peers.count)", option: .cachePeers)
        }
        return peers
    }

    /// The URL at which this peer serves `url`, or nil when libcurl cannot parse `url`.
    func url(for url: String) -> String? {
        guard let parts = Self.parts(of: url) else { return nil }
        return template.replacing("{scheme}", with: parts.scheme)
            .replacing("{host}", with: parts.host)
            .replacing("{path}", with: parts.path + (parts.query.map { "?" + $0 } ?? ""))
    }

    /// What identifies the file that `url` names, the same on every host of a fleet: its scheme, host (with
    /// `:port` when given) and path, without the query, whose signature differs from host to host. Nil when
    /// libcurl cannot parse `url`.
    static func resourceIdentity(of url: String) -> String? {
        parts(of: url).map { "\($0.scheme)://\($0.host)\($0.path)" }
    }

    /// The parts of `url` the placeholders take, as written (still percent-encoded), the scheme and host lowercased.
    private static func parts(of url: String) -> (scheme: String, host: String, path: String, query: String?)? {
        Origin.parsing(url) { handle in
            guard let scheme = Origin.part(handle, CURLUPART_SCHEME)?.lowercased(),
                let host = Origin.part(handle, CURLUPART_HOST)?.lowercased(), !host.isEmpty
            else { return nil }
            let port = Origin.part(handle, CURLUPART_PORT)
            let path = Origin.part(handle, CURLUPART_PATH) ?? "/"
            let query = Origin.part(handle, CURLUPART_QUERY)
            return (scheme, port.map { "\(host):\($0)" } ?? host, path.isEmpty ? "/" : path, query)
        }
    }

    /// The host (with `:port` when given) and the `user:password` of a parsed template.
    private static func authority(_ handle: OpaquePointer) -> (host: String, login: String?)? {
        guard let host = Origin.part(handle, CURLUPART_HOST), !host.isEmpty else { return nil }
        let port = Origin.part(handle, CURLUPART_PORT)
        let user = Origin.part(handle, CURLUPART_USER)
        let password = Origin.part(handle, CURLUPART_PASSWORD)
        let login = user.map { user in password.map { "\(user):\($0)" } ?? user }
        return (port.map { "\(host.lowercased()):\($0)" } ?? host.lowercased(), login)
    }

    /// Whether the template's scheme and authority (before the path, which `{path}` may start) hold no placeholder.
    private static func authorityIsLiteral(_ template: String) -> Bool {
        let template = template.replacing("{path}", with: "/")
        guard let marker = template.firstRange(of: "://") else { return false }
        let afterScheme = template[marker.upperBound...]
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return !template[..<marker.lowerBound].contains("{") && !authority.contains("{")
    }
}
