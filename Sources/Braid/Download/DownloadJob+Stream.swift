import SystemPackage

/// A streamed attempt (`DownloadOptions.stream`): the session that hands the bytes on, what an earlier run's record
/// spares this one, and the end of a stream whose file is not kept.
///
/// Design: `docs/design/streaming.md`.
extension DownloadJob {
    /// Opens the stream of this attempt and adjusts `plan` to what the earlier run's record spares: the bytes of an
    /// archive before the header it resumes at are not fetched again, unless the digest must read them.
    func openStream(
        _ stream: StreamOptions,
        plan: inout TransferPlan,
        resource: RemoteResource,
        file: PartFile,
        store: ManifestStore,
        hasher: PrefixHasher?
    ) throws(BraidError) -> StreamSession {
        let manifest = plan.progress.isEmpty ? nil : try? store.load()
        // What was unpacked is trusted on the boot that unpacked it: after a crash of the system, files renamed
        // into place may not have reached the disk.
        let earlier = manifest?.bootID == BootID.current ? manifest?.stream : nil
        let released = manifest?.stream?.released ?? 0
        let consumer: any StreamConsumer
        switch stream.target {
        case let .fileDescriptor(descriptor):
            consumer = DescriptorWriter(descriptor: descriptor)
        case .chunks:
            guard let chunks else { preconditionFailure("Invalid state: chunks without a channel") }
            consumer = ChunkReader(channel: chunks)
        case let .extraction(extraction):
            let extractor = ArchiveExtractor(
                options: extraction, resuming: earlier?.extraction, archiveLength: resource.length
            ) { [emit] message in emit(.notice(message)) }
            consumer = extractor
            if extractor.completeBefore > 0 {
                reportResume(of: extractor, released: released, digest: hasher != nil)
            }
        }
        if consumer.start > 0 && hasher == nil && plan.verified == nil {
            plan.skip(below: consumer.start)
        }
        let feed = StreamFeed(
            reading: try file.openForReading(), start: consumer.start, length: resource.length, hasher: hasher,
            freeing: stream.keepsFile ? nil : file, wake: { [interrupter] in interrupter.wake() })
        return StreamSession(feed: feed, consumer: consumer, options: stream)
    }

    private func reportResume(of extractor: ArchiveExtractor, released: Int64, digest: Bool) {
        let entries = "the \(extractor.completeBefore) entries already in place are not written again"
        if extractor.start == 0 {
            emit(
                .notice(
                    "unpacking resumes from the archive's first byte (it is compressed, or a zip, which cannot be "
                        + "read from the middle); \(entries)"
                        + (released > 0 ? "; \(released) bytes released earlier are fetched again" : "")))
        } else if digest && released > 0 {
            emit(
                .notice(
                    "unpacking resumes at byte \(extractor.start); \(entries); the first \(released) bytes are "
                        + "fetched again for the digest alone"))
        } else {
            emit(.notice("unpacking resumes at byte \(extractor.start); \(entries)"))
        }
    }

    /// After a streamed transfer completed: waits for the reader to take the last byte, checks the digest, and
    /// keeps the file (`StreamOptions.keepsFile`) or removes it and its manifest.
    /// - Returns: what was unpacked, for an archive; and whether the file was kept and must be committed.
    func finishStream(
        _ session: StreamSession,
        length: Int64,
        paths: DestinationPaths,
        verify: () throws(BraidError) -> Void
    ) throws(BraidError) -> ExtractionSummary? {
        let summary: ExtractionSummary?
        do {
            summary = try session.finish(length: length, interrupter: interrupter)
        } catch {
            if error.code == .interrupted, let reason = interrupter.reason { throw Self.stop(reason, paths: paths) }
            // A reader that went away after the last byte arrived is told what to do as one that went before.
            throw session.explain(error, manifest: paths.manifest)
        }
        do {
            try verify()
        } catch {
            guard error.code == .integrity else { throw error }
            let what = summary == nil ? "written out" : "unpacked into \(summary?.directory ?? "")"
            throw BraidError(
                .integrity,
                "\(error.message). The bytes already \(what) are not the file the digest describes: do not use them",
                remedies: error.remedies)
        }
        if !session.options.keepsFile { paths.removeDownloadState() }
        return summary
    }
}

extension DownloadJob.TransferPlan {
    /// Marks the bytes below `position` as on disk, without fetching them: an archive resumed at an entry's header
    /// never reads them again.
    mutating func skip(below position: Int64) {
        var ranges: [Range<Int64>] = []
        var done: [Int64] = []
        for (index, range) in self.ranges.enumerated() {
            let had = progress.isEmpty ? 0 : progress[index]
            if range.upperBound <= position {
                ranges.append(range)
                done.append(Int64(range.count))
            } else if range.lowerBound < position {
                ranges.append(range.lowerBound..<position)
                done.append(position - range.lowerBound)
                ranges.append(position..<range.upperBound)
                done.append(max(0, had - (position - range.lowerBound)))
            } else {
                ranges.append(range)
                done.append(had)
            }
        }
        self.ranges = ranges
        progress = done
    }
}
