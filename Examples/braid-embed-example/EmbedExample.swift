import Braid

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `braid-embed-example URL DIR`: an app embedding Braid through its public API only.
///
/// It downloads URL into DIR, printing progress, pauses the download once a third of it has arrived, resumes
/// it as soon as it is paused, and exits 0 only when the file is in place with its length (and its digest, when
/// the server sent one) verified.
@main
struct EmbedExample {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 else {
            printError("usage: braid-embed-example URL DIR")
            exit(2)
        }
        var options = DownloadOptions()
        options.destination = .directory(arguments[2])
        options.connections = 4
        let download = Download(url: arguments[1], options: options)

        // One consumer reads the events while `run()` works; it also drives the pause and the resume.
        let watcher = Task {
            let clock = ContinuousClock()
            var lastShown: ContinuousClock.Instant?
            var pauseAsked = false
            for await event in download.events {
                switch event {
                case let .started(resource, path, resumedBytes):
                    let size = resource.length.map(Formatting.bytes) ?? "unknown size"
                    if resumedBytes > 0 {
                        print("resumed \(path) at \(Formatting.bytes(resumedBytes)) of \(size)")
                    } else {
                        print("downloading \(path) (\(size))")
                    }
                case let .progress(progress):
                    if lastShown.map({ clock.now - $0 >= .seconds(1) }) ?? true {
                        lastShown = clock.now
                        print(describe(progress))
                    }
                    // Pause once, a third of the way in (or at the first bytes when the length is unknown).
                    if !pauseAsked && download.state == .downloading
                        && (progress.fraction ?? 1) >= 1.0 / 3 && progress.downloadedBytes > 0
                    {
                        pauseAsked = true
                        print("pausing at \(describe(progress))")
                        download.pause()
                    }
                case .state(.paused):
                    print("paused: progress is saved; resuming")
                    download.resume()
                case let .retry(reason, delay):
                    print("retrying in \(Formatting.fixed(delay, digits: 1)) s: \(reason)")
                case let .notice(message):
                    print("note: \(message)")
                case .state, .completed:
                    break
                }
            }
            return pauseAsked
        }

        do {
            let result = try await download.run()
            let paused = await watcher.value
            let check = result.verifiedDigest.map { "\($0.algorithm) \($0.hex) verified" } ?? "length verified"
            print("saved \(result.path): \(Formatting.bytes(result.bytes)), \(check)")
            if !paused { print("(it finished before it could be paused)") }
            exit(0)
        } catch {
            _ = await watcher.value
            printError("braid-embed-example: \(error.message) [\(error.code)]")
            exit(1)
        }
    }

    private static func describe(_ progress: DownloadProgress) -> String {
        var text = Formatting.bytes(progress.downloadedBytes)
        if let total = progress.totalBytes, let fraction = progress.fraction {
            text += " of \(Formatting.bytes(total)) (\(Formatting.fixed(fraction * 100, digits: 0)) %)"
        }
        return text
            + ", \(Formatting.bytes(Int64(progress.bytesPerSecond)))/s, \(progress.activeConnections) connections"
    }

    private static func printError(_ message: String) {
        var line = message + "\n"
        line.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
    }
}
