extension Metalink.File {
    /// The URLs Braid fetches this file from, the most preferred first: the http and https ones that a download
    /// would take (`DownloadJob.validate(url:)`: a host, a port that is one), those
    /// in one of `locations` (country codes, as aria2's `--metalink-location`) ahead of the others, each group by
    /// priority. The others are left out, as a mirror that fails is: a document's one bad URL does not stop its file.
    public func fetchableURLs(preferringLocations locations: [String] = []) -> [String] {
        let preferred = Set(locations.map { $0.lowercased() })
        var seen: Set<String> = []
        return urls.enumerated()
            .filter { _, mirror in (try? DownloadJob.validate(url: mirror.url)) != nil }
            .sorted { first, second in
                let firstAway = !preferred.isEmpty && !preferred.contains(first.element.location ?? "")
                let secondAway = !preferred.isEmpty && !preferred.contains(second.element.location ?? "")
                if firstAway != secondAway { return !firstAway }
                return first.offset < second.offset
            }
            .map(\.element.url)
            .filter { seen.insert($0).inserted }
    }

    /// What a `Download` of this file takes: the most preferred URL, the others as mirrors in order of preference,
    /// the whole-file hashes (`metalinkDigests`), the piece hashes, the size (`expectedLength`), the destination,
    /// and the origins the user's credentials may go to.
    ///
    /// - Parameters:
    ///   - base: the options every download shares. A `.directory` destination becomes the file's place below it
    ///     (`.below`: its subdirectories are made when the download starts, without following links); a `.file`
    ///     destination is kept, as the name the user chose for a single file. Which digest the file is held to is
    ///     decided when it is downloaded: a digest the user gave (`expectedDigest`, or a `checksumFile`) outranks
    ///     the document's. A `credentialScope` set there is kept.
    ///   - provenance: where the document came from. The URLs of a local one are the user's; those of a served
    ///     one are the server's, and the credentials go only to the origin of the URL the user asked for it by.
    ///   - locations: country codes whose URLs are tried first.
    /// - Throws: a usage error when the file has no http or https URL (Braid does not fetch ftp or torrents), or
    ///   when its name would leave the directory (see `SafeName.path(sanitising:)`).
    public func download(
        options base: DownloadOptions, from provenance: Metalink.Provenance,
        preferringLocations locations: [String] = []
    ) throws(BraidError) -> (url: String, options: DownloadOptions) {
        let fetchable = fetchableURLs(preferringLocations: locations)
        guard let url = fetchable.first else {
            throw .usage("the Metalink offers no http or https URL Braid can fetch for \(name)", option: .metalink)
        }
        var options = base
        options.mirrors = Array(fetchable.dropFirst())
        if options.credentialScope == nil, case let .served(requested) = provenance {
            options.credentialScope = CredentialScope(userNamed: [requested])
        }
        options.metalinkDigests = hashes
        options.pieceHashes = pieces
        options.expectedLength = size
        if case let .directory(directory) = base.destination {
            let path: [SafeName]
            do throws(SafeName.Refusal) {
                path = try SafeName.path(sanitising: name)
            } catch {
                throw .usage("the Metalink names a file by a path that \(error.reason), '\(name)'", option: .metalink)
            }
            options.destination = .below(directory, path: path)
        }
        return (url, options)
    }
}
