import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A directory tree as a comparison sees it: every path below the root, with its kind, permission bits, and a
/// file's bytes or a link's target. Two extractions of one archive must give equal snapshots.
struct TreeSnapshot: Equatable, CustomStringConvertible {
    enum Node: Equatable {
        case directory(mode: mode_t)
        case file(mode: mode_t, contents: Data)
        case link(target: String)
        case other
    }

    var nodes: [String: Node]

    /// The tree below `root`; with `withModes` false, permission bits are left out (zip keeps them where a
    /// stream does not read them).
    init(of root: String, withModes: Bool = true) {
        nodes = [:]
        walk(root, relative: "", withModes: withModes)
    }

    private mutating func walk(_ path: String, relative: String, withModes: Bool) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names {
            let full = path + "/" + name
            let key = relative.isEmpty ? name : relative + "/" + name
            var status = stat()
            guard lstat(full, &status) == 0 else { continue }
            let mode = withModes ? status.st_mode & 0o7777 : 0
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                nodes[key] = .directory(mode: mode)
                walk(full, relative: key, withModes: withModes)
            case S_IFREG:
                nodes[key] = .file(mode: mode, contents: FileManager.default.contents(atPath: full) ?? Data())
            case S_IFLNK:
                nodes[key] = .link(target: (try? FileManager.default.destinationOfSymbolicLink(atPath: full)) ?? "")
            default:
                nodes[key] = .other
            }
        }
    }

    var description: String {
        nodes.keys.sorted().map { key in
            switch nodes[key]! {
            case let .directory(mode): "\(key)/ \(String(mode, radix: 8))"
            case let .file(mode, contents): "\(key) \(String(mode, radix: 8)) \(contents.count) bytes"
            case let .link(target): "\(key) -> \(target)"
            case .other: "\(key) (special)"
            }
        }.joined(separator: "\n")
    }
}
