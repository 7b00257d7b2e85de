#if canImport(Glibc)
    import Glibc
#endif

/// Starts a plain POSIX thread for long blocking work (the libcurl loop, hashing, fdatasync), keeping it off the
/// Swift concurrency pool, whose few threads must never block.
enum DetachedThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    static func start(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) {
        let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
        pthread_attr_init(attributes)
        defer {
            pthread_attr_destroy(attributes)
            attributes.deallocate()
        }
        pthread_attr_setstacksize(attributes, stackSize)
        pthread_attr_setdetachstate(attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread: pthread_t = 0
        let result = pthread_create(
            &thread,
            attributes,
            { context in
                Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            },
            context
        )
        precondition(result == 0, "pthread_create failed with error \(result)")
    }
}
