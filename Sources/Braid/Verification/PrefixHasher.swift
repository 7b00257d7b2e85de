import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Hashes the downloaded file while it is still being written, on a thread of its own: it digests the in-order
/// prefix it is told is confirmed, reading from the page cache, and may read ahead of it (`hashAhead(to:)`) over
/// bytes that `rewind(to:)` can still take back (the digest then starts over). The digest is given only once every
/// byte is confirmed.
///
/// Its owner calls `start()`, and `stop()` once the digest is taken or no longer wanted, which joins the thread.
///
/// Design: `docs/design/verification.md#the-streaming-digest-and-confirmed-bytes`.
final class PrefixHasher: @unchecked Sendable {
    // @unchecked: every mutable field below is read and written only with `condition` locked, except `thread`,
    // which only the owner touches, in `start()` and `stop()`.
    private let condition = ConditionLock()
    private var available: Int64 = 0
    /// How far the file is written from byte 0, ahead of `available`: bytes that may still be taken back.
    private var written: Int64 = 0
    /// How far the thread has read, or is reading; a rewind below it starts a new `generation`.
    private var reach: Int64 = 0
    private var generation = 0
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
        raise(\.available, to: watermark)
    }

    /// The file is written, but not yet confirmed, from byte 0 up to `watermark`: it may be read ahead.
    func hashAhead(to watermark: Int64) {
        raise(\.written, to: watermark)
    }

    /// Raises one of the marks the thread follows, waking it.
    private func raise(_ mark: ReferenceWritableKeyPath<PrefixHasher, Int64>, to watermark: Int64) {
        condition.lock()
        if watermark > self[keyPath: mark] {
            self[keyPath: mark] = watermark
            condition.broadcast()
        }
        condition.unlock()
    }

    /// The bytes from `position` on that were written ahead of confirmation are thrown away, to be written again:
    /// whatever was read of them is not part of the digest.
    func rewind(to position: Int64) {
        condition.lock()
        written = min(written, max(position, available))
        if reach > position {
            generation += 1
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
        var hasher = Hasher(algorithm)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize, alignment: 4096)
        defer {
            buffer.deallocate()
            try? file.close()
        }
        var position: Int64 = 0
        var readingGeneration = 0
        while true {
            condition.lock()
            if generation != readingGeneration {
                // Bytes it read ahead were taken back: the digest starts over.
                readingGeneration = generation
                hasher = Hasher(algorithm)
                position = 0
                hashed = 0
            }
            // Done once every byte is both digested and confirmed.
            func isDone() -> Bool { totalLength.map { position >= $0 && available >= $0 } ?? false }
            while !cancelled && max(available, written) <= position && !isDone() && generation == readingGeneration {
                condition.wait()
            }
            if generation != readingGeneration {
                condition.unlock()
                continue
            }
            if cancelled || isDone() {
                outcome = cancelled ? .failure(.localIO("verification was cancelled")) : .success(hasher.finalize())
                condition.broadcast()
                condition.unlock()
                return
            }
            // One block at a time, so that a rewind is seen before more is read.
            let target = min(max(available, written), position + Int64(blockSize))
            reach = target
            condition.unlock()

            let count = Int(target - position)
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            let read: Int
            do {
                read = try file.read(fromAbsoluteOffset: position, into: chunk, retryOnInterrupt: true)
                guard read > 0 else {
                    throw BraidError.localIO("the partial file ended at \(position) bytes while being verified")
                }
            } catch {
                condition.lock()
                let reason = (error as? BraidError) ?? .localIO("reading the partial file to verify it: \(error)")
                outcome = .failure(reason)
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.lock()
            // A rewind while the block was read: it may hold bytes about to be written again.
            let current = generation == readingGeneration
            condition.unlock()
            guard current else { continue }
            hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<read]))
            position += Int64(read)
            condition.lock()
            hashed = position
            condition.unlock()
        }
    }
}
