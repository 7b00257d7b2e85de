import Synchronization

/// Hands a streamed download's chunks, one at a time, from the feed's reader thread to the task iterating
/// `Download.chunks`: the thread blocks until a chunk is asked for, so a slow iterator holds the download back
/// through the window rather than piling chunks up in memory.
final class ChunkChannel: Sendable {
    private struct State: ~Copyable {
        var waiting: CheckedContinuation<[UInt8]?, any Error>?
        var end: Result<Void, BraidError>?
    }

    private let state = Mutex(State())
    /// Signalled when a chunk is asked for, or the iterator is gone.
    private let asked = ConditionLock()

    /// The next chunk, once the reader has one; nil at the end; throws the download's error.
    func next() async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { continuation in
            let ended = state.withLock { state -> Result<Void, BraidError>? in
                guard let end = state.end else {
                    state.waiting = continuation
                    return nil
                }
                return end
            }
            if let ended {
                switch ended {
                case .success: continuation.resume(returning: nil)
                case let .failure(error): continuation.resume(throwing: error)
                }
                return
            }
            asked.withLock { asked.broadcast() }
        }
    }

    /// Hands `chunk` to the iterator once it asks; false when the stream ended first (`isEnding`).
    func deliver(_ chunk: [UInt8], unless isEnding: () -> Bool) -> Bool {
        while true {
            let waiting = state.withLock { state in
                defer { state.waiting = nil }
                return state.waiting
            }
            if let waiting {
                waiting.resume(returning: chunk)
                return true
            }
            if isEnding() { return false }
            asked.withLock { asked.wait(seconds: 0.1) }
        }
    }

    /// Ends the chunks: the iterator's next call returns nil, or throws `error`.
    func finish(_ error: BraidError?) {
        let waiting = state.withLock { state in
            if state.end == nil { state.end = error.map { .failure($0) } ?? .success(()) }
            defer { state.waiting = nil }
            return state.waiting
        }
        guard let waiting else { return }
        if let error { waiting.resume(throwing: error) } else { waiting.resume(returning: nil) }
    }
}

/// Reads the feed a chunk at a time for `ChunkChannel`.
struct ChunkReader: StreamConsumer {
    let channel: ChunkChannel
    let start: Int64 = 0
    static let chunkSize = 1 << 20

    func consume(_ feed: StreamFeed) throws(BraidError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 4096)
        defer { buffer.deallocate() }
        var position = start
        do throws(BraidError) {
            while true {
                let count = try feed.read(into: buffer)
                guard count > 0 else { break }
                guard channel.deliver(Array(buffer[0..<count]), unless: { feed.isEnding }) else {
                    throw .localIO("the download ended")
                }
                position += Int64(count)
                feed.release(upTo: position)
            }
        } catch {
            channel.finish(error)
            throw error
        }
        channel.finish(nil)
    }
}
