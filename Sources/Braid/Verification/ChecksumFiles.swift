import Synchronization

/// The checksum files (`DownloadOptions.checksumFile`) the downloads of one manager, or one download on its own, were
/// given: each read and indexed once, the first time a download asks for it. A list of ten thousand files read its
/// ten-thousand-line `SHA256SUMS` again twice a file, for minutes of CPU.
///
/// A file that cannot be read, or holds no checksum line, is that error for every download that asks.
final class ChecksumFiles: Sendable {
    private let files = Mutex<[String: Result<ChecksumFile, BraidError>]>([:])

    init() {}

    /// The checksum file at `path`, read the first time it is asked for (the others asking meanwhile wait for it).
    func file(at path: String) throws(BraidError) -> ChecksumFile {
        try files.withLock { files in
            if let known = files[path] { return known }
            let read = Result { () throws(BraidError) in try ChecksumFile(readingAt: path) }
            files[path] = read
            return read
        }.get()
    }
}
