import SystemPackage

/// The file's bytes in order, from `FILE.part`, for a reader on a thread of its own (the descriptor writer, the
/// chunk hand-off, the archive reader), as the transfer writes them: the one place where the transfer and the
/// reader meet.
///
/// The transfer's thread tells it how far the file is confirmed (`advance(to:)`) and written ahead of that
/// (`readAhead(to:)`, bytes that `rewind(to:)` could still take back), and reads back how far the reader and the
/// digest have gone (`take()`), which moves the window. The reader's thread blocks in `read(into:)` until bytes are
/// there, and says what it is done with (`release(upTo:)`). Bytes released by both the reader and the digest, once
/// a checkpoint records it (`recorded(released:)`), are freed from the file when it is not kept.
///
/// Design: `docs/design/streaming.md`.
final class StreamFeed: @unchecked Sendable {
    // @unchecked: every mutable field is read and written only with `condition` locked, except `punched`, which
    // only the transfer's thread touches.
    private let condition = ConditionLock()
    private var confirmed: Int64 = 0
    private var written: Int64 = 0
    /// The file's length, once known: the reader's end.
    private var length: Int64?
    /// How far the reader has read; a rewind below it fails the stream.
    private var reach: Int64
    private var released: Int64
    /// The reader's failure, for the transfer to end with (reported once).
    private var failure: BraidError?
    private var failureReported = false
    /// Why the reader must stop: the transfer ended without completing.
    private var ending: BraidError?
    /// The window's base last handed to the transfer, and the release that last woke it.
    private var reported: Int64
    private var wokenAt: Int64

    private let file: FileDescriptor
    private let hasher: PrefixHasher?
    /// The partial file, to free released bytes from when it is not kept (a hole is punched through a descriptor
    /// open for writing: the reading one cannot).
    private let freeing: PartFile?
    private let wake: @Sendable () -> Void
    /// How far the file's blocks have been freed; transfer's thread only.
    private var punched: Int64
    /// The base recorded in the checkpoint being saved: freed once it is saved.
    private var recording: Int64?

    /// - Parameters:
    ///   - file: a descriptor the feed owns and closes, open for reading on the partial file.
    ///   - start: where the reader begins (an archive resumed at an entry's header); bytes before it are taken.
    ///   - length: the file's length, when known before the end.
    ///   - hasher: the whole-file digest, whose position holds back the window and the freeing of blocks.
    ///   - freeing: the partial file to free released bytes from, when it is not kept; nil to keep them.
    ///   - wake: wakes the transfer's thread, so that it takes the reader's progress at once.
    init(
        reading file: FileDescriptor,
        start: Int64,
        length: Int64?,
        hasher: PrefixHasher?,
        freeing: PartFile?,
        wake: @escaping @Sendable () -> Void
    ) {
        self.file = file
        reach = start
        released = start
        reported = hasher == nil ? start : 0
        wokenAt = start
        punched = 0
        self.length = length
        self.hasher = hasher
        self.freeing = freeing
        self.wake = wake
    }

    deinit {
        try? file.close()
    }

    // MARK: The transfer's side

    /// The file is confirmed from byte 0 up to `watermark`: those bytes never change again.
    func advance(to watermark: Int64) {
        condition.withLock {
            if watermark > confirmed {
                confirmed = watermark
                condition.broadcast()
            }
        }
    }

    /// The file is written, not yet confirmed, up to `watermark`: the reader may read ahead to there.
    func readAhead(to watermark: Int64) {
        condition.withLock {
            if watermark > written {
                written = watermark
                condition.broadcast()
            }
        }
    }

    /// The bytes from `position` on that were written ahead of confirmation are thrown away. If the reader already
    /// took some of them, they cannot be taken back from it: the stream fails. So it does when blocks were freed
    /// and a digest is kept, which may start over from byte 0 (`PrefixHasher.rewind(to:)`).
    func rewind(to position: Int64) {
        let digestMayStartOver = hasher != nil && punched > 0
        condition.withLock {
            written = min(written, max(position, confirmed))
            if reach > position || digestMayStartOver, failure == nil {
                failure = .protocolViolation(
                    "the server took back bytes from \(position) on that were already handed on; "
                        + "run the same command again to start over")
                ending = failure
                condition.broadcast()
            }
        }
    }

