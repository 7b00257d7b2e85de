import Logging
import SystemPackage

/// A file already at the destination: refused, (in list mode) verified in place and skipped, or (with
/// timestamping) kept when the server's is not newer.
extension DownloadJob {
    /// The file a timestamping download asks the server about: `-o FILE`, or the URL's name in the directory. A
    /// name the server proposes (`Content-Disposition`) is known only from an answer that is not `304`; that file is
    /// then compared by its `Last-Modified` (`keepIfUpToDate`). A copy that does not match the digest given for it
    /// (by the user, a checksum file or a Metalink: a `304` carries none of the server's) is not asked about but
    /// downloaded again.
    func timestampedCopy() throws(BraidError) -> LocalCopy? {
        let place = try? DestinationPaths.resolve(options.destination, suggestedFilename: nil, url: url)
        guard let paths = place.flatMap({ try? DestinationPaths.open($0, creating: false) }),
            let copy = LocalCopy.at(paths.final)
        else { return nil }
        guard let digest = try heldDigest(for: nil, paths: paths),
            try !Self.file(at: paths.final, size: copy.size, matches: digest)
        else { return copy }
        emit(
            .notice(
                "\(copy.path) does not match its \(digest.algorithm) (from \(digest.source.rawValue)); "
                    + "downloading it again"))
        return nil
    }

    /// The server answered the conditional probe `304 Not Modified`: the local copy is left as it is.
    func notModified(_ copy: LocalCopy, started: Double) -> DownloadResult {
        let since = HTTPDate.format(secondsSince1970: copy.modified)
        emit(.notice("\(copy.path) is up to date (not modified on the server since \(since))"))
        return unmodified(copy, started: started)
    }

    /// With timestamping, after a probe that was answered with the server's file: the result of keeping the file at
    /// the final name when the server's is not newer and has the same length (a server that ignores
    /// `If-Modified-Since`, as `wget -N` judges it) and the file matches the digest it is held to, or nil when it is
    /// to be downloaded again and replaced.
    func keepIfUpToDate(
        paths: DestinationPaths, resource: RemoteResource, started: Double
    ) throws(BraidError) -> DownloadResult? {
        guard let copy = LocalCopy.at(paths.final) else { return nil }
        let local = HTTPDate.format(secondsSince1970: copy.modified)
        let reason: String
        switch copy.freshness(of: resource, wallClock: TransferEngine.wallClock()) {
        case .upToDate:
            if let digest = try heldDigest(for: resource, paths: paths),
                try !Self.file(at: paths.final, size: copy.size, matches: digest)
            {
                emit(
                    .notice(
                        "\(paths.final) is as new as the server's but does not match its \(digest.algorithm) (from "
                            + "\(digest.source.rawValue)); downloading it again"))
                return nil
            }
            emit(
                .notice(
                    "\(paths.final) is up to date (the server's copy, modified \(resource.lastModified ?? ""), is not "
                        + "newer and has the same length)"
                ))
            return unmodified(copy, started: started)
        case .serverNewer:
            reason = "the server's copy (modified \(resource.lastModified ?? "")) is newer than this one (\(local))"
        case .sizeDiffers:
            reason =
                "the server's copy is not newer but its length differs (\(resource.length ?? -1) bytes, "
                + "\(copy.size) here)"
        case .undated:
            reason = "the server sends no Last-Modified to compare with"
        }
        logger.debug("\(paths.final): \(reason); downloading it again")
        return nil
    }

    /// The result of a download that left the file at the destination as it was.
    private func unmodified(_ copy: LocalCopy, started: Double) -> DownloadResult {
        var result = DownloadResult(
            path: copy.path.string,
            bytes: copy.size,
            verifiedDigest: nil,
            resumedBytes: copy.size,
            seconds: TransferEngine.now() - started,
            statistics: TransferMachine.Statistics(fetchedBytes: 0, retries: 0, timeToFirstByte: nil)
        )
        result.unmodified = true
        emit(.completed(result))
        return result
    }

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

    /// In list mode, a file already at the destination of an object a listing described (`DownloadOptions.listed`),
    /// judged against the listing as `verifyExisting` judges it against a probe: the result of skipping it with
    /// no request when the listing shows it to be the object, by the MD5 its `ETag` is or, without one (a multipart
    /// upload), by its length and date; refused as a probe's answer would refuse it when the listing shows it is
    /// not. Nil, leaving the download to probe as usual, when nothing is there, a manifest is (a resume), or the
    /// listing cannot tell: a file that does not match an `ETag` shaped like an MD5 (which an object encrypted with
    /// KMS or a customer key has without being one; the `HEAD` says), or nothing but a length to go by.
    func listedExisting(started: Double) throws(BraidError) -> DownloadResult? {
        guard let listed = options.listed, options.skipExistingIfVerified, !options.overwrite, !options.timestamping,
            !options.measures, options.stream == nil,
            let place = try? place(suggestedFilename: nil, url: url),
            let present = try? DestinationPaths.openIfPresent(place, known: directories),
            LocalCopy.at(present.final) != nil, (try? present.refuseLinks()) == true
        else { return nil }
        let (paths, _) = try ReadWhole.claim(
            place, opened: DestinationPaths.Opened(place: place, paths: present), for: url, by: label,
            options: options, in: claims, directories: directories)
        emit(.state(.verifying))
        switch try judgeExisting(paths: paths, resource: listed.resource(at: url)) {
        case let .complete(size, digest, dated) where digest != nil || dated:
            return alreadyComplete(paths: paths, size: size, digest: digest, dated: dated, started: started)
        case .complete:
            return nil
        case .differs(_, failed: let digest?) where digest.source == .entityTag:
            return nil
        case let .differs(refusal, _):
            throw refusal
        }
    }

