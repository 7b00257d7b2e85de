#if canImport(Glibc)
    import Glibc
#endif

/// A value behind a plain pthread mutex, for state that many threads take briefly and often: a waiting thread
/// sleeps at once. Synchronization's `Mutex` spins first and then, on Linux, waits on a priority-inheriting futex,
/// the kernel's slow path; sixteen download threads ending small files at once spent a tenth of a list's CPU so on
/// the `DownloadManager`'s lock.
final class ThreadLock<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked: `value` is touched only between `pthread_mutex_lock` and `pthread_mutex_unlock`; the mutex is never
    // moved after init.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    init(_ value: consuming Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
