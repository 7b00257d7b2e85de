/// The `user:password@` of a URL's authority, found on the text rather than through a URL parser, so the rest of
/// the URL keeps its exact spelling: dropped before a URL is stored, its password hidden before one is printed.
enum URLUserinfo {
    /// Where `user:password@` (with its `@`) stands in `url`, if its authority has one.
    static func range(in url: Substring) -> Range<Substring.Index>? {
        // On the UTF-8 bytes: every character looked for is ASCII, and a list asks this of every URL.
        let bytes = url.utf8
        var cursor = bytes.startIndex
        var authorityStart: Substring.Index?
        while authorityStart == nil, cursor < bytes.endIndex {
            if bytes[cursor...].starts(with: "://".utf8) {
                authorityStart = bytes.index(cursor, offsetBy: 3)
            } else {
                cursor = bytes.index(after: cursor)
            }
        }
        guard let start = authorityStart else { return nil }
        var at: Substring.Index?
        cursor = start
        while cursor < bytes.endIndex, !"/?#".utf8.contains(bytes[cursor]) {
            if bytes[cursor] == UInt8(ascii: "@") { at = cursor }
            cursor = bytes.index(after: cursor)
        }
        guard let at else { return nil }
        return start..<bytes.index(after: at)
    }

    /// `url` without the userinfo of its authority, as a manifest stores it.
    static func removed(from url: String) -> String {
        guard let range = range(in: url[...]) else { return url }
        var stripped = url
        stripped.removeSubrange(range)
        return stripped
    }
}
