import Synchronization
import SystemPackage

/// Disk space set aside in a directory, held by an open file that has no name: closing it, or the process ending
/// however it ends, gives the blocks back.
///
/// Design: `docs/design/durability.md#disk-full`.
final class SpaceReserve: Sendable {
    private let file = Mutex<FileDescriptor?>(nil)

    deinit {
        release()
    }

    /// Whether space is held.
    var isHeld: Bool { file.withLock { $0 != nil } }

    /// Allocates `size` bytes in a file created at `path` and unlinked at once, unless space is already held.
    ///
    /// Best effort: when the file cannot be created or allocated, no space is held. A symbolic link at `path` is
    /// refused, not followed; anything else found there is a reserve a crash left named, and is removed.
    func hold(_ size: Int64, creatingAt path: AnchoredPath) throws(BraidError) {
        try file.withLock { held throws(BraidError) in
            guard held == nil else { return }
            if path.isSymbolicLink { throw .symbolicLink(path.path) }
            try? path.unlink()
            let descriptor: FileDescriptor
            do throws(Errno) {
                descriptor = try path.open(.writeOnly, options: [.create, .exclusiveCreate])
            } catch {
                if error == .tooManySymbolicLinkLevels { throw .symbolicLink(path.path, cause: .errno(error)) }
                return
            }
            try? path.unlink()
            guard (try? descriptor.allocate(length: size)) != nil else {
                try? descriptor.close()
                return
            }
            held = descriptor
        }
    }

    /// Gives the space back to the file system.
    func release() {
        file.withLock { held in
            try? held?.close()
            held = nil
        }
    }
}
