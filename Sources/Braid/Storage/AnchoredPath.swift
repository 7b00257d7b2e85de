import CLinuxIO
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// One of Braid's own files (`FILE.part`, `FILE.braid`, the final name, a state file), named either in a directory
/// held open (`OpenDirectory`), or by a path looked up as usual.
///
/// A download's files are named in its directory: every open, rename, link and removal is the `*at` call on that
/// directory's descriptor with one component, so nothing between the directory and the file is looked up again, and
/// a link swapped in for a directory on the way cannot redirect a write. The file itself is never opened through a
/// link at its name (`open` fails with `.tooManySymbolicLinkLevels`) unless asked to, and never inherited by a child
/// process. Each call throws its `Errno` and retries EINTR (see `Errno.check`).
struct AnchoredPath: Sendable, Equatable, CustomStringConvertible {
    /// The directory `name` is looked up in; nil for the working directory (then `name` may be any path).
    let directory: OpenDirectory?
    /// One component in `directory`, or a path when there is no directory.
    let name: FilePath

    /// A path looked up as usual, from the working directory when it is relative.
    init(_ path: FilePath) {
        directory = nil
        name = path
    }

    /// The file `name` (one component) in `directory`.
    init(_ name: String, in directory: OpenDirectory) {
        self.directory = directory
        self.name = FilePath(name)
    }

    /// The path the file is shown by.
    var path: FilePath { directory.map { $0.path.appending(name.string) } ?? name }
    var description: String { path.string }
    /// The last component: the file's name in its directory.
    var lastComponent: String { directory == nil ? name.lastComponent?.string ?? name.string : name.string }

    /// The file beside this one whose name is this one's with `suffix` added (`FILE.part` for `FILE`).
    func appendingToName(_ suffix: String) -> AnchoredPath {
        guard let directory else { return AnchoredPath(FilePath(name.string + suffix)) }
        return AnchoredPath(name.string + suffix, in: directory)
    }

    /// Held across each call that locks a directory for writing (creating, removing, renaming or linking a name in
    /// it), one such call in the process at a time: the kernel's directory lock is one whose waiters spin while its
    /// holder runs, and a file system slow to find a free inode (ext4 passes over those deleted moments ago) kept the
    /// other download threads of a list spinning in the kernel for as long, a third of its CPU. Here they sleep.
    private static let directoryWrites = ConditionLock()

    /// Runs `body`, a call that locks a directory for writing, as the only such call in the process meanwhile
    /// (`directoryWrites`).
    static func writingDirectory<Result>(_ body: () throws(Errno) -> Result) throws(Errno) -> Result {
        directoryWrites.lock()
        defer { directoryWrites.unlock() }
        return try body()
    }

    static func == (left: AnchoredPath, right: AnchoredPath) -> Bool {
        left.directory === right.directory && left.name == right.name
    }

    /// Opens the file, never through a link at its name unless `followingLink` (a link there fails with
    /// `.tooManySymbolicLinkLevels`), never inherited by a child process, and, when created, readable and writable
    /// by the owner only.
    func open(
        _ mode: FileDescriptor.AccessMode,
        options: FileDescriptor.OpenOptions = [],
        followingLink: Bool = false,
        retryOnInterrupt: Bool = true
    ) throws(Errno) -> FileDescriptor {
        var flags = mode.rawValue | options.rawValue | O_CLOEXEC
        if !followingLink { flags |= O_NOFOLLOW }
        let permissions = FilePermissions.ownerReadWrite.rawValue
        let creates = flags & O_CREAT != 0
        if creates { Self.directoryWrites.lock() }
        defer { if creates { Self.directoryWrites.unlock() } }
        return FileDescriptor(
            rawValue: try withName { (base, name) throws(Errno) in
                try Errno.check(retryOnInterrupt: retryOnInterrupt) { openat(base, name, flags, permissions) }
            })
    }

    /// The file's status: of a link at its name itself, unless `followingLink`.
    func status(followingLink: Bool = false) throws(Errno) -> Stat {
        try withName { (base, name) throws(Errno) in
            try Stat(name, relativeTo: FileDescriptor(rawValue: base), flags: followingLink ? [] : .symlinkNoFollow)
        }
    }

    /// Whether anything is at the name, a link included (a dangling link exists).
    var exists: Bool { (try? status()) != nil }

    /// Whether a symbolic link is at the name.
    var isSymbolicLink: Bool { (try? status())?.type == .symbolicLink }

    /// Removes the name (`unlinkat`); a link is removed itself, never what it points to.
    func unlink(retryOnInterrupt: Bool = true) throws(Errno) {
        _ = try Self.writingDirectory { () throws(Errno) in
            try withName { (base, name) throws(Errno) in
                try Errno.check(retryOnInterrupt: retryOnInterrupt) { unlinkat(base, name, 0) }
            }
        }
    }

    /// Renames this file to `target`, atomically. With `replacing`, a file at `target` is replaced (`renameat`);
    /// without, the rename fails with `.fileExists` if there is one (`renameat2` with `RENAME_NOREPLACE`), or with
    /// `.invalidArgument` or `.noFunction` where the kernel or file system cannot refuse atomically.
    func rename(to target: AnchoredPath, replacing: Bool, retryOnInterrupt: Bool = true) throws(Errno) {
        _ = try Self.writingDirectory { () throws(Errno) in
            try withName { (base, source) throws(Errno) in
                try target.withName { (targetBase, target) throws(Errno) in
                    try Errno.check(retryOnInterrupt: retryOnInterrupt) {
                        replacing
                            ? renameat(base, source, targetBase, target)
                            : braid_renameat_noreplace(base, source, targetBase, target)
                    }
                }
            }
        }
    }

    /// Gives this file a second name, `target` (`linkat`, not following a link at this name); never replaces a file
    /// there (`.fileExists`).
    func link(at target: AnchoredPath, retryOnInterrupt: Bool = true) throws(Errno) {
        _ = try Self.writingDirectory { () throws(Errno) in
            try withName { (base, source) throws(Errno) in
                try target.withName { (targetBase, target) throws(Errno) in
                    try Errno.check(retryOnInterrupt: retryOnInterrupt) { linkat(base, source, targetBase, target, 0) }
                }
            }
        }
    }

    /// Makes a rename or creation of this name durable: syncs the directory it is in (best effort). The directory of
    /// a plain path is reached through links, as any program reaches it.
    func synchronizeDirectory() {
        if let directory { return directory.synchronize() }
        let parent = name.removingLastComponent()
        guard let opened = try? OpenDirectory(opening: parent) else { return }
        opened.synchronize()
    }

    /// Calls `body` with the directory descriptor (`AT_FDCWD` for none) and the name, as the `*at` calls take them.
    func withName<Result>(
        _ body: (CInt, UnsafePointer<CChar>) throws(Errno) -> Result
    ) throws(Errno) -> Result {
        let base = directory?.descriptor.rawValue ?? AT_FDCWD
        return try withExtendedLifetime(directory) { () throws(Errno) -> Result in
            var result: Swift.Result<Result, Errno>!
            name.withCString { pointer in
                do throws(Errno) {
                    result = .success(try body(base, pointer))
                } catch {
                    result = .failure(error)
                }
            }
            return try result.get()
        }
    }
}