    /// Checks a file already at the destination against the server's file (`judgeExisting`): skipped when it is
    /// that file, else refused with `.fileExists`, whose remedy is to overwrite it.
    private func verifyExisting(
        paths: DestinationPaths,
        resource: RemoteResource,
        started: Double
    ) throws(BraidError) -> DownloadResult {
        emit(.state(.verifying))
        switch try judgeExisting(paths: paths, resource: resource) {
        case let .complete(size, digest, dated):
            return alreadyComplete(paths: paths, size: size, digest: digest, dated: dated, started: started)
        case let .differs(refusal, _):
            throw refusal
        }
    }

    /// What a file already at the destination is, against the server's file.
    private enum ExistingFile {
        /// It is the server's file: of its length, and of the digest it is held to, or, without one, when the
        /// download gives files the server's date (`dated`), not older than the server's file.
        case complete(size: Int64, digest: ExpectedDigest?, dated: Bool)
        /// It is not, as `refusal` says; `failed` is the digest it did not match, when that was how.
        case differs(BraidError, failed: ExpectedDigest?)
    }

    /// The one rule for a file already at the destination in list mode: the same length as the server's file,
    /// and its digest, where one is held (`heldDigest`); without a digest, where the download gives its files the
    /// server's `Last-Modified` (`DownloadOptions.setsRemoteTime`, as object-store downloads do), a modification time
    /// not older than the server's, as `aws s3 sync` judges: an object replaced by another of the same length
    /// is newer than the file.
    private func judgeExisting(paths: DestinationPaths, resource: RemoteResource) throws(BraidError) -> ExistingFile {
        let size = DestinationPaths.size(of: paths.final) ?? -1
        guard resource.length == nil || resource.length == size else {
            let refusal = BraidError(
                .fileExists,
                "\(paths.final) exists with \(size) bytes but the server's file has \(resource.length ?? -1)",
                remedies: [.overwrite]
            )
            return .differs(refusal, failed: nil)
        }
        if let digest = try heldDigest(for: resource, paths: paths) {
            guard try Self.file(at: paths.final, size: size, matches: digest) else {
                let refusal = BraidError(
                    .fileExists,
                    "\(paths.final) exists but its \(digest.algorithm) does not match (from "
                        + "\(digest.source.rawValue))",
                    remedies: [.overwrite]
                )
                return .differs(refusal, failed: digest)
            }
            return .complete(size: size, digest: digest, dated: false)
        }
        guard options.setsRemoteTime, let copy = LocalCopy.at(paths.final) else {
            return .complete(size: size, digest: nil, dated: false)
        }
        switch copy.freshness(of: resource, wallClock: TransferEngine.wallClock()) {
        case .serverNewer:
            let refusal = BraidError(
                .fileExists,
                "\(paths.final) exists but the server's file is newer (modified \(resource.lastModified ?? ""), this "
                    + "one \(HTTPDate.format(secondsSince1970: copy.modified)))",
                remedies: [.overwrite]
            )
            return .differs(refusal, failed: nil)
        case .upToDate:
            return .complete(size: size, digest: nil, dated: true)
        case .sizeDiffers, .undated:
            // The length was compared above; without the server's date, it is all there is to go by.
            return .complete(size: size, digest: nil, dated: false)
        }
    }

    /// Reports a file already at the destination as complete, shown by `digest`, or by its length and, when
    /// `dated`, its date, and returns the result of leaving it as it is.
    private func alreadyComplete(
        paths: DestinationPaths, size: Int64, digest: ExpectedDigest?, dated: Bool, started: Double
    ) -> DownloadResult {
        let evidence =
            digest.map { "\($0.algorithm) verified" } ?? (dated ? "length and date verified" : "length verified")
        emit(.notice("\(paths.final) is already complete (\(evidence))"))
        let result = DownloadResult(
            path: paths.finalPath.string,
            bytes: size,
            verifiedDigest: digest,
            resumedBytes: size,
            seconds: TransferEngine.now() - started,
            statistics: TransferMachine.Statistics(fetchedBytes: 0, retries: 0, timeToFirstByte: nil)
        )
        emit(.completed(result))
        return result
    }

    /// Whether the first `size` bytes of the file at `path` have `digest`.
    static func file(at path: AnchoredPath, size: Int64, matches digest: ExpectedDigest) throws(BraidError) -> Bool {
        let reader: FileDescriptor
        do {
            reader = try path.open(.readOnly, followingLink: true)
        } catch {
            throw BraidError.localIO("cannot open \(path) to verify it", error)
        }
        let hasher = PrefixHasher(algorithm: digest.algorithm, reading: reader)
        hasher.start()
        defer { hasher.stop() }
        hasher.advance(to: size)
        hasher.finish(totalLength: size)
        return try hasher.waitForDigest() == digest.bytes
    }
}
