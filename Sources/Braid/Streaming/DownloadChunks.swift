/// A download's bytes in order, as chunks of up to 1 MiB, while it runs: `Download.chunks`, for a download whose
/// `StreamOptions.target` is `.chunks`.
///
/// ```swift
/// var options = DownloadOptions()
/// options.stream = StreamOptions(target: .chunks)
/// let download = Download(url: url, options: options)
/// async let result = download.run()
/// for try await chunk in download.chunks { loader.feed(chunk) }
/// _ = try await result
/// ```
///
/// The connections fetch ahead of the iterator within the window; an iterator that stops asking holds the download
/// back (cancel the download to end it). The sequence ends once every byte is handed out; the digest is checked
/// after that, so `run()` may still fail with an `.integrity` error after the last chunk: only its result says the
/// bytes were right. One iterator per download.
public struct DownloadChunks: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    let channel: ChunkChannel

    public struct AsyncIterator: AsyncIteratorProtocol {
        let channel: ChunkChannel

        public mutating func next() async throws -> [UInt8]? {
            try await channel.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(channel: channel)
    }
}
