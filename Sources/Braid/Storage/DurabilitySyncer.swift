#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Flushes the partial file to disk on a thread of its own, so that a slow `fdatasync` never stalls the transfer.
///
/// The engine hands over how far each segment was written when the sync starts; once the sync returns, those marks
/// are durable against a power cut and may be recorded as such in the next checkpoint.
final class DurabilitySyncer: @unchecked Sendable {
    // @unchecked: the mutable fields are touched only with `condition` locked; `file` is itself Sendable.
    private let condition = ConditionLock()
    private var pending: [Int64]?
    private var completed: [Int64]?
    private var failure: BraidError?
    private var inFlight = false
    private var stopping = false
    private var exited = false
    private let file: PartFile

    init(file: PartFile) {
        self.file = file
        DetachedThread.start { [self] in self.run() }
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

    /// Waits for a running sync and ends the thread.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !exited { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while pending == nil && !stopping { condition.wait() }
            guard let marks = pending else {
                exited = true
                condition.broadcast()
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
