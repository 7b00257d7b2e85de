import Braid

/// One download of a `braid` run as the output names it: its number in the list (1 for a single URL), its URL,
/// and the `out=` name the list gave it, if any.
struct DownloadItem: Sendable {
    /// 1-based position in the list.
    let id: Int
    let url: String
    let output: String?

    /// A short name for messages before the destination is known, escaped for a terminal: the `out=` name, else
    /// the URL's last path component, else the URL.
    var name: String {
        if let output { return PrintableText.escapingControlCharacters(output) }
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let withoutScheme = path.split(separator: "/", omittingEmptySubsequences: true).dropFirst(2)
        return PrintableText.sanitised(withoutScheme.last.map(String.init) ?? url)
    }

    /// The name to show once the download chose `path`: its last component, escaped for a terminal; `name` before.
    func name(ofFileAt path: String?) -> String {
        guard let path, let last = path.split(separator: "/").last else { return name }
        return PrintableText.escapingControlCharacters(String(last))
    }
}