    /// What the transfer learns from the reader since it last asked.
    enum Progress {
        /// The reader and the digest have both gone past `position`: the window moves there.
        case moved(Int64)
        /// The reader cannot go on.
        case failed(BraidError)
    }

    /// The reader's failure, once, or how far the window may move, when it moved.
    func take() -> Progress? {
        let hashed = hasher?.hashedBytes
        return condition.withLock {
            if let failure, !failureReported {
                failureReported = true
                return .failed(failure)
            }
            let base = min(released, hashed ?? .max)
            guard base > reported else { return nil }
            reported = base
            return .moved(base)
        }
    }

    /// Where the window starts: the reader's first byte, or byte 0 while the digest has it to read.
    var base: Int64 { condition.withLock { reported } }

    /// What a checkpoint records as released: the bytes below it are gone from the file once it is saved.
    func releasedForCheckpoint() -> Int64 {
        let base = condition.withLock { reported }
        recording = freeing == nil ? nil : base
        return freeing == nil ? 0 : base
    }

    /// The checkpoint that recorded `releasedForCheckpoint()` is saved: those bytes are freed from the file. A
    /// file system that cannot free them keeps them, as if the file were kept.
    func checkpointSaved() {
        guard let recording, recording > punched else { return }
        self.recording = nil
        if freeing?.freeBlocks(punched..<recording) == true { punched = recording }
    }

    /// The transfer completed: the file is `length` bytes, all confirmed.
    func transferCompleted(length: Int64) {
        condition.withLock {
            self.length = length
            confirmed = max(confirmed, length)
            condition.broadcast()
        }
    }

    /// The transfer ended without completing: a reader waiting for bytes stops with `error`.
    func transferEnded(_ error: BraidError) {
        condition.withLock {
            if ending == nil { ending = error }
            condition.broadcast()
        }
    }

    // MARK: The reader's side

    /// Reads the next bytes in order into `buffer`, waiting until some are there; 0 once the whole file is read.
    /// Throws when the transfer ended without them, or the stream failed.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(BraidError) -> Int {
        condition.lock()
        while true {
            if let ending {
                condition.unlock()
                throw ending
            }
            if let length, reach >= length, confirmed >= length {
                condition.unlock()
                return 0
            }
            if max(confirmed, written) > reach { break }
            condition.wait()
        }
        let position = reach
        let count = Int(min(Int64(buffer.count), max(confirmed, written) - position))
        reach = position + Int64(count)
        condition.unlock()
        let read: Int
        do {
            read = try file.read(
                fromAbsoluteOffset: position, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]),
                retryOnInterrupt: true)
        } catch {
            throw .localIO("reading the partial file to hand it on: \(error)")
        }
        guard read == count else {
            throw BraidError.localIO("the partial file ended at \(position + Int64(read)) bytes while being read")
        }
        return count
    }

    /// How far the reader has read.
    var position: Int64 { condition.withLock { reach } }

    /// The reader is done with the bytes below `position`: the window may move past them, and they may be freed.
    func release(upTo position: Int64) {
        let wakes = condition.withLock { () -> Bool in
            guard position > released else { return false }
            released = position
            let wakes = position - wokenAt >= 1 << 20 || position == length
            if wakes { wokenAt = position }
            return wakes
        }
        if wakes { wake() }
    }

    /// The reader cannot go on: the transfer ends with `error`.
    func fail(_ error: BraidError) {
        condition.withLock {
            if failure == nil { failure = error }
            if ending == nil { ending = error }
            condition.broadcast()
        }
        wake()
    }

    /// Whether the reader should stop: the transfer ended, or the stream failed.
    var isEnding: Bool { condition.withLock { ending != nil } }

    /// The reader's own failure, if it failed.
    var readerFailure: BraidError? { condition.withLock { failure } }
}
