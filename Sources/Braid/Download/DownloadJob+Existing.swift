import SystemPackage

/// A file already at the destination: refused, or (in list mode) verified in place and skipped.
extension DownloadJob {
    /// A file already at the final name: refused, or in list mode verified in place and skipped.
    func existingFinal(
        paths: DestinationPaths,
        resource: RemoteResource,
        started: Double
    ) throws(BraidError) -> DownloadResult {
        guard options.skipExistingIfVerified else {
            throw BraidError(.fileExists, "\(paths.final) already exists", remedies: [.overwrite])
        }
        return try verifyExisting(paths: paths, resource: resource, started: started)
    }

    /// Checks a file already at the destination against the server's length and the expected digest.
    private func verifyExisting(
        paths: DestinationPaths,
        resource: RemoteResource,
        started: Double
    ) throws(BraidError) -> DownloadResult {
        emit(.state(.verifying))
        let size = DestinationPaths.size(of: paths.final) ?? -1
        guard resource.length == nil || resource.length == size else {
            throw BraidError(
                .fileExists,
                "\(paths.final) exists with \(size) bytes but the server's file has \(resource.length ?? -1)",
                remedies: [.overwrite]
            )
        }
        let digest = try expectedDigest(for: resource, paths: paths)
        if let digest {
            let reader: FileDescriptor
            do {
                reader = try FileDescriptor.open(paths.final, .readOnly)
            } catch {
                throw BraidError.localIO("cannot open \(paths.final) to verify it", error)
            }
            let hasher = PrefixHasher(algorithm: digest.algorithm, reading: reader)
            hasher.start()
            defer { hasher.stop() }
            hasher.advance(to: size)
            hasher.finish(totalLength: size)
            let actual = try hasher.waitForDigest()
            guard actual == digest.bytes else {
                throw BraidError(
                    .fileExists,
                    "\(paths.final) exists but its \(digest.algorithm) does not match (from "
                        + "\(digest.source.rawValue))",
                    remedies: [.overwrite]
                )
            }
        }
        emit(
            .notice(
                "\(paths.final) is already complete (\(digest.map { "\($0.algorithm) verified" } ?? "length verified"))"
            ))
        let result = DownloadResult(
            path: paths.final.string,
            bytes: size,
            verifiedDigest: digest,
            resumedBytes: size,
            seconds: TransferEngine.now() - started,
            statistics: TransferMachine.Statistics(fetchedBytes: 0, retries: 0, timeToFirstByte: nil)
        )
        emit(.completed(result))
        return result
    }
}
