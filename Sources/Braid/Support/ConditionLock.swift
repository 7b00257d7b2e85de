#if canImport(Glibc)
    import Glibc
#endif

/// A mutex and its condition variable, for plain threads that wait on each other (the verifier, the syncer, the
/// download thread): they run outside Swift concurrency, where blocking is the point.
final class ConditionLock: @unchecked Sendable {
    // @unchecked: the pthread objects are themselves the synchronisation; they are never moved after init.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    /// Releases the lock while waiting; must be called with the lock held.
    func wait() { pthread_cond_wait(condition, mutex) }
    /// Waits at most `seconds` (or until woken, which may also be spurious); must be called with the lock held.
    func wait(seconds: Double) {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(seconds * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_cond_timedwait(condition, mutex, &deadline)
    }

    func broadcast() { pthread_cond_broadcast(condition) }
    /// Wakes one waiter.
    func signal() { pthread_cond_signal(condition) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
