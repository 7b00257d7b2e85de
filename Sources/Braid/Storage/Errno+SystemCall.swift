import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

extension Errno {
    /// Runs a system call that returns -1 and sets `errno` when it fails, and throws that `errno`. An interrupted
    /// call (EINTR) is run again unless `retryOnInterrupt` is false: this is the one place Braid's own system calls
    /// do that, as swift-system's calls do it in theirs.
    @discardableResult
    static func check<Result: FixedWidthInteger>(
        retryOnInterrupt: Bool = true,
        _ call: () -> Result
    ) throws(Errno) -> Result {
        while true {
            let result = call()
            guard result == -1 else { return result }
            let error = Errno(rawValue: errno)
            guard retryOnInterrupt && error == .interrupted else { throw error }
        }
    }

    /// The `Errno` a swift-system call threw: it throws nothing else, though its signature does not say so.
    static func thrown(by error: any Error) -> Errno {
        error as? Errno ?? .ioError
    }
}
