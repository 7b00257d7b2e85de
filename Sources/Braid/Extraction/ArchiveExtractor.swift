import COnDemand
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Unpacks an archive in order as it downloads (`--extract`), reading the `StreamFeed` through libarchive (tar,
/// plain or compressed with gzip, bzip2, xz or zstd, and zip as far as it can be read as a stream), each entry
/// written by `ArchiveExtractor+Entry.swift` under the rules of `ArchiveMember`.
///
/// It resumes where `Manifest.Extraction` says: entries already in place are read past, not written again, and an
/// uncompressed tar is read from the last entry header it recorded, so the bytes before it are not needed again.
///
/// Design: `docs/design/streaming.md#extraction`.
final class ArchiveExtractor: StreamConsumer, @unchecked Sendable {
    // @unchecked: the fields below are written on the consumer's thread; `progress` and `summary` are read by
    // other threads with `lock` held, and the rest only on the consumer's thread.
    let options: ExtractionOptions
    let start: Int64
    /// Entries before this index were put in place by an earlier run.
    let completeBefore: Int
    let firstEntry: Int
    let maximumUnpacked: Int64
    let notice: @Sendable (String) -> Void
    private let lock = ConditionLock()
    private var recorded: Manifest.Extraction
    private var counts = ExtractionSummary(directory: "", written: 0, skipped: 0, refused: [], bytes: 0)

    /// The directory entries go below, opened once; names below it are opened without following links.
    var root: OpenDirectory?
    /// Regular files this run put in place, by path: what a hard link may point to.
    var placed: Set<String> = []
    /// Directories made by this run and the permissions they get once every entry is in place.
    var directoryModes: [([SafeName], mode_t)] = []
    var declared: Int64 = 0
    /// The process's umask, applied to every entry's permissions as to any new file.
    let umask: mode_t

    /// - Parameters:
    ///   - resuming: what an earlier run recorded of this extraction, when it may be trusted.
    ///   - archiveLength: the archive's length, for the default cap on what it may unpack to.
    init(
        options: ExtractionOptions,
        resuming: Manifest.Extraction?,
        archiveLength: Int64?,
        notice: @escaping @Sendable (String) -> Void
    ) {
        self.options = options
        let earlier = resuming?.directory == options.directory ? resuming : nil
        completeBefore = earlier?.entries ?? 0
        start = earlier?.resumeOffset ?? 0
        firstEntry = earlier?.resumeOffset == nil ? 0 : earlier?.resumeEntry ?? 0
        recorded =
            earlier
            ?? Manifest.Extraction(directory: options.directory, entries: 0, resumeOffset: nil, resumeEntry: nil)
        maximumUnpacked = options.maximumUnpackedBytes ?? ExtractionOptions.defaultMaximum(archiveLength: archiveLength)
        self.notice = notice
        let mask = Glibc.umask(0o022)
        Glibc.umask(mask)
        umask = mask
        counts.directory = options.directory
        counts.skipped = completeBefore
    }

    /// How far the extraction is, for the next checkpoint.
    var progress: Manifest.Extraction { lock.withLock { recorded } }

    /// What this run unpacked.
    var summary: ExtractionSummary { lock.withLock { counts } }

    func consume(_ feed: StreamFeed) throws(BraidError) {
        try DestinationPaths.createDirectory(FilePath(options.directory))
        do {
            root = try OpenDirectory(opening: FilePath(options.directory))
        } catch {
            throw BraidError.localIO("cannot open the directory '\(options.directory)'", error)
        }
        try OnDemandLibrary.archive.load(for: "to unpack the archive")
        guard let archive = archive_read_new() else { throw BraidError.localIO("libarchive cannot start a reader") }
        defer { archive_read_free(archive) }
        // Only filters built into libarchive: none that runs an external program.
        archive_read_support_filter_none(archive)
        archive_read_support_filter_gzip(archive)
        archive_read_support_filter_bzip2(archive)
        archive_read_support_filter_xz(archive)
        archive_read_support_filter_lzma(archive)
        archive_read_support_filter_zstd(archive)
        archive_read_support_format_tar(archive)
        archive_read_support_format_gnutar(archive)
        archive_read_support_format_zip_streamable(archive)
        let source = ArchiveSource(feed: feed, start: start)
        let opened = archive_read_open(
            archive, Unmanaged.passUnretained(source).toOpaque(), nil,
            { _, client, buffer in ArchiveSource.from(client).next(buffer) }, nil)
        try withExtendedLifetime(source) { () throws(BraidError) in
            try check(opened, archive, source: source, doing: "reading the archive")
            try unpack(archive, source: source)
        }
        // Whatever follows the end of the archive (a tar's padding) is not read by libarchive: it is released too.
        try source.drain()
        try applyDirectoryModes()
    }

    private func unpack(_ archive: OpaquePointer, source: ArchiveSource) throws(BraidError) {
        var index = firstEntry
        while true {
            var entry: OpaquePointer?
            let status = archive_read_next_header(archive, &entry)
            if status == ARCHIVE_EOF { break }
            try check(status, archive, source: source, doing: "reading entry \(index + 1)")
            guard let entry else { break }
            // An uncompressed tar can be read again from this header; the entries before it are in place.
            let resumable =
                archive_filter_count(archive) == 1
                && archive_format(archive) & ARCHIVE_FORMAT_BASE_MASK
                    == ARCHIVE_FORMAT_TAR
            let header = start + archive_read_header_position(archive)
            if index < completeBefore {
                try check(archive_read_data_skip(archive), archive, source: source, doing: "reading past an entry")
            } else {
                try write(entry, index: index, from: archive, source: source)
            }
            index += 1
            lock.withLock {
                recorded.entries = max(recorded.entries, index)
                recorded.resumeOffset = resumable ? header : nil
                recorded.resumeEntry = resumable ? index - 1 : nil
            }
        }
    }

    /// Turns a libarchive status below `ARCHIVE_WARN` into an error: the feed's own when reading failed, else
    /// libarchive's message. A warning is passed on as a notice.
    func check(_ status: Int32, _ archive: OpaquePointer, source: ArchiveSource, doing what: String) throws(BraidError)
    {
        if let failure = source.failure { throw failure }
        let message = archive_error_string(archive).map { String(cString: $0) } ?? "unknown error"
        if status == ARCHIVE_WARN {
            notice("archive: \(PrintableText.escapingControlCharacters(message))")
            return
        }
        guard status == ARCHIVE_OK else {
            throw BraidError.integrity(
                "\(what): \(PrintableText.escapingControlCharacters(message)) (the archive is damaged or not one "
                    + "that can be unpacked as it downloads: tar, tar.gz, tar.bz2, tar.xz, tar.zst or zip)")
        }
    }

    func counts(_ field: WritableKeyPath<ExtractionSummary, Int>) {
        lock.withLock { counts[keyPath: field] += 1 }
    }

    func refuse(_ name: String, _ reason: String) {
        let text = "refused '\(PrintableText.escapingControlCharacters(name))': \(reason)"
        lock.withLock { counts.refused.append(text) }
        notice("archive: \(text)")
    }

    func wrote(bytes: Int64) {
        lock.withLock { counts.bytes += bytes }
    }
}

/// libarchive's read callback: hands it the feed's bytes a block at a time, releasing each block once it asks for
/// the next (libarchive keeps a block only until then).
final class ArchiveSource {
    let feed: StreamFeed
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
    private var position: Int64
    private(set) var failure: BraidError?

    init(feed: StreamFeed, start: Int64) {
        self.feed = feed
        position = start
    }

    deinit {
        buffer.deallocate()
    }

    static func from(_ client: UnsafeMutableRawPointer?) -> ArchiveSource {
        Unmanaged<ArchiveSource>.fromOpaque(client!).takeUnretainedValue()
    }

    func next(_ pointer: UnsafeMutablePointer<UnsafeRawPointer?>?) -> Int {
        feed.release(upTo: position)
        do {
            let count = try feed.read(into: buffer)
            position += Int64(count)
            pointer?.pointee = UnsafeRawPointer(buffer.baseAddress)
            return count
        } catch {
            failure = error
            return Int(ARCHIVE_FATAL)
        }
    }

    /// Reads and releases the rest of the file.
    func drain() throws(BraidError) {
        feed.release(upTo: position)
        while true {
            let count = try feed.read(into: buffer)
            guard count > 0 else { return }
            position += Int64(count)
            feed.release(upTo: position)
        }
    }
}
