/// An archive entry's name and link target as the rules for names from outside see them: the one place that says
/// where below the extraction directory an entry goes, and whether a link stays inside it.
///
/// Design: `docs/design/streaming.md#extraction`.
enum ArchiveMember {
    /// Where the entry `name` goes below the directory: its components made safe (`SafeName.path(sanitising:)`),
    /// after the `./` and empty components tar writes are dropped (`./a//b/` is `a/b`); an empty list for the
    /// directory itself. Refused when absolute, with a `..` component, or a component with nothing usable.
    static func path(_ name: String) throws(SafeName.Refusal) -> [SafeName] {
        guard !name.hasPrefix("/") else { throw SafeName.Refusal(reason: "is an absolute path") }
        let parts = name.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        guard !parts.isEmpty else { return [] }
        return try SafeName.path(sanitising: parts.joined(separator: "/"))
    }

    /// Whether a symbolic link at `path` (below the directory) pointing to `target` stays inside the directory
    /// however the system resolves it: relative, its `..` components all first and no more of them than the link
    /// is deep, and names after them. Every directory of the extraction is a real directory at its own path (none
    /// is made or entered through a link), so climbing from the link's directory stays inside; each name after
    /// that is a directory or a link that, by the same rule, resolves inside, and descending never leaves it.
    static func linkStaysInside(at path: [SafeName], target: String) -> Bool {
        guard !target.isEmpty, !target.hasPrefix("/") else { return false }
        let parts = target.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        let climbs = parts.prefix { $0 == ".." }.count
        return climbs <= path.count - 1 && !parts.dropFirst(climbs).contains("..")
    }
}
