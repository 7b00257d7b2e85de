#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A segmented, resumable, verified download of one URL.
///
/// ```swift
/// let download = Download(url: "https://example.org/big.iso", options: options)
/// Task { for await event in download.events { print(event) } }
/// let result = try await download.run()
/// ```
///
/// `run()` performs the blocking work on a thread of its own, so it never occupies a Swift concurrency thread.
/// Progress is saved as it goes: calling `run()` again (in this process or another) resumes where it stopped.
public final class Download: Sendable {
    public let url: String
    public let options: DownloadOptions
    /// Everything the download reports, in order; finishes when `run()` returns.
    public let events: AsyncStream<DownloadEvent>

    private let continuation: AsyncStream<DownloadEvent>.Continuation
    private let interrupter = Interrupter()

    public init(url: String, options: DownloadOptions = DownloadOptions()) {
        self.url = url
        self.options = options
        (events, continuation) = AsyncStream.makeStream(of: DownloadEvent.self, bufferingPolicy: .bufferingNewest(1024))
    }

    /// Downloads, verifies and moves the file into place; throws a `BraidError` saying what went wrong.
    public func run() async throws(BraidError) -> DownloadResult {
        let job = DownloadJob(url: url, options: options, interrupter: interrupter) { [continuation] event in
            continuation.yield(event)
        }
        let result: Result<DownloadResult, BraidError> = await withCheckedContinuation { waiter in
            DetachedThread.start {
                waiter.resume(returning: Result { () throws(BraidError) in try job.run() })
            }
        }
        continuation.finish()
        return try result.get()
    }

    /// Asks the running download to stop: it saves its progress and `run()` throws with code `.interrupted`
    /// (or `.cancelled`).
    public func stop(_ reason: StopReason) {
        interrupter.stop(reason)
    }
}
