import CLinuxIO
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// A directory held open, in which Braid names a download's files (see `AnchoredPath`), so that whatever becomes of
/// the path it was reached by (a component renamed, or swapped for a link) the files stay in this very directory.
///
/// The user's own directory (`-d`, the directory of `-o`, the daemon's `--dir`) is opened as any program opens it,
/// following links: the user set them up (`init(opening:)`). Below it, a directory whose name a served document or a
/// client chose (a `SafeName`) is opened relative to the one above with `O_NOFOLLOW | O_DIRECTORY`, and made first
/// with `mkdirat` when missing (`descend(into:creating:)`): a link there is refused, not followed, even one put there
/// after any check, since no name below is ever looked up again from the top. (`openat2` with `RESOLVE_BENEATH`
/// would walk a whole path so in one call; one component at a time needs no newer kernel, and makes the missing
/// directories on the way.)
public final class OpenDirectory: Sendable {
    /// The path the directory was reached by, for messages; names are looked up in `descriptor`, never here.
    public let path: FilePath
    /// The open directory, closed when this object goes.
    public let descriptor: FileDescriptor
    /// The syncs of the directory, shared by the downloads that named files in it at once (`synchronize()`).
    private let syncs = SharedSync()

    /// Opens the directory at `path`, following links as any program does: a path the user chose.
    public init(opening path: FilePath) throws(Errno) {
        self.path = path
        descriptor = try Self.open(path.isEmpty ? "." : path, in: nil, following: true)
    }

    private init(path: FilePath, descriptor: FileDescriptor) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        try? descriptor.close()
    }

    /// The directory `name` in this one, never through a link: a link there fails with
    /// `.tooManySymbolicLinkLevels`, anything else that is not a directory with `.notDirectory`. With `creating`, a
    /// missing one is made first (the process's umask applies to its permissions, as for `mkdir`), and with
    /// `synchronizing` its name in this directory is made durable then (`synchronize()`): the names later made
    /// durable in it are lost with it otherwise, on a file system that writes no journal.
    public func descend(into name: SafeName, creating: Bool, synchronizing: Bool = false) throws(Errno)
        -> OpenDirectory
    {
        if creating {
            do {
                try Errno.check { mkdirat(descriptor.rawValue, name.string, 0o777) }
                if synchronizing { synchronize() }
            } catch .fileExists {
                // Already there (or made meanwhile by another download): opened below like any other.
            }
        }
        let opened: FileDescriptor
        do {
            opened = try Self.open(FilePath(name.string), in: descriptor, following: false)
        } catch .notDirectory, .tooManySymbolicLinkLevels {
            // Linux says ENOTDIR for a link opened with O_DIRECTORY | O_NOFOLLOW; a link is named as one.
            let status = try? FilePath(name.string).stat(relativeTo: descriptor, flags: .symlinkNoFollow)
            throw status?.type == .symbolicLink ? .tooManySymbolicLinkLevels : .notDirectory
        }
        return OpenDirectory(path: path.appending(name.string), descriptor: opened)
    }

    /// Each of `names` in turn, below this directory (see `descend(into:creating:synchronizing:)`); this directory
    /// for none.
    public func descend(into names: [SafeName], creating: Bool, synchronizing: Bool = false) throws(Errno)
        -> OpenDirectory
    {
        var directory = self
        for name in names {
            directory = try directory.descend(into: name, creating: creating, synchronizing: synchronizing)
        }
        return directory
    }

    /// Makes the names created, renamed or removed in this directory durable (`fsync`); best effort.
    public func synchronize() {
        syncs.perform { try? descriptor.synchronize(includingMetadata: true) }
    }

    /// How many times `synchronize()` synced the directory (for tests).
    var synchronizations: Int { syncs.flushes }

    /// Opens a directory for the `*at` calls: readable when it may be read (so that it can be synced), else as a
    /// path only (`O_PATH`), which a directory that may be written and searched but not listed still allows.
    private static func open(
        _ path: FilePath,
        in directory: FileDescriptor?,
        following: Bool
    ) throws(Errno) -> FileDescriptor {
        let flags = O_DIRECTORY | O_CLOEXEC | (following ? 0 : O_NOFOLLOW)
        let base = directory?.rawValue ?? AT_FDCWD
        do {
            return FileDescriptor(
                rawValue: try Errno.check { path.withCString { openat(base, $0, O_RDONLY | flags) } })
        } catch .permissionDenied {
            return FileDescriptor(
                rawValue: try Errno.check { path.withCString { openat(base, $0, braid_open_path_flag | flags) } })
        }
    }
}
