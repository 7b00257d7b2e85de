/// Data that failed its whole-file digest is kept, and a repair pass fetches the file again to rewrite only the
/// bytes that differ (`DownloadOptions.repair`).
///
/// Lifecycle of `FILE.braid` across runs: a download whose complete data fails its digest keeps `FILE.part` and
/// records the failed digest (every segment done). A run without repair resumes that as complete and verifies it
/// again, fetching nothing. A run with repair starts a pass: the manifest records the pass and its own progress,
/// so that any later run, with or without repair, continues the pass instead of trusting the data. The pass ends
/// verified (the file moves into place) or failing again (the failed digest is recorded anew, the pass is over).
extension DownloadJob {
    /// The plan for a download whose manifest was accepted: the continuation of a repair pass under way, a new
    /// repair pass of complete data when repair is asked for, or else an ordinary resume. `digest` is the one
    /// `DigestAuthority` holds the file to, which a repair is held to as much as any download.
    func resumedPlan(_ manifest: Manifest, digest: ExpectedDigest?, paths: DestinationPaths) -> TransferPlan {
        if let repair = manifest.repair {
            emit(.notice("continuing the repair of \(paths.part)"))
            return TransferPlan(
                ranges: manifest.segments.map { $0.start..<$0.end },
                progress: manifest.trustedProgress(onBoot: BootID.current),
                segmented: true, digest: digest, failedDigest: manifest.failedDigest,
                repairing: repair.rewritten.map(\.range))
        }
        if options.repair && manifest.isComplete(onBoot: BootID.current) {
            emit(.notice("repairing \(paths.part): fetching it all again to rewrite only the bytes that differ"))
            return TransferPlan(
                ranges: freshPlan(length: manifest.length), segmented: true, digest: digest,
                failedDigest: manifest.failedDigest, repairing: [])
        }
        return TransferPlan(
            ranges: manifest.segments.map { $0.start..<$0.end },
            progress: manifest.trustedProgress(onBoot: BootID.current),
            segmented: true, digest: digest, failedDigest: manifest.failedDigest)
    }

    /// Records that a repair pass has begun, before its first byte is compared: from now on no run trusts the data
    /// as it stands, and what the pass rewrites is reported even if it is interrupted.
    func beginRepair(_ checkpoints: TransferEngine.Checkpoints, plan: TransferPlan) throws(BraidError) {
        var manifest = checkpoints.template
        manifest.segments = plan.ranges.map {
            Manifest.Segment(start: $0.lowerBound, end: $0.upperBound, done: 0, durable: 0)
        }
        checkpoints.annotate?(&manifest)
        try checkpoints.store.save(manifest, durable: true)
    }

    /// The error for complete data that failed `expected`, having kept it with its manifest (every segment done,
    /// the failed digest recorded) for a repair; a download that cannot be resumed is discarded as before.
    func keepAfterMismatch(
        _ file: PartFile,
        expected: ExpectedDigest,
        actual: [UInt8],
        plan: TransferPlan,
        repair: RepairingSink?,
        checkpoints: TransferEngine.Checkpoints?,
        resource: RemoteResource,
        paths: DestinationPaths
    ) -> BraidError {
        let actualHex = ExpectedDigest.encodeHex(actual)
        let mismatch =
            "\(expected.algorithm) mismatch: expected \(expected.hex) (from \(expected.source.rawValue)), got \(actualHex)"
        do throws(BraidError) {
            guard let checkpoints else {
                throw BraidError.integrity("the server cannot resume, so the data cannot be repaired")
            }
            var manifest = checkpoints.template
            manifest.bootID = BootID.current
            manifest.segments = plan.ranges.map {
                let length = $0.upperBound - $0.lowerBound
                return Manifest.Segment(start: $0.lowerBound, end: $0.upperBound, done: length, durable: length)
            }
            manifest.failedDigest = Manifest.FailedDigest(
                algorithm: expected.algorithm, expectedHex: expected.hex, actualHex: actualHex)
            manifest.repair = nil
            // Durable as recorded: the data is synced before the manifest says every byte of it is.
            try file.synchronize()
            try checkpoints.store.save(manifest, durable: true)
        } catch {
            // The digest is still recorded when it outlives the data: the next run is held to it too.
            removePartialData(paths, keepingRecordOf: expected, for: resource)
            return .integrity(
                "\(mismatch); the downloaded data was discarded (\(error.message)) and no file was written")
        }
        guard let repair else {
            return BraidError(.integrity, "\(mismatch); the data is kept in \(paths.part)", remedies: [.repair])
        }
        // Repairing again would fetch the same bytes: no remedy is offered.
        return .integrity(
            "\(expected.algorithm) mismatch after repair: the server's bytes do not match the expected digest either "
                + "(expected \(expected.hex) (from \(expected.source.rawValue)), got \(actualHex); "
                + "\(Self.rangeCount(repair.rewrittenRanges)) rewritten); the data is kept in \(paths.part)")
    }

    /// The line reporting a finished repair: how many ranges and bytes were rewritten, and which.
    static func repairSummary(_ ranges: [Range<Int64>]) -> String {
        guard !ranges.isEmpty else { return "repaired nothing: every byte matched the server's" }
        let shown = ranges.prefix(20).map { "\($0.lowerBound)-\($0.upperBound - 1)" }
        let more = ranges.count > shown.count ? ", and \(ranges.count - shown.count) more" : ""
        return "repaired \(rangeCount(ranges)): " + shown.joined(separator: ", ") + more
    }

    /// `2 ranges (65536 bytes)`.
    private static func rangeCount(_ ranges: [Range<Int64>]) -> String {
        let bytes = ranges.reduce(Int64(0)) { $0 + Int64($1.count) }
        return "\(ranges.count) range\(ranges.count == 1 ? "" : "s") (\(bytes) byte\(bytes == 1 ? "" : "s"))"
    }
}
