#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's download directory, and the rule that nothing a client asks for leaves it: a `dir` must name it or
/// a directory below it (made on demand), and an `out` must be a relative name without `..`. The directory's real
/// path is compared after links are resolved, so a link inside it that points elsewhere is refused too.
public struct DownloadDirectory: Sendable {
    /// The directory's real path: absolute, without links.
    public let root: String

    /// - Throws: `Refusal` when `path` is not an existing directory.
    public init(_ path: String) throws(Refusal) {
        guard let real = Self.realPath(path) else { throw Refusal(message: "\(path) is not a directory") }
        var status = stat()
        guard stat(real, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw Refusal(message: "\(path) is not a directory")
        }
        root = real
    }

    public struct Refusal: Error, Equatable, Sendable {
        public let message: String
    }

    /// The absolute directory for aria2's `dir` option (relative to the root when relative; the root when nil),
    /// made if missing, and known to be inside the root.
    public func directory(for requested: String?) throws(Refusal) -> String {
        guard let requested, !requested.isEmpty else { return root }
        guard !requested.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw Refusal(message: "the directory \(requested) contains control characters")
        }
        let relative: String
        if requested.hasPrefix("/") {
            guard requested == root || requested.hasPrefix(root + "/") else {
                throw Refusal(message: "the directory \(requested) is outside the download directory \(root)")
            }
            relative = String(requested.dropFirst(root.count))
        } else {
            relative = requested
        }
        let components = relative.split(separator: "/").filter { $0 != "." }
        guard !components.contains("..") else {
            throw Refusal(message: "the directory \(requested) leaves the download directory")
        }
        var path = root
        for component in components {
            path += "/" + component
            if mkdir(path, 0o755) != 0, errno != EEXIST {
                throw Refusal(message: "cannot make the directory \(path): \(String(cString: strerror(errno)))")
            }
        }
        guard let real = Self.realPath(path), real == root || real.hasPrefix(root + "/") else {
            throw Refusal(message: "the directory \(requested) leads outside the download directory \(root)")
        }
        return real
    }

    /// Checks aria2's `out` option: a relative file name, perhaps with directories below, that stays inside.
    public static func checkOutput(_ output: String) throws(Refusal) {
        let components = output.split(separator: "/", omittingEmptySubsequences: false)
        guard !output.isEmpty, !output.hasPrefix("/"), !components.contains(where: { $0 == ".." || $0.isEmpty }),
            !output.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw Refusal(message: "the file name \(output) is not a plain relative name inside the download directory")
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
