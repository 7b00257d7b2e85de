import CLinuxIO
import Synchronization
import SystemPackage

/// A new file made without a name in a download's directory (`O_TMPFILE`), written whole, and given its final
/// name only once it is right (`linkat`, which never replaces a file there): for a small file whose bytes a list
/// holds in memory, already checked (`DownloadJob.placeReceived`).
///
/// Nothing of it is visible until it is named, and a process that dies first leaves nothing behind, so it needs
/// neither `FILE.part`, nor its lock, nor a manifest: one file-system call creates it and one names it, where a
/// partial file takes a dozen (looks at every companion name, create, lock, size, rename). It gets the permissions
/// of any new file at creation (`DestinationPaths.permissionsForNewFiles`, the umask applied by the kernel).
///
/// Design: `docs/design/durability.md#a-small-file-read-whole`.
final class UnnamedFile {
    let descriptor: FileDescriptor
    let directory: OpenDirectory

    private init(descriptor: FileDescriptor, directory: OpenDirectory) {
        self.descriptor = descriptor
        self.directory = directory
    }

    /// Makes the file in `directory`; nil where the file system or kernel cannot make one without a name
    /// (`EOPNOTSUPP`, `EISDIR` or `EINVAL` from older kernels): the caller then uses a partial file.
    static func create(in directory: OpenDirectory) throws(Errno) -> UnnamedFile? {
        do {
            // Not one at a time (`AnchoredPath.writingDirectory`): a file without a name is made without the
            // directory's lock, so a file system slow to find a free inode keeps no other thread spinning on it,
            // and two threads can look for one at once.
            let raw = try Errno.check { braid_open_unnamed(directory.descriptor.rawValue, 0o666) }
            return UnnamedFile(descriptor: FileDescriptor(rawValue: raw), directory: directory)
        } catch .notSupported, .isDirectory, .invalidArgument {
            return nil
        }
    }

    /// Writes all of `bytes` at the start of the file.
    func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        do {
            _ = try descriptor.writeAll(toAbsoluteOffset: 0, bytes)
        } catch {
            throw (error as? Errno) ?? .ioError
        }
    }

    /// Gives the file the name `target` (in the same directory); `.fileExists` when the name is taken, which is
    /// left as it is.
    func name(_ target: AnchoredPath) throws(Errno) {
        precondition(target.directory === directory, "Invalid state: an unnamed file is named in its own directory")
        _ = try AnchoredPath.writingDirectory { () throws(Errno) in
            try target.withName { (base, name) throws(Errno) in
                try Errno.check { braid_link_unnamed(descriptor.rawValue, base, name) }
            }
        }
        if !Self.named.load(ordering: .relaxed) { Self.named.store(true, ordering: .relaxed) }
    }

    /// Whether this process has named an unnamed file: naming one is then known to work here (the kernel let
    /// `linkat` name a descriptor, or `/proc` was there to go through), and a later failure to name one is that
    /// file's own (its name taken, the disk full), not a way the system has.
    static var namesFiles: Bool { named.load(ordering: .relaxed) }
    private static let named = Atomic<Bool>(false)

    deinit {
        try? descriptor.close()
    }
}
