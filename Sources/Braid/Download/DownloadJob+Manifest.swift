/// Whether an earlier run's manifest may be resumed from, and forgetting partial data that may not.
extension DownloadJob {
    /// The manifest to resume from, nil to start afresh, or an error for one that must not be used silently.
    func loadManifest(
        _ store: ManifestStore,
        file: PartFile,
        resource: RemoteResource,
        digest: ExpectedDigest?
    ) throws(BraidError) -> Manifest? {
        let manifest: Manifest
        do {
            guard let loaded = try store.load() else { return nil }
            manifest = loaded
        } catch {
            guard error.code == .manifest else { throw error }
            guard options.overwrite else {
                throw BraidError(.manifest, error.message, remedies: [.discardPartialDownload], cause: error.cause)
            }
            emit(.notice("\(error.message); discarding it, as overwriting was asked for"))
            try discardPartialData(file, store: store)
            return nil
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
            return nil
        }
        var changes: [String] = []
        if manifest.length != resource.length { changes.append("length \(manifest.length) → \(resource.length ?? -1)") }
        if manifest.etag != resource.etag {
            changes.append("ETag \(manifest.etag ?? "none") → \(resource.etag ?? "none")")
        }
        if manifest.lastModified != resource.lastModified { changes.append("Last-Modified changed") }
        // Only a server's digest says something about the file; a user's may simply have been corrected.
        if let recorded = manifest.expectedDigest, let digest, recorded.source.isFromServer, digest.source.isFromServer,
            recorded.algorithm == digest.algorithm, recorded.bytes != digest.bytes
        {
            changes.append("\(digest.algorithm) digest changed")
        }
        if !changes.isEmpty {
            emit(
                .notice("the remote file changed (\(changes.joined(separator: ", "))); discarding the partial download")
            )
            try discardPartialData(file, store: store)
            return nil
        }
        let size = try file.currentSize()
        guard size == manifest.length else {
            emit(.notice("\(file.path) is missing or has the wrong size; starting over"))
            try discardPartialData(file, store: store)
            return nil
        }
        return manifest
    }

    /// Forgets the partial download: truncates the locked partial file (so the lock stays on the file that will be
    /// written next) and removes the manifest.
    func discardPartialData(_ file: PartFile, store: ManifestStore) throws(BraidError) {
        store.remove()
        try file.resize(to: 0)
    }
}
