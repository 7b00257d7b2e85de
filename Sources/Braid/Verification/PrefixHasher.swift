import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Hashes the downloaded file while it is still being written, on a thread of its own.
///
/// Digests such as MD5 cannot be combined from out-of-order pieces, so the hasher follows the *in-order prefix*:
/// the transfer engine reports how far the file is complete from byte 0, and the hasher reads and digests up to
/// there from the page cache. By the time the last segment lands, little is left to hash.
///
/// Its owner calls `start()`, and `stop()` once the digest is taken or no longer wanted, which joins the thread.
final class PrefixHasher: @unchecked Sendable {
    // @unchecked: every mutable field below is read and written only with `condition` locked, except `thread`,
    // which only the owner touches, in `start()` and `stop()`.
    private let condition = ConditionLock()
    private var available: Int64 = 0
    private var totalLength: Int64?
    private var hashed: Int64 = 0
    private var cancelled = false
    private var outcome: Result<[UInt8], BraidError>?

    private let algorithm: DigestAlgorithm
    private let file: FileDescriptor
    private let blockSize: Int
    private var thread: WorkerThread?

    /// - Parameters:
    ///   - file: a descriptor the hasher owns and closes, open for reading on the partial file.
    init(algorithm: DigestAlgorithm, reading file: FileDescriptor, blockSize: Int = 1 << 20) {
        self.algorithm = algorithm
        self.file = file
        self.blockSize = blockSize
    }

    func start() {
        let thread = WorkerThread { [self] in self.run() }
        self.thread = thread
        thread.start()
    }

    /// Cancels whatever hashing is left and joins the thread.
    func stop() {
        cancel()
        thread?.join()
        thread = nil
    }

    /// The file is now complete from byte 0 up to `watermark`.
    func advance(to watermark: Int64) {
        condition.lock()
        if watermark > available {
            available = watermark
            condition.broadcast()
        }
        condition.unlock()
    }

    /// The file's final length; once the prefix reaches it, the digest is ready.
    func finish(totalLength: Int64) {
        condition.lock()
        self.totalLength = totalLength
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the hashing thread; `waitForDigest` then fails.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// How many bytes have been digested so far.
    var hashedBytes: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return hashed
    }

    /// Blocks until the whole file has been digested.
    func waitForDigest() throws(BraidError) -> [UInt8] {
        condition.lock()
        while outcome == nil { condition.wait() }
        let result = outcome!
        condition.unlock()
        return try result.get()
    }

    private func run() {
        let hasher = Hasher(algorithm)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize, alignment: 4096)
        defer {
            buffer.deallocate()
            try? file.close()
        }
        var position: Int64 = 0
        while true {
            condition.lock()
            while !cancelled && available <= position && !(totalLength.map { position >= $0 } ?? false) {
                condition.wait()
            }
            let target = available
            let done = totalLength.map { position >= $0 } ?? false
            if cancelled || done {
                outcome = cancelled ? .failure(.localIO("verification was cancelled")) : .success(hasher.finalize())
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.unlock()

            while position < target {
                let count = Int(min(Int64(blockSize), target - position))
                let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
                do {
                    let read = try file.read(fromAbsoluteOffset: position, into: chunk, retryOnInterrupt: true)
                    guard read > 0 else {
                        throw BraidError.localIO("the partial file ended at \(position) bytes while being verified")
                    }
                    hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<read]))
                    position += Int64(read)
                } catch {
                    condition.lock()
                    let reason = (error as? BraidError) ?? .localIO("reading the partial file to verify it: \(error)")
                    outcome = .failure(reason)
                    condition.broadcast()
                    condition.unlock()
                    return
                }
            }
            condition.lock()
            hashed = position
            condition.unlock()
        }
    }
}
