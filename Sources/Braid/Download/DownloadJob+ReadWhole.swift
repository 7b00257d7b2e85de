import SystemPackage

/// A small file of a list that the probe read to its end (`ParkedResponse.body`, `Prober.readsWhole`): its bytes are
/// in memory before anything is written.
extension DownloadJob {
    /// Puts a file the probe read whole where the look before the probe found its place free (`lookBeforeProbe`):
    /// checked in memory against its digest, written into an unnamed file, and given its name (`UnnamedFile`),
    /// with no `FILE.part`, lock or manifest. Nil when it cannot go this way, and the attempt goes on with a partial
    /// file as for any other file: the file system makes or names no unnamed file, or the bytes fail their digest
    /// (the partial file then keeps them, with the manifest a repair needs, as it keeps any file's).
    ///
    /// A file that appeared at the final name meanwhile is left alone, as a partial file's rename leaves it
    /// (`DestinationPaths.moveIntoPlace`).
    func placeReceived(
        _ body: [UInt8],
        of first: ParkedResponse,
        resource: RemoteResource,
        paths: DestinationPaths,
        started: Double,
        lifecycle: inout DownloadLifecycle
    ) throws(BraidError) -> AttemptOutcome? {
        guard
            let placed = try ReadWhole.checkAndPlace(
                body, of: resource, at: paths, options: options, checksumFiles: checksumFiles,
                notice: { emit(.notice($0)) })
        else { return nil }
        let length = Int64(body.count)
        let digest = placed.digest
        if !first.startReported { reportStart(of: resource, at: paths.finalPath.string) }
        // Transferred, verified (in memory, above) and committed: the stages a partial file goes through.
        lifecycle.advance()
        lifecycle.record(ReadWhole.statistics(length: length, firstByteSeconds: first.firstByteSeconds))
        lifecycle.advance()
        emit(.state(.verifying))
        lifecycle.advance()
        lifecycle.advance()
        var result = DownloadResult(
            path: paths.finalPath.string, bytes: length, verifiedDigest: digest, resumedBytes: 0,
            seconds: TransferEngine.now() - started, statistics: lifecycle.spent)
        result.lengthVerified = resource.length != nil
        emit(.completed(result))
        return .done(result)
    }

    /// The end of a download whose first GET, run on the pool's thread (`PooledStart`), read the file whole: placed
    /// there as `attempt` places it (`placeReceived`), where that is all there is to do, so that no other thread
    /// takes the download up. Nil, with no file written, when there is more: a name the server gave, a file to
    /// replace or to flush (a wait for the disk would hold up every request on the pool), or one `placeReceived`
    /// cannot place. The download then goes on from `found` on a thread of its own (`run(continuing:)`).
    func placeOnPool(_ found: Probed, started: Double) throws(BraidError) -> DownloadResult? {
        guard case let .found(resource, _, first?, opened?) = found, let body = first.body, !options.syncOnCompletion,
            !options.overwrite
        else { return nil }
        // Claimed as `attempt` claims it, which does so again, for the same URL, when the name is another.
        let (paths, lookedAt) = try claimDestination(for: resource, opened: opened)
        guard lookedAt else { return nil }
        // As `run` goes from its probe to `attempt`.
        var lifecycle = DownloadLifecycle()
        lifecycle.advance()
        let placed = try placeReceived(
            body, of: first, resource: resource, paths: paths, started: started, lifecycle: &lifecycle)
        guard case let .done(result) = placed else { return nil }
        return result
    }

    /// The transfer of a file the probe read to its end, into `file`, the partial file, with the statistics a
    /// transfer of it in one request would have given: where `placeReceived` could not place it. The probe reported
    /// its start and its progress (`Prober.onWholeBodyStart`).
    func writeReceived(
        _ body: [UInt8],
        of first: ParkedResponse,
        file: PartFile,
        hasher: PrefixHasher?
    ) throws(BraidError) -> TransferRun {
        let length = Int64(body.count)
        // `withUnsafeBytes` rethrows untyped errors: the failure comes out as a value.
        let failure = body.withUnsafeBytes { bytes -> BraidError? in
            do throws(BraidError) {
                try file.write(bytes, at: 0)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        hasher?.advance(to: length)
        return TransferRun(
            outcome: .completed(length: length),
            statistics: ReadWhole.statistics(length: length, firstByteSeconds: first.firstByteSeconds),
            resumedBytes: 0, written: [TransferMachine.WrittenSpan(range: 0..<length, peer: nil)])
    }
}
