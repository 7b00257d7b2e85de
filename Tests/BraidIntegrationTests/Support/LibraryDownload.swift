import Braid
import BraidTestSupport
import Foundation
import Synchronization

/// Runs a download in-process through the public API and keeps every event it reported.
struct LibraryDownload {
    let result: Result<DownloadResult, BraidError>
    let events: [DownloadEvent]
    let path: String

    var notices: [String] {
        events.compactMap { if case let .notice(text) = $0 { text } else { nil } }
    }

    var retries: [(reason: String, delay: Double)] {
        events.compactMap { if case let .retry(reason, delay) = $0 { (reason, delay) } else { nil } }
    }

    var error: BraidError? {
        if case let .failure(error) = result { return error }
        return nil
    }

    static func run(
        _ url: String,
        into directory: TemporaryDirectory,
        name: String = "out.bin",
        _ configure: (inout DownloadOptions) -> Void = { _ in }
    ) async -> LibraryDownload {
        var options = DownloadOptions()
        options.destination = .file(directory.appending(name).path)
        options.connections = 4
        options.syncOnCompletion = false
        configure(&options)
        let download = Download(url: url, options: options)
        let collected = Collected()
        let collector = Task { for await event in download.events { collected.append(event) } }
        let result: Result<DownloadResult, BraidError>
        do {
            result = .success(try await download.run())
        } catch {
            result = .failure(error)
        }
        await collector.value
        let path: String
        if case let .file(file) = options.destination { path = file } else { path = "" }
        return LibraryDownload(result: result, events: collected.events, path: path)
    }

    private final class Collected: Sendable {
        private let storage = Mutex<[DownloadEvent]>([])
        func append(_ event: DownloadEvent) { storage.withLock { $0.append(event) } }
        var events: [DownloadEvent] { storage.withLock { $0 } }
    }
}
