import CLinuxIO
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Flushes and names a manager's files written whole (`UnnamedFile`) a batch at a time, on threads of its own, so
/// that a list's download slot does not wait for the disk before its next file starts. A thread of the queue takes
/// the files waiting, flushes them, names each, and syncs each directory it named files in once for the batch. A file
/// is told how it went only after that sync: as durable as a file flushed and named on its own, with the disk's
/// waits shared rather than taken one file after another in the download slots.
///
/// A batch is flushed with one flush of its file system (`syncfs`) where that is cheap and safe: little else waits
/// to be written on the whole machine (so that a list does not wait for another program's gigabytes), and the
/// kernel reports a failed writeback to such a flush (Linux 5.8 and later). Else the writeback of every file of the
/// batch starts (`sync_file_range`), and then each is flushed on its own (`fdatasync`, mostly a wait for what is
/// already under way); up to `drainers` threads flush batches at once.
///
/// At most `capacity` files wait: a caller that finds the queue full waits for a thread to take some, so that a disk
/// slower than the network holds the downloads back rather than piling up open descriptors.
///
/// Design: `docs/design/durability.md#many-files-flushed-together`.
final class NamingQueue: @unchecked Sendable {
    // @unchecked: `waiting` and `draining` are touched only with `condition` locked; an entry's file and closure go
    // to the thread that takes it, which alone touches them from then on.
    private let condition = ConditionLock()
    private var waiting: [Entry] = []
    /// The threads draining the queue now, started as files are added.
    private var draining = 0
    /// The most files waiting.
    let capacity: Int
    /// The most threads draining at once, and the most files each takes at a time.
    let drainers: Int
    let batchSize: Int
    /// Whether a batch may be flushed with its file system (`flushesFileSystem`); else each file on its own.
    let flushingFileSystems: Bool

    /// Why a file could not be named.
    enum Failure: Error, Equatable {
        /// Its flush failed; nothing was named.
        case flush(Errno)
        /// Naming it failed: another file has the name (`.fileExists`), or the file system refused.
        case name(Errno)
    }

    private struct Entry {
        let file: UnnamedFile
        let length: Int64
        let name: AnchoredPath
        let done: (Result<Void, Failure>) -> Void
    }

    init(capacity: Int = 64, drainers: Int = 4, flushingFileSystems: Bool = true) {
        self.capacity = capacity
        self.drainers = drainers
        self.flushingFileSystems = flushingFileSystems
        batchSize = max(1, capacity / drainers)
    }

    /// Queues `file`, written up to `length`, to be flushed and named `name` (in its directory); `done` is told how
    /// that went, on a thread of the queue, once the name is durable. Waits while the queue is full.
    func add(
        _ file: UnnamedFile, length: Int64, as name: AnchoredPath, then done: @escaping (Result<Void, Failure>) -> Void
    ) {
        condition.lock()
        while waiting.count >= capacity { condition.wait() }
        waiting.append(Entry(file: file, length: length, name: name, done: done))
        // Another thread where each draining one has a full batch waiting for it.
        let starts = draining < drainers && waiting.count > draining * batchSize
        if starts { draining += 1 }
        condition.unlock()
        if starts { BlockingThreads.shared.run { [self] in drain() } }
    }

    /// Flushes and names the waiting files, a batch at a time, until none waits.
    private func drain() {
        while true {
            condition.lock()
            let batch = Array(waiting.prefix(batchSize))
            waiting.removeFirst(batch.count)
            if batch.isEmpty { draining -= 1 }
            condition.broadcast()
            condition.unlock()
            guard !batch.isEmpty else { return }
            name(batch)
        }
    }

    /// Where a file of a batch is: the file system and the directory, each told apart by what it is, not by the
    /// object that opened it (a list's files below the user's directory each descend to theirs afresh,
    /// `OpenDirectory.descend`); by the object where the directory cannot be looked at.
    private struct Place {
        enum Key: Hashable {
            case device(UInt64)
            case inode(UInt64, onDevice: UInt64)
            case object(ObjectIdentifier)
        }
        let fileSystem: Key
        let directory: Key

        init(_ directory: OpenDirectory) {
            if let status = try? directory.descriptor.stat() {
                let device = UInt64(status.deviceID.rawValue)
                fileSystem = .device(device)
                self.directory = .inode(UInt64(status.inode.rawValue), onDevice: device)
            } else {
                fileSystem = .object(ObjectIdentifier(directory))
                self.directory = fileSystem
            }
        }
    }

    private func name(_ batch: [Entry]) {
        let places = batch.map { Place($0.file.directory) }
        let flushed = flushFileSystems(of: batch, at: places)
        // The writeback of every file to flush on its own starts before the first flush waits: best effort, a
        // failure here only leaves more to the flush.
        for (entry, place) in zip(batch, places) where !flushed.contains(place.fileSystem) {
            try? entry.file.descriptor.startWriteBack(of: 0..<entry.length)
        }
        var outcomes: [Result<Void, Failure>] = []
        outcomes.reserveCapacity(batch.count)
        var directories: [Place.Key: OpenDirectory] = [:]
        for (entry, place) in zip(batch, places) {
            do throws(Errno) {
                if !flushed.contains(place.fileSystem) { try entry.file.descriptor.synchronize() }
            } catch {
                outcomes.append(.failure(.flush(error)))
                continue
            }
            do throws(Errno) {
                try entry.file.name(entry.name)
            } catch {
                outcomes.append(.failure(.name(error)))
                continue
            }
            directories[place.directory] = entry.file.directory
            outcomes.append(.success(()))
        }
        for directory in directories.values { directory.synchronize() }
        for (entry, outcome) in zip(batch, outcomes) { entry.done(outcome) }
    }

    /// Flushes each file system of `batch` (its files at `places`) once, where that is cheaper than flushing its
    /// files one by one (`flushesFileSystem`); returns the file systems flushed so.
    private func flushFileSystems(of batch: [Entry], at places: [Place]) -> Set<Place.Key> {
        guard flushingFileSystems, batch.count > 1, Self.flushesFileSystem(besides: batch.reduce(0) { $0 + $1.length })
        else { return [] }
        var flushed: Set<Place.Key> = []
        var tried: Set<Place.Key> = []
        for (entry, place) in zip(batch, places) where tried.insert(place.fileSystem).inserted {
            // Through a file of the batch: a directory may be open as a path only, which `syncfs` refuses. Where it
            // fails, each of the file system's files is flushed on its own, and says how that went.
            if (try? entry.file.descriptor.synchronizeFileSystem()) != nil { flushed.insert(place.fileSystem) }
        }
        return flushed
    }

    /// Whether one flush of a file system is the way to flush a batch of `own` bytes: the kernel reports a failed
    /// writeback to it, and the whole machine has at most `othersBound` bytes besides those waiting to be written,
    /// so that the flush costs about what the batch's own files cost.
    static func flushesFileSystem(besides own: Int64) -> Bool {
        guard reportsFileSystemErrors else { return false }
        let unwritten = braid_unwritten_bytes()
        return unwritten >= 0 && unwritten <= own + othersBound
    }

    /// The most bytes of others that a batch's flush of the whole file system may wait for: on a disk that writes
    /// a few hundred megabytes a second, about a tenth of a second.
    static let othersBound: Int64 = 32 << 20

    /// Whether `syncfs` reports a failed writeback (Linux 5.8 and later).
    static let reportsFileSystemErrors = braid_kernel_at_least(5, 8) == 1
}
