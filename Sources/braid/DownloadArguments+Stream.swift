import ArgumentParser
import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// `-o -` and `--extract DIR`: a download whose bytes are used while they arrive.
extension DownloadArguments {
    /// Whether the file goes to stdout.
    var writesToStandardOutput: Bool { output == "-" }

    func validateStream() throws {
        let streams = writesToStandardOutput || extract != nil
        if writesToStandardOutput && extract != nil {
            throw ValidationError("use either -o - or --extract DIR, not both")
        }
        if writesToStandardOutput && json { throw ValidationError("-o - writes the file to stdout: --json cannot") }
        if streams && (inputFile != nil || metalink || repair) {
            throw ValidationError("-o - and --extract take one http or https URL, without --metalink or --repair")
        }
        if let url, streams, ObjectStoreLocation.isObjectStoreURL(url) || Self.isLocalMetalink(url) {
            throw ValidationError("-o - and --extract take one http or https URL")
        }
        if !streams && (streamWindow != nil || keepArchive) {
            throw ValidationError("--stream-window and --keep-archive go with -o - or --extract DIR")
        }
        if extract == nil && maxUnpacked != nil { throw ValidationError("--max-unpacked goes with --extract DIR") }
        if extract?.isEmpty == true { throw ValidationError("--extract needs a directory") }
        if let window = streamWindow?.bytes, window < StreamOptions.minimumWindow {
            throw ValidationError("--stream-window must be at least 1M")
        }
    }

    /// Sets up the stream `-o -` or `--extract` asks for, if either does.
    func applyStream(to options: inout DownloadOptions) {
        let window = streamWindow?.bytes ?? StreamOptions.defaultWindow
        if writesToStandardOutput {
            // A reader that closes the pipe is an error to report, not a signal to die of.
            signal(SIGPIPE, SIG_IGN)
            options.destination = .directory(directory ?? ".")
            options.stream = StreamOptions(target: .fileDescriptor(STDOUT_FILENO), window: window)
        } else if let extract {
            options.stream = StreamOptions(
                target: .extraction(ExtractionOptions(directory: extract, maximumUnpackedBytes: maxUnpacked?.bytes)),
                window: window, keepsFile: keepArchive)
        }
    }
}
