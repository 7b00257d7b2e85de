import SystemPackage

/// The digests a download is offered, and what `DigestAuthority` makes of them against the one an earlier run
/// recorded.
extension DownloadJob {
    /// Every digest this run has for the file at `paths`: the user's, the checksum file's line for its path below
    /// the directory (`ChecksumFile.digest(for:)`), the Metalink's hashes, and the server's headers once a probe
    /// has found them (`resource`).
    ///
    /// The checksum file is read only when no digest of a higher rank is given, since none of its lines could
    /// then count; a file without a line for the name is a usage error.
    func offeredDigests(for resource: RemoteResource?, paths: DestinationPaths) throws(BraidError) -> [ExpectedDigest] {
        try Self.offeredDigests(options: options, checksumFiles: checksumFiles, for: resource, paths: paths)
    }

    /// `offeredDigests(for:paths:)` of a download with `options`, whose checksum files `checksumFiles` keeps.
    static func offeredDigests(
        options: DownloadOptions, checksumFiles: ChecksumFiles, for resource: RemoteResource?, paths: DestinationPaths
    ) throws(BraidError) -> [ExpectedDigest] {
        var offered = options.expectedDigest.map { [$0] } ?? []
        if let checksumFile = options.checksumFile,
            !offered.contains(where: { DigestAuthority.Rank($0.source) >= .checksumFile })
        {
            let below = try DestinationPaths.place(of: options.destination)
                .pathBelowDirectory(name: paths.final.lastComponent)
            offered.append(try checksumFiles.file(at: checksumFile).digest(for: below))
        }
        offered += options.metalinkDigests
        offered += resource?.digests ?? []
        return offered
    }

    /// Whether this run is given a digest before any traffic: one of the sources `offeredDigests(for:paths:)` reads
    /// other than the server's, which must name the same ones. Only such a digest can contradict a recorded one
    /// (`DigestAuthority.decision`), as only a given digest binds.
    var offersGivenDigest: Bool {
        options.expectedDigest != nil || options.checksumFile != nil || !options.metalinkDigests.isEmpty
    }

    /// The digest a file with no manifest, such as one already complete at the destination, is held to.
    func heldDigest(for resource: RemoteResource?, paths: DestinationPaths) throws(BraidError) -> ExpectedDigest? {
        // Without a recorded digest, nothing can be contradicted.
        DigestAuthority(recorded: nil, offered: try offeredDigests(for: resource, paths: paths)).decision.digest
    }

    /// The digest a file with nothing recorded for it (no manifest, or one discarded) is held to, of those
    /// `offered`; a weaker one it overrules is reported.
    func unrecordedDigest(offered: [ExpectedDigest]) -> ExpectedDigest? {
        Self.unrecordedDigest(offered: offered) { emit(.notice($0)) }
    }

    /// `unrecordedDigest(offered:)`, telling `notice` of a weaker digest it overrules.
    static func unrecordedDigest(offered: [ExpectedDigest], notice: (String) -> Void) -> ExpectedDigest? {
        let decision = DigestAuthority(recorded: nil, offered: offered).decision
        if case let .holdTo(digest, overruled?) = decision, let digest {
            notice(overruledNotice(overruled, holding: digest))
        }
        return decision.digest
    }

    /// Refuses, before any traffic, a download whose given digest contradicts the one its manifest records, when
    /// the destination names the file without asking the server (`-o`, a Metalink's name, an RPC `out`). When the
    /// name comes from the server, the same refusal comes after the probe and before any data (`loadManifest`). A
    /// destination that cannot be opened yet, a link at the manifest's name, a manifest that cannot be read or
    /// that belongs to another URL: each is left to those later checks, which say so.
    ///
    /// Without a given digest (the user's, a checksum file's, a Metalink's) nothing can contradict the recorded one,
    /// and the manifest is not looked for: a list of many small files would pay a failed open for each.
    func refuseContradictingDigest() throws(BraidError) {
        guard !options.overwrite, !options.measures, offersGivenDigest,
            let place = try? DestinationPaths.place(of: options.destination), place.name != nil,
            let paths = try? DestinationPaths.open(place, creating: false),
            let manifest = try? ManifestStore(path: paths.manifest).load(), manifest.belongs(to: url)
        else { return }
        let authority = DigestAuthority(
            recorded: manifest.expectedDigest, offered: try offeredDigests(for: nil, paths: paths))
        if case let .contradiction(recorded, given) = authority.decision {
            throw Self.contradiction(recorded: recorded, given: given, manifest: paths.manifest)
        }
    }

    /// The error for a run whose digest contradicts the recorded one: the partial download must be discarded
    /// (`overwrite`) before the file can be held to another digest.
    static func contradiction(recorded: ExpectedDigest, given: ExpectedDigest, manifest: AnchoredPath) -> BraidError {
        BraidError(
            .manifest,
            "\(manifest) holds this download to \(recorded.algorithm)=\(recorded.hex) (from \(recorded.source.rawValue)), "
                + "which this run's \(given.algorithm)=\(given.hex) (from \(given.source.rawValue)) contradicts",
            remedies: [.discardPartialDownload]
        )
    }

    /// The notice for a weaker digest that disagrees with the one the file is held to.
    func reportOverruled(_ overruled: ExpectedDigest?, holding digest: ExpectedDigest?) {
        guard let overruled, let digest else { return }
        emit(.notice(Self.overruledNotice(overruled, holding: digest)))
    }

    private static func overruledNotice(_ overruled: ExpectedDigest, holding digest: ExpectedDigest) -> String {
        "the \(overruled.algorithm) from \(overruled.source.rawValue) (\(overruled.hex)) disagrees with the one "
            + "from \(digest.source.rawValue) (\(digest.hex)); the file is held to the latter"
    }
}
