import SystemPackage

/// Measuring a transfer (`braid bench`): the first `byteLimit` bytes, into a scratch partial file or nowhere.
/// Nothing is kept: no manifest, no digest, no rename; only the length received is checked.
extension DownloadJob {
    func measure(
        _ resource: RemoteResource,
        mirrors: [RemoteResource],
        started: Double,
        lifecycle: inout DownloadLifecycle
    ) throws(BraidError) -> AttemptOutcome {
        let place = try DestinationPaths.resolve(
            options.destination, suggestedFilename: resource.suggestedFilename, url: resource.requestedURL)
        // Discarded data needs no directory: nothing is written.
        let paths =
            options.discardData
            ? DestinationPaths(final: AnchoredPath(place.path)) : try DestinationPaths.open(place, creating: true)
        let segmented = resource.isSegmentable
        let wanted = min(resource.length ?? Int64.max, options.byteLimit ?? Int64.max)
        // A plan limited to the prefix measured.
        let plan = TransferPlan(ranges: segmented ? freshPlan(length: wanted) : [0..<wanted], segmented: segmented)
        var file: PartFile?
        if !options.discardData {
            file = try PartFile(lockingAt: paths.part)
            try file?.prepare(length: segmented ? resource.length : 0)
        }
        defer {
            if let file {
                file.close()
                try? paths.part.unlink()
            }
        }
        lifecycle.advance()
        let transfer = try runTransfer(resource, mirrors: mirrors, plan: plan, file: file, paths: paths)
        lifecycle.record(transfer.statistics)
        if let restart = DownloadLifecycle.Restart(transfer.outcome) { return .restart(restart) }
        let length: Int64
        switch transfer.outcome {
        case let .completed(finalLength): length = finalLength
        case let .failed(error): throw error
        case let .stopped(reason): throw Self.stop(reason, paths: paths, resumable: false)
        default: preconditionFailure("Invalid state: \(transfer.outcome) is a restart")
        }
        guard length == wanted || (wanted == Int64.max && !segmented) else {
            throw BraidError.integrity("received \(length) bytes, expected \(wanted)")
        }
        lifecycle.measured()
        let result = DownloadResult(
            path: paths.finalPath.string, bytes: length, verifiedDigest: nil, resumedBytes: 0,
            seconds: TransferEngine.now() - started, statistics: lifecycle.spent)
        emit(.completed(result))
        return .done(result)
    }
}
