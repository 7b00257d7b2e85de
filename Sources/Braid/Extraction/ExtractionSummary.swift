/// What `--extract` unpacked: `DownloadResult.extraction`.
public struct ExtractionSummary: Sendable, Equatable {
    /// The directory the archive was unpacked into.
    public var directory: String
    /// Entries put in place by this run.
    public var written: Int
    /// Entries an earlier run had put in place, not written again.
    public var skipped: Int
    /// Entries refused, each with why (a name leading outside the directory, a link out, a device file); nothing
    /// of them was written.
    public var refused: [String]
    /// Bytes of file contents written by this run (holes of sparse files not counted).
    public var bytes: Int64

    public init(directory: String, written: Int, skipped: Int, refused: [String], bytes: Int64) {
        self.directory = directory
        self.written = written
        self.skipped = skipped
        self.refused = refused
        self.bytes = bytes
    }
}
