import Synchronization

extension TransferEngine {
    /// Work for the download's thread, which must not be done on the pool's: it may block for long.
    enum Errand {
        /// Follow `source`'s URL as given again (`Configuration.refresher`).
        case refresh(source: Int, Source, abandoned: @Sendable () -> Bool)
        /// Save a checkpoint that syncs the manifest to disk.
        case saveDurably(Manifest, ManifestStore)
    }

    enum Answer {
        case refreshed(source: Int, Result<Source, BraidError>)
        /// The durable checkpoint was saved, or failed with the error.
        case saved(BraidError?)
    }

    /// The download's thread as the pool's thread sees it: errands go one way, answers and at last the outcome the
    /// other, each side woken as they arrive.
    final class Errands: @unchecked Sendable {
        // @unchecked: every mutable field is touched only with `condition` locked; `abandoned` is a Mutex.
        private let condition = ConditionLock()
        private var queue: [Errand] = []
        private var answers: [Answer] = []
        private var outcome: TransferMachine.Outcome?
        private let abandoned = Mutex(false)
        /// The pool's multi handle, woken when an answer is ready.
        private let wakeAddress: UInt

        init(waking multiAddress: UInt) {
            wakeAddress = multiAddress
        }

        /// On the download's thread: does each errand as it comes until the outcome arrives, and returns it.
        func serve(_ work: (Errand) -> Answer) -> TransferMachine.Outcome {
            while true {
                condition.lock()
                while queue.isEmpty && outcome == nil { condition.wait() }
                if let outcome {
                    condition.unlock()
                    return outcome
                }
                let errand = queue.removeFirst()
                condition.unlock()
                let answer = work(errand)
                condition.withLock { answers.append(answer) }
                MultiHandle.wake(address: wakeAddress)
            }
        }

        /// On the pool's thread.
        func send(_ errand: Errand) {
            condition.withLock {
                queue.append(errand)
                condition.broadcast()
            }
        }

        /// On the pool's thread: the answers that arrived since the last call.
        func takeAnswers() -> [Answer] {
            condition.withLock {
                defer { answers = [] }
                return answers
            }
        }

        /// The transfer's outcome is decided: an errand still under way may give up (`isAbandoned`).
        func abandon() {
            abandoned.withLock { $0 = true }
        }

        var isAbandoned: @Sendable () -> Bool {
            { [self] in abandoned.withLock { $0 } }
        }

        /// On the pool's thread, once the engine has left it: `serve` returns `outcome`.
        func finish(_ outcome: TransferMachine.Outcome) {
            condition.withLock {
                self.outcome = outcome
                condition.broadcast()
            }
        }
    }
}
