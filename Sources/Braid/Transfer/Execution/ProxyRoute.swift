/// Which proxy a request goes through, worked out as libcurl works it out, so that `-v` can say so: the explicit
/// proxy if one is set (an empty one meaning none), else the environment's `<scheme>_proxy` (`http_proxy` only in
/// lower case, as libcurl reads it), then `all_proxy` or `ALL_PROXY`; and no proxy for a host the no-proxy list
/// (`noProxy`, else `no_proxy` or `NO_PROXY`) names. A pure value: the environment is passed in as a lookup.
struct ProxyRoute: Equatable, Sendable, CustomStringConvertible {
    /// Where the proxy came from.
    enum Source: Equatable, Sendable {
        /// `DownloadOptions.proxy` (`--proxy`).
        case explicit
        /// The named environment variable.
        case environment(String)
    }

    /// The proxy URL, with its password hidden; `nil` for a direct connection.
    let proxy: String?
    /// Why: where the proxy, or the decision to go direct, came from; `nil` when nothing asked for a proxy.
    let source: Source?
    /// Whether a proxy was set but the no-proxy list sends this host direct.
    let bypassed: Bool

    init(url: String, proxy: String?, noProxy: String?, environment: (String) -> String?) {
        let origin = Origin(url: url)
        let scheme = origin?.scheme ?? "http"
        var chosen: (value: String, source: Source)?
        if let proxy {
            chosen = (proxy, .explicit)
        } else {
            let names = ["\(scheme)_proxy"] + (scheme == "http" ? [] : ["\(scheme)_proxy".uppercased()])
            for name in names + ["all_proxy", "ALL_PROXY"] {
                if let value = environment(name), !value.isEmpty {
                    chosen = (value, .environment(name))
                    break
                }
            }
        }
        source = chosen?.source
        guard let value = chosen?.value, !value.isEmpty else {
            self.proxy = nil
            bypassed = false
            return
        }
        let list = noProxy ?? environment("no_proxy") ?? environment("NO_PROXY") ?? ""
        bypassed = Self.bypasses(host: origin?.host ?? "", list: list)
        // libcurl reads a proxy without a scheme as http://; written out, its password can be found and hidden.
        let spelled = value.contains("://") ? value : "http://" + value
        self.proxy = bypassed ? nil : PrintableText.sanitised(spelled)
    }

    /// One line for `-v`: `proxy http://user:***@proxy:3128 (from https_proxy)`, or why there is none.
    var description: String {
        let origin: String
        switch source {
        case nil: return "no proxy"
        case .explicit: origin = "set explicitly"
        case let .environment(name): origin = "from \(name)"
        }
        if let proxy { return "proxy \(proxy) (\(origin))" }
        return bypassed
            ? "no proxy (the no-proxy list names the host; proxy \(origin))" : "no proxy (\(origin) as empty)"
    }

    /// Whether libcurl's no-proxy matching sends `host` direct: `*` matches all; a name matches itself and its
    /// subdomains (a leading dot is ignored); an address matches itself. CIDR ranges are left to libcurl.
    static func bypasses(host: String, list: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: "[]")
        let entries = list.split { $0 == "," || $0 == " " }.map { $0.lowercased() }
        for entry in entries {
            if entry == "*" { return true }
            var name = Substring(entry)
            while name.hasPrefix(".") { name = name.dropFirst() }
            while name.hasSuffix(".") { name = name.dropLast() }
            let trimmed = String(name).trimmingCharacters(in: "[]")
            if trimmed.isEmpty { continue }
            if host == trimmed || host.hasSuffix("." + trimmed) { return true }
        }
        return false
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}
