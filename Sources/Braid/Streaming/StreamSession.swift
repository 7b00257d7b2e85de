/// One streamed attempt of a download: its feed, the consumer that reads it on a thread of its own, and what the
/// checkpoints record of it. The job starts it before the transfer and, once the transfer completes, waits for the
/// consumer to take the last byte (`finish`) before the digest is checked.
///
/// Design: `docs/design/streaming.md`.
final class StreamSession: @unchecked Sendable {
    // @unchecked: `thread` is touched only by the owner (the job's thread), in `start()` and `stop()`; `outcome`
    // only with `condition` locked.
    let feed: StreamFeed
    let consumer: any StreamConsumer
    let options: StreamOptions
    private let extractor: ArchiveExtractor?
    private let condition = ConditionLock()
    private var outcome: Result<Void, BraidError>?
    private var thread: WorkerThread?

    init(feed: StreamFeed, consumer: any StreamConsumer, options: StreamOptions) {
        self.feed = feed
        self.consumer = consumer
        self.options = options
        extractor = consumer as? ArchiveExtractor
    }

    func start() {
        let thread = WorkerThread { [self] in
            let result = Result { () throws(BraidError) in try consumer.consume(feed) }
            if case let .failure(error) = result { feed.fail(error) }
            condition.withLock {
                outcome = result
                condition.broadcast()
            }
        }
        self.thread = thread
        thread.start()
    }

    /// Ends a consumer still waiting for bytes (the transfer did not complete) and joins its thread.
    func stop() {
        feed.transferEnded(BraidError(.cancelled, "the download ended"))
        thread?.join()
        thread = nil
    }

    /// Fills in a checkpoint: no segment claims released bytes, and the stream's record says how far it went.
    func annotate(_ manifest: inout Manifest) {
        let released = feed.releasedForCheckpoint()
        manifest.segments = Manifest.segments(manifest.segments, releasedBelow: released)
        manifest.stream = Manifest.Stream(released: released, extraction: extractor?.progress)
    }

    /// `error` with where the progress is saved, when the reader's failure ended the transfer; as it is when it says
    /// itself what to do (a decompression bomb's remedy is a higher cap, not the same command again).
    func explain(_ error: BraidError, manifest: AnchoredPath) -> BraidError {
        guard let failure = feed.readerFailure, failure.message == error.message, failure.code == error.code,
            error.remedies.isEmpty
        else {
            return error
        }
        let again = extractor == nil ? "start the output over" : "resume unpacking"
        return BraidError(
            error.code, "\(error.message). Progress is saved in \(manifest); run the same command again to \(again).",
            cause: error.cause)
    }

    /// The transfer completed: waits until the consumer has taken every byte, or the download is interrupted.
    /// - Returns: what was unpacked, for an archive.
    func finish(length: Int64, interrupter: Interrupter) throws(BraidError) -> ExtractionSummary? {
        feed.transferCompleted(length: length)
        condition.lock()
        while outcome == nil {
            if let reason = interrupter.reason, reason != .paused {
                condition.unlock()
                feed.transferEnded(BraidError(.interrupted, "interrupted"))
                throw BraidError(.interrupted, "interrupted")
            }
            condition.wait(seconds: 0.1)
        }
        let result = outcome!
        condition.unlock()
        try result.get()
        return extractor?.summary
    }
}
