#if canImport(Glibc)
    import Glibc
#endif

/// A plain POSIX thread for long blocking work that lives as long as its owner (the pool's libcurl loop, hashing,
/// fdatasync), kept off the Swift concurrency pool, whose few threads must never block. Work that runs to an end and
/// hands back a result (a download's job) goes to `BlockingThreads` instead.
///
/// Its owner starts it and joins it: a thread never outlives the object whose work it does.
final class WorkerThread: @unchecked Sendable {
    // @unchecked: `thread` is written by `start()` and read by `join()`, both called by the one owner, in order.
    private let body: @Sendable () -> Void
    private let stackSize: Int
    private var thread: pthread_t?

    init(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) {
        self.body = body
        self.stackSize = stackSize
    }

    deinit {
        // An owner that forgot to join is a bug (debug builds stop here); in release the thread is let go.
        assert(thread == nil, "Invalid state: a worker thread was started and never joined")
        if let thread { pthread_detach(thread) }
    }

    func start() {
        precondition(thread == nil, "Invalid state: a worker thread was started twice")
        thread = Self.create(stackSize: stackSize, detached: false, body)
    }

    /// Starts a POSIX thread of `stackSize` bytes of stack that runs `body`; a `detached` one is never joined, and
    /// its resources go when it returns.
    static func create(stackSize: Int, detached: Bool, _ body: @escaping @Sendable () -> Void) -> pthread_t {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        if detached { pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var created = pthread_t()
        let result = pthread_create(
            &created,
            &attributes,
            { context in
                Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            },
            context
        )
        precondition(result == 0, "pthread_create failed with error \(result)")
        return created
    }

    /// Waits for the thread to return; its body must have been told to end.
    func join() {
        guard let thread else { return }
        pthread_join(thread, nil)
        self.thread = nil
    }

    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
