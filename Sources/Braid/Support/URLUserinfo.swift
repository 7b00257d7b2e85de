/// The `user:password@` of a URL's authority, found on the text rather than through a URL parser, so the rest of
/// the URL keeps its exact spelling: dropped before a URL is stored, its password hidden before one is printed.
enum URLUserinfo {
    /// Where `user:password@` (with its `@`) stands in `url`, if its authority has one.
    static func range(in url: Substring) -> Range<Substring.Index>? {
        guard let scheme = url.firstRange(of: "://") else { return nil }
        let authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return nil }
        return scheme.upperBound..<url.index(after: at)
    }

    /// `url` without the userinfo of its authority, as a manifest stores it.
    static func removed(from url: String) -> String {
        guard let range = range(in: url[...]) else { return url }
        var stripped = url
        stripped.removeSubrange(range)
        return stripped
    }
}
