/// Writes a transfer's received bytes into its sink on a thread of its own, so that the pool's thread, which
/// receives the bytes of every download on the pool, does not also copy each of them into the page cache: on
/// loopback the positional writes took half of that thread, and a list's large files went at the speed of one core.
///
/// The pool's thread hands bytes over (`write`), copied into blocks of the writer's own: each connection's bytes
/// are gathered into its block until it is full (or waited for), so a chunk is copied once, however small. The
/// writer's thread writes the blocks in the order they filled. Bytes count as written only once they are: the engine hands the machine what
/// `takeCompleted` returns, and waits (`drain`) wherever the machine is to act on what the file holds (a
/// transfer's end confirms its bytes, a checkpoint claims them). A write that fails stops its attempt: none of that
/// attempt's later bytes is written, so the file never holds bytes past a gap.
///
/// At most `capacity` bytes wait at a time; past that the pool's thread waits for the disk, as it did when it wrote
/// itself.
final class BackgroundWriter: @unchecked Sendable {
    // @unchecked: every mutable property is touched under `condition` only; the blocks in `queue` belong to the
    // writer's thread from the moment they are queued until they are back in `free`.

    /// One attempt's writes: the slot's connection and which of its requests (`Connection.begin` counts them).
    struct Attempt: Hashable {
        var slot: Int
        var request: UInt64
    }

    /// Bytes the writer's thread wrote, or the write that failed, in the order they were handed over.
    struct Completion {
        var attempt: Attempt
        var count: Int
        var error: BraidError?
    }

    /// The bytes left to fetch from which a transfer writes in the background: a thread is cheap against the
    /// seconds such a transfer takes, and a small file's writes are over before a thread would have started.
    static let worthwhileLength: Int64 = 16 << 20

    private struct Item {
        var block: UnsafeMutableRawPointer
        var count: Int
        var offset: Int64
        var attempt: Attempt
    }

    /// Each connection's block being filled, by slot; touched by the pool's thread only.
    private var filling: [Int: Item] = [:]
    private let sink: any TransferSink
    private let blockSize: Int
    private let maximumBlocks: Int
    private let condition = ConditionLock()
    private var queue: [Item] = []
    private var queueStart = 0
    private var free: [UnsafeMutableRawPointer] = []
    private var allocated = 0
    /// Items queued or being written.
    private var pending = 0
    private var completed: [Completion] = []
    /// Attempts with a failed write: their later items are skipped.
    private var failed: Set<Attempt> = []
    private var stopping = false
    /// Whether the writer's thread waits for a block, or the pool's thread for a free one: only then is the other
    /// woken.
    private var writerWaits = false
    private var producerWaits = false
    private var thread: WorkerThread?

    init(sink: any TransferSink, blockSize: Int = 256 << 10, capacity: Int = 8 << 20) {
        self.sink = sink
        self.blockSize = blockSize
        maximumBlocks = max(2, capacity / blockSize)
    }

    deinit {
        stop()
        for block in free { block.deallocate() }
    }

    /// Takes `bytes` for `offset` of the file, copied into the slot's block: the caller may reuse its buffer at once.
    /// Waits while the writer holds `capacity` bytes already.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64, for attempt: Attempt) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let position = offset + Int64(done)
            var item: Item
            if let open = filling[attempt.slot], open.attempt == attempt, open.offset + Int64(open.count) == position {
                item = open
            } else {
                if let open = filling[attempt.slot] { submit(open) }
                item = Item(block: takeBlock(), count: 0, offset: position, attempt: attempt)
            }
            let count = min(blockSize - item.count, bytes.count - done)
            (item.block + item.count).copyMemory(from: base + done, byteCount: count)
            item.count += count
            done += count
            if item.count == blockSize {
                filling[attempt.slot] = nil
                submit(item)
            } else {
                filling[attempt.slot] = item
            }
        }
    }

    /// Waits until every byte handed over is written, or failed.
    func drain() {
        for item in filling.values { submit(item) }
        filling = [:]
        condition.withLock {
            while pending > 0 {
                producerWaits = true
                condition.wait()
            }
        }
    }

    /// What was written (or failed) since the last call, in order.
    func takeCompleted() -> [Completion] {
        condition.withLock {
            defer { completed = [] }
            return completed
        }
    }

    /// Writes what is handed over, then ends the thread and waits for it.
    func stop() {
        for item in filling.values { submit(item) }
        filling = [:]
        let running = condition.withLock { () -> WorkerThread? in
            stopping = true
            condition.broadcast()
            defer { thread = nil }
            return thread
        }
        running?.join()
    }

    private func start() {
        let thread = WorkerThread { [self] in run() }
        condition.withLock { self.thread = thread }
        thread.start()
    }

    private func submit(_ item: Item) {
        if thread == nil { start() }
        condition.withLock {
            queue.append(item)
            pending += 1
            if writerWaits { condition.broadcast() }
        }
    }

    private func takeBlock() -> UnsafeMutableRawPointer {
        condition.withLock {
            while free.isEmpty && allocated >= maximumBlocks {
                producerWaits = true
                condition.wait()
            }
            if let block = free.popLast() { return block }
            allocated += 1
            return UnsafeMutableRawPointer.allocate(byteCount: blockSize, alignment: 4096)
        }
    }

    private func run() {
        while true {
            let next = condition.withLock { () -> (Item, skip: Bool)? in
                while queueStart == queue.count && !stopping {
                    writerWaits = true
                    condition.wait()
                    writerWaits = false
                }
                guard queueStart < queue.count else { return nil }
                let item = queue[queueStart]
                queueStart += 1
                if queueStart == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    queueStart = 0
                }
                return (item, failed.contains(item.attempt))
            }
            guard let (item, skip) = next else { return }
            var error: BraidError?
            if !skip {
                do {
                    try sink.write(UnsafeRawBufferPointer(start: item.block, count: item.count), at: item.offset)
                } catch let failure {
                    error = failure
                }
            }
            condition.withLock {
                if let error {
                    failed.insert(item.attempt)
                    completed.append(Completion(attempt: item.attempt, count: 0, error: error))
                } else if !skip {
                    completed.append(Completion(attempt: item.attempt, count: item.count, error: nil))
                }
                free.append(item.block)
                pending -= 1
                if producerWaits {
                    producerWaits = false
                    condition.broadcast()
                }
            }
        }
    }
}
