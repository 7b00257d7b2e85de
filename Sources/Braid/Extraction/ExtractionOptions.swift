/// Where and how an archive is unpacked while it downloads (`--extract DIR`): tar (plain, gzip, xz, zstd, bzip2)
/// and zip, read by libarchive as the bytes arrive in order.
///
/// Every entry's name goes through `SafeName.path(sanitising:)` and is created below `directory` one component at a
/// time without following links (`OpenDirectory`); links are kept only when they stay inside it, device files and
/// FIFOs are refused, setuid and setgid bits dropped, and each file is written under a temporary name and renamed
/// into place once complete. Design: `docs/design/streaming.md#extraction`.
public struct ExtractionOptions: Sendable, Equatable {
    /// The directory to unpack into, created if missing: the user's own, so a link in its path is followed.
    public var directory: String
    /// The most bytes the entries may declare in all, sparse files counted at their full size; nil for
    /// `defaultMaximum(archiveLength:)`. An archive that declares more is refused before the entry that would
    /// cross it is written.
    public var maximumUnpackedBytes: Int64?

    public init(directory: String, maximumUnpackedBytes: Int64? = nil) {
        self.directory = directory
        self.maximumUnpackedBytes = maximumUnpackedBytes
    }

    /// The cap when none is given: 100 times the archive, and at least 1 GiB. Real archives unpack to a few times
    /// their size (text, model weights and images compress 1 to 10 times); a bomb (a 10 GB sparse file declared in
    /// a 1 MB archive, a gigabyte of zeros in a megabyte of zstd) declares thousands of times. Unlimited when the
    /// server does not say how long the archive is.
    public static func defaultMaximum(archiveLength: Int64?) -> Int64 {
        guard let archiveLength else { return .max }
        let (scaled, overflow) = archiveLength.multipliedReportingOverflow(by: 100)
        return overflow ? .max : max(1 << 30, scaled)
    }

    func validate() throws(BraidError) {
        guard !directory.isEmpty else { throw .usage("--extract needs a directory") }
        if let maximumUnpackedBytes, maximumUnpackedBytes < 0 {
            throw .usage("the most bytes to unpack cannot be negative")
        }
    }
}
