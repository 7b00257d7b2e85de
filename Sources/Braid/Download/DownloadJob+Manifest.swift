/// Whether an earlier run's manifest may be resumed from, which digest the file is held to, and forgetting partial
/// data that may not be resumed.
extension DownloadJob {
    /// What an earlier run left for this attempt: the manifest to resume from (nil to start afresh) and the digest
    /// the file is held to, as `DigestAuthority` decides between the recorded one and those `offered` now.
    struct Inheritance {
        var manifest: Manifest?
        var digest: ExpectedDigest?
    }

    /// The manifest to resume from and the digest to hold to, or an error for a manifest that must not be used
    /// silently, or whose digest this run contradicts. Partial data that cannot be resumed is discarded, keeping
    /// the record of a digest that outlives it.
    func loadManifest(
        _ store: ManifestStore,
        file: PartFile,
        resource: RemoteResource,
        offered: [ExpectedDigest]
    ) throws(BraidError) -> Inheritance {
        // Without a manifest, or once it is discarded, nothing is recorded, so nothing can be contradicted.
        func unrecorded() -> Inheritance { Inheritance(digest: unrecordedDigest(offered: offered)) }
        let manifest: Manifest
        do {
            guard let loaded = try store.load() else { return unrecorded() }
            manifest = loaded
        } catch {
            guard error.code == .manifest else { throw error }
            guard options.overwrite else {
                throw BraidError(.manifest, error.message, remedies: [.discardPartialDownload], cause: error.cause)
            }
            emit(.notice("\(error.message); discarding it, as overwriting was asked for"))
            try discardPartialData(file, store: store)
            return unrecorded()
        }
        guard manifest.belongs(to: resource.requestedURL) else {
            guard options.overwrite else {
                throw BraidError(
                    .manifest,
                    "\(store.path) belongs to another download (\(manifest.url))",
                    remedies: [.discardPartialDownload, .chooseAnotherDestination]
                )
            }
            emit(.notice("\(store.path) belongs to \(manifest.url); discarding it, as overwriting was asked for"))
            try discardPartialData(file, store: store)
            return unrecorded()
        }
        let authority = DigestAuthority(recorded: manifest.expectedDigest, offered: offered)
        var changes: [String] = []
        switch authority.decision {
        case let .contradiction(recorded, given):
            let error = Self.contradiction(recorded: recorded, given: given, manifest: store.path)
            guard options.overwrite else { throw error }
            emit(.notice("\(error.message); discarding it, as overwriting was asked for"))
            try discardPartialData(file, store: store)
            return unrecorded()
        case .remoteChanged:
            changes.append("\(manifest.expectedDigest?.algorithm.rawValue ?? "") digest changed")
        case let .holdTo(digest, overruled):
            reportOverruled(overruled, holding: digest)
        }
        let digest = authority.decision.digest
        guard manifest.keepsData else { return Inheritance(digest: digest) }
        if manifest.length != resource.length { changes.append("length \(manifest.length) → \(resource.length ?? -1)") }
        if manifest.etag != resource.etag {
            changes.append("ETag \(manifest.etag ?? "none") → \(resource.etag ?? "none")")
        }
        if manifest.lastModified != resource.lastModified { changes.append("Last-Modified changed") }
        // The data goes; a digest given for the file wanted stays, the server's for the file it served does not.
        let afterDiscard = authority.withoutData.decision.digest
        if !changes.isEmpty {
            emit(
                .notice("the remote file changed (\(changes.joined(separator: ", "))); discarding the partial download")
            )
            try discardPartialData(file, store: store, keepingRecordOf: afterDiscard, for: resource)
            return Inheritance(digest: afterDiscard)
        }
        let size = try file.currentSize()
        guard size == manifest.length else {
            emit(.notice("\(file.path) is missing or has the wrong size; starting over"))
            try discardPartialData(file, store: store, keepingRecordOf: afterDiscard, for: resource)
            return Inheritance(digest: afterDiscard)
        }
        return Inheritance(manifest: manifest, digest: digest)
    }

    /// Forgets the partial download: truncates the locked partial file (so the lock stays on the file that will be
    /// written next) and replaces the manifest with the record of `digest` when that outlives the data (see
    /// `keepOnlyRecord`), else removes it.
    func discardPartialData(
        _ file: PartFile,
        store: ManifestStore,
        keepingRecordOf digest: ExpectedDigest? = nil,
        for resource: RemoteResource? = nil
    ) throws(BraidError) {
        try keepOnlyRecord(of: digest, store: store, resource: resource)
        try file.resize(to: 0)
    }

    /// Leaves at the manifest's name only the record of `digest`, when it is one that outlives the data
    /// (`DigestAuthority.outlivesData`), so that the next run of this download is held to it too; removes the
    /// manifest otherwise.
    func keepOnlyRecord(of digest: ExpectedDigest?, store: ManifestStore, resource: RemoteResource?) throws(BraidError)
    {
        guard let digest, let resource, DigestAuthority.outlivesData(digest) else { return store.remove() }
        let record = Manifest(
            recordOf: digest, url: resource.requestedURL, resolvedURL: resource.resolvedURL,
            length: resource.length ?? 0)
        try store.save(record, durable: options.syncOnCompletion)
    }

    /// After an attempt that ended without its file (it failed, or starts afresh), removes what it leaves that holds
    /// no downloaded byte, while it still holds the lock on `file`: a manifest that records none (the record of a
    /// digest that outlives the data stays, see `keepOnlyRecord`), and a `FILE.part` nothing was written to. A
    /// manifest that records bytes, and partial data, always stay: they are what the next run resumes from. A
    /// manifest that cannot be read is left as it is, for the error that names it.
    func removeWhatHoldsNoBytes(
        _ file: PartFile, paths: DestinationPaths, store: ManifestStore, resource: RemoteResource
    ) {
        let manifest: Manifest?
        do {
            manifest = try store.load()
        } catch {
            return
        }
        if let manifest {
            guard !manifest.recordsDownloadedBytes else { return }
            if manifest.keepsData { try? keepOnlyRecord(of: manifest.expectedDigest, store: store, resource: resource) }
        }
        guard !file.holdsData, file.isStill(at: paths.part) else { return }
        try? paths.part.unlink()
    }

    /// Removes the partial file after a failure that leaves nothing to resume, keeping the record of the digest
    /// the file is held to when it outlives the data (best effort: if the record cannot be written, the old
    /// manifest stays, and it records the digest too).
    func removePartialData(
        _ paths: DestinationPaths, keepingRecordOf digest: ExpectedDigest?, for resource: RemoteResource
    ) {
        try? paths.part.unlink()
        try? keepOnlyRecord(of: digest, store: ManifestStore(path: paths.manifest), resource: resource)
    }
}
