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

    /// What is known of the names in one directory kept (`lacksAll(_:in:)`).
    private struct Names {
        /// The names it held when it was last listed; nil when it could not be listed (`DirectoryListing.read`).
        var listed: Set<String>?
        /// When it was last listed (when that listing began); nil before its first listing.
        var listedAt: ContinuousClock.Instant?
        /// How many times names were looked for in it since its last listing went stale.
        var looks = 0
        /// Whether a download is listing it now: the others look their names up meanwhile.
        var reading = false
    }

    private let names = Mutex<[ObjectIdentifier: Names]>([:])

    /// How long a listing answers for a directory: a name made there later by anything but this manager's
    /// downloads (which claim their names first: `DestinationClaims`) goes unseen for at most as long.
    let listingLifetime: Duration
    /// The most names a directory may hold to be listed: a larger one is looked up name by name.
    static var listingLimit: Int { 100_000 }
    /// How many lookups a directory is worth before it is listed: a short list does not read a large directory.
    static var looksBeforeListing: Int { 8 }

    /// - Parameter listingLifetime: how long a listing of a directory answers for it (`lacksAll(_:in:)`).
    init(listingLifetime: Duration = .seconds(2)) {
        self.listingLifetime = listingLifetime
    }

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

    /// Whether none of `wanted` is in `directory`, one of the directories kept here, as a listing of it read at most
    /// `listingLifetime` ago says; nil when no listing answers, and the names are to be looked up one by one: a
    /// directory not kept here (a subdirectory a document named), one looked at too seldom to be worth listing yet,
    /// one being listed by another download, or one that cannot be listed.
    ///
    /// A listing misses what was made after it was read. The caller makes sure that nothing of its own was: the
    /// names of a file that a download of the same manager claimed are looked up (`DestinationClaims.isClaimed`).
    func lacksAll(_ wanted: [String], in directory: OpenDirectory) -> Bool? {
        guard opened(directory.path) === directory else { return nil }
        let key = ObjectIdentifier(directory)
        let now = ContinuousClock.now
        enum Answer {
            case listed(Set<String>?)
            case lookUp
            case read
        }
        let answer = names.withLock { names -> Answer in
            if let listedAt = names[key]?.listedAt, now - listedAt < listingLifetime {
                return .listed(names[key]?.listed)
            }
            names[key, default: Names()].looks += 1
            guard let known = names[key], known.looks >= Self.looksBeforeListing, !known.reading else { return .lookUp }
            names[key]?.reading = true
            return .read
        }
        let listed: Set<String>?
        switch answer {
        case let .listed(known):
            listed = known
        case .lookUp:
            return nil
        case .read:
            listed = DirectoryListing.read(directory, limit: Self.listingLimit)?.names
            names.withLock { $0[key] = Names(listed: listed, listedAt: now) }
        }
        guard let listed else { return nil }
        return !wanted.contains(where: listed.contains)
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
