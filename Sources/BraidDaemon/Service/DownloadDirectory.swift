import Braid
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's download directory, and the rule that nothing a client asks for leaves it: a `dir` must name it or
/// a directory below it, and an `out` must be a relative path below that; every name in them must be a safe name as
/// it is (`SafeName.path(validating:)`: no `..`, no leading `-`, no control or invisible characters). The
/// directories are made and opened below the root without following links (`OpenDirectory`), so a link inside it
/// that points elsewhere is refused, and a download is handed its place as `.below(root, …)`, which the library
/// opens the same way when it starts, however long after.
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
        let shown = PrintableText.escapingControlCharacters(requested)
        let relative: String
        if requested.hasPrefix("/") {
            guard let below = Self.relativePath(of: requested, below: root) else {
                throw Refusal(message: "the directory \(shown) is outside the download directory \(root)")
            }
            relative = below
        } else {
            relative = requested
        }
        // Clients write "a/b/", "./a" or "a//b" for the same directory as "a/b".
        let parts = relative.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
        guard !parts.isEmpty else { return root }
        let names: [SafeName]
        do throws(SafeName.Refusal) {
            names = try SafeName.path(validating: parts)
        } catch {
            let leaves = parts.split(separator: "/").contains("..")
            throw Refusal(
                message: leaves
                    ? "the directory \(shown) leaves the download directory"
                    : "the directory \(shown) is refused: it \(error.reason)")
        }
        var directory: OpenDirectory
        do {
            directory = try OpenDirectory(opening: FilePath(root))
        } catch {
            throw Refusal(message: "cannot open the download directory \(root): \(error)")
        }
        for name in names {
            do {
                directory = try directory.descend(into: name, creating: true)
            } catch .tooManySymbolicLinkLevels {
                throw Refusal(
                    message: "the directory \(shown) leads outside the download directory \(root): "
                        + "\(directory.path.appending(name.string)) is a symbolic link")
            } catch {
                throw Refusal(message: "cannot make the directory \(directory.path.appending(name.string)): \(error)")
            }
        }
        return (root.hasSuffix("/") ? root : root + "/") + SafeName.joined(names)
    }

    /// Checks aria2's `out` option: a relative file name, perhaps with directories below, that stays inside and
    /// whose every name is safe as it is.
    public static func checkOutput(_ output: String) throws(Refusal) {
        do throws(SafeName.Refusal) {
            _ = try SafeName.path(validating: output)
        } catch {
            throw Refusal(
                message: "the file name \(PrintableText.escapingControlCharacters(output)) is not a plain relative "
                    + "name inside the download directory: it \(error.reason)")
        }
    }

    /// The library's destination for a file in `directory` (the root, or a directory below it that
    /// `directory(for:)` gave) named `output`, or by the server when nil: below the root, so that the library opens
    /// every directory under the root without following links when the download starts. A `directory` outside the
    /// root gives a destination the library refuses.
    public static func destination(root: String, directory: String, output: String?) -> DownloadOptions.Destination {
        let subdirectory = directory == root ? "" : relativePath(of: directory, below: root) ?? directory
        return .below(root, subdirectory: subdirectory, name: output)
    }

    /// The path of `path` relative to `root` when it is below it; nil otherwise.
    private static func relativePath(of path: String, below root: String) -> String? {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        if path == root { return "" }
        guard path.hasPrefix(prefix) else { return nil }
        return String(path.dropFirst(prefix.count))
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
