import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// Flushes the partial file to disk on a thread of its own, so that a slow `fdatasync` never stalls the transfer:
/// the marks handed over when a sync starts are durable once it returns. It also starts writeback of each piece as
/// it completes (`sync_file_range`).
///
/// Its owner calls `start()` before the transfer and `stop()` after it, which joins the thread.
///
/// Design: `docs/design/durability.md#the-manifest-and-crash-ordering`.
final class DurabilitySyncer: @unchecked Sendable {
    // @unchecked: the mutable fields are touched only with `condition` locked; `file` is itself Sendable.
    private let condition = ConditionLock()
    private var pending: [Int64]?
    private var writeBack: [Range<Int64>] = []
    private var completed: [Int64]?
    private var failure: BraidError?
    private var inFlight = false
    private var stopping = false
    private let file: PartFile
    private var thread: WorkerThread?

    init(file: PartFile) {
        self.file = file
    }

    func start() {
        let thread = WorkerThread { [self] in self.run() }
        self.thread = thread
        thread.start()
    }

    /// Starts a sync unless one is already running; returns whether it started.
    @discardableResult
    func request(flushedMarks: [Int64]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !inFlight, !stopping else { return false }
        inFlight = true
        pending = flushedMarks
        condition.broadcast()
        return true
    }

    /// Starts writing a completed range to disk, without waiting for it.
    func startWriteBack(_ range: Range<Int64>) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return }
        writeBack.append(range)
        condition.broadcast()
    }

    /// The marks of the last finished sync, once; a failed sync throws.
    func takeCompleted() throws(BraidError) -> [Int64]? {
        condition.lock()
        defer { condition.unlock() }
        if let failure {
            self.failure = nil
            throw failure
        }
        let result = completed
        completed = nil
        return result
    }

    /// Waits for a running sync, ends the thread and joins it.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        thread?.join()
        thread = nil
    }

    private func run() {
        while true {
            condition.lock()
            while pending == nil && writeBack.isEmpty && !stopping { condition.wait() }
            if pending == nil && !writeBack.isEmpty {
                let ranges = writeBack
                writeBack = []
                condition.unlock()
                for range in ranges {
                    // Best effort: a failure here only means the final flush has more to do.
                    try? file.descriptor.startWriteBack(of: range)
                }
                continue
            }
            guard let marks = pending else {
                condition.unlock()
                return
            }
            pending = nil
            condition.unlock()

            let outcome = Result { () throws(BraidError) in try file.synchronize() }

            condition.lock()
            switch outcome {
            case .success: completed = marks
            case let .failure(error): failure = error
            }
            inFlight = false
            condition.broadcast()
            condition.unlock()
        }
    }
}
