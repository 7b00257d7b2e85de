import Synchronization
import SystemPackage

/// The user's directories a `DownloadManager`'s downloads go into, each checked (`DestinationPaths.checkDestination`)
/// and opened (`OpenDirectory`) once for all of them: a list of ten thousand files into one directory otherwise
/// looked it up, checked its permissions, opened and closed it ten thousand times, four of the dozen file-system calls
/// each small file cost.
///
/// Only the directory the user named is kept (`-d`, the directory of `-o`, the daemon's `--dir`), opened through
/// links as any program opens it; the subdirectories below it that a document or a client named are opened anew for
/// each download, without following links (`DestinationPaths.open`). A directory kept is the one the first download
/// opened: moved or replaced while the manager runs, the later downloads still go into it.
final class OpenDirectories: Sendable {
    private struct State {
        var opened: [FilePath: OpenDirectory] = [:]
        var checked: Set<FilePath> = []
    }

    private let state = Mutex(State())

    /// The first directory kept, and the first checked: nearly always the only ones, read by every download at once
    /// without a lock (sixteen threads spun on one).
    private final class First: Sendable {
        let path: FilePath
        let directory: OpenDirectory?

        init(_ path: FilePath, _ directory: OpenDirectory?) {
            self.path = path
            self.directory = directory
        }
    }

    private let firstOpened = AtomicLazyReference<First>()
    private let firstChecked = AtomicLazyReference<First>()

    /// The directory at `path`, if a download opened it already.
    func opened(_ path: FilePath) -> OpenDirectory? {
        if let first = firstOpened.load(), first.path == path { return first.directory }
        return state.withLock { $0.opened[path] }
    }

    /// Keeps `directory`, opened at `path`, for the later downloads; returns the one to use, which is the one kept
    /// first when two downloads opened it at once.
    func keep(_ directory: OpenDirectory, at path: FilePath) -> OpenDirectory {
        let first = firstOpened.storeIfNil(First(path, directory))
        if first.path == path, let kept = first.directory { return kept }
        return state.withLock { state in
            if let known = state.opened[path] { return known }
            state.opened[path] = directory
            return directory
        }
    }

    /// Checks `destination` (`DestinationPaths.checkDestination`), its user's directory only the first time: a
    /// check that fails is made again by the next download, which may find the directory made meanwhile.
    func check(_ destination: DownloadOptions.Destination) throws(BraidError) {
        try DestinationPaths.checkDestination(destination) { directory throws(BraidError) in
            if let first = firstChecked.load(), first.path == directory { return }
            guard !state.withLock({ $0.checked.contains(directory) }) else { return }
            try DestinationPaths.checkDirectory(directory)
            if firstChecked.storeIfNil(First(directory, nil)).path != directory {
                state.withLock { _ = $0.checked.insert(directory) }
            }
        }
    }
}
