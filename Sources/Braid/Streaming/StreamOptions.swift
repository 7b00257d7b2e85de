/// A download whose bytes are used while they arrive: written in order to a descriptor (`-o -`), handed out as
/// chunks (`Download.chunks`), or unpacked as an archive (`--extract`), while every connection fetches ahead within
/// `window`.
///
/// The window is on disk, in `FILE.part`: what is fetched ahead survives a crash and a resume, the whole-file
/// digest reads it where it reads every download, and its pages sit in the page cache, which the kernel reclaims
/// under pressure. Without `keepsFile`, the bytes the reader has taken (and the digest has read) are released from
/// `FILE.part` (its blocks freed), so the disk holds at most about one window of the file.
///
/// Design: `docs/design/streaming.md`.
public struct StreamOptions: Sendable, Equatable {
    /// What takes the file's bytes in order.
    public enum Target: Sendable, Equatable {
        /// Written in order to this open descriptor (standard output for `-o -`); the caller keeps it open.
        case fileDescriptor(Int32)
        /// Handed out in order through `Download.chunks`, which must be read while the download runs.
        case chunks
        /// Unpacked as an archive below a directory (see `ExtractionOptions`).
        case extraction(ExtractionOptions)
    }

    /// The default window: 256 MiB, enough for 8 connections to fetch well ahead of a reader that pauses.
    public static let defaultWindow: Int64 = 256 << 20
    /// The smallest window: 1 MiB.
    public static let minimumWindow: Int64 = 1 << 20

    public var target: Target
    /// How far, in bytes, the connections may fetch ahead of what the reader has taken. A server that does not
    /// accept ranges sends the file in one stream, which the window cannot hold back.
    public var window: Int64
    /// Whether the file is also kept under its name once complete and verified (`--keep-archive`); else
    /// `FILE.part` is released as it is read, and removed at the end.
    public var keepsFile: Bool

    public init(target: Target, window: Int64 = StreamOptions.defaultWindow, keepsFile: Bool = false) {
        self.target = target
        self.window = window
        self.keepsFile = keepsFile
    }

    func validate() throws(BraidError) {
        guard window >= Self.minimumWindow else {
            throw .usage("a stream window of \(window) bytes is too small; it must be at least 1 MiB")
        }
        if case let .extraction(extraction) = target { try extraction.validate() }
    }
}
