import ArgumentParser
import Braid

extension DownloadArguments {
    /// Whether `argument` names a Metalink file on this machine rather than a URL: it has no scheme and ends in
    /// `.meta4` or `.metalink`. A missing one is then said to be missing, not looked up as a host name.
    static func isLocalMetalink(_ argument: String) -> Bool {
        guard !argument.contains("://") else { return false }
        let lowered = argument.lowercased()
        return lowered.hasSuffix(".meta4") || lowered.hasSuffix(".metalink")
    }

    /// Reads the Metalink document at `path` and downloads the files it describes: one as a single URL is (with
    /// `-o` and `--checksum` applying to it), several as a list is (`-j`, the summary, the list's JSON events and
    /// exit status). Each file is fetched from all its http and https URLs, verified against the strongest hash,
    /// and saved under its name in the directory (`-d`, else the current one). `ownsOutput` is false when `-o` and
    /// `--checksum` were already spent on the document itself (a URL that turned out to serve one). `provenance`
    /// says whether the user named the document's URLs (a local file) or a server sent them, which decides where
    /// the credentials may go.
    func runMetalink(readingAt path: String, from provenance: Metalink.Provenance, ownsOutput: Bool = true)
        async throws
    {
        let jobs: [ListRunner.Job]
        do throws(BraidError) {
            let metalink = try Metalink(readingAt: path)
            var base = sharedOptions
            let output = ownsOutput ? output : nil
            let checksum = ownsOutput ? checksum : nil
            if metalink.files.count == 1 {
                if let output { base.destination = .file(output) }
                if let checksum { base.expectedDigest = try ExpectedDigest(checksumArgument: checksum) }
            } else {
                let count = metalink.files.count
                if output != nil {
                    throw BraidError(.usage, "-o names one file; the Metalink \(path) describes \(count), use -d DIR")
                }
                if checksum != nil {
                    throw BraidError(.usage, "--checksum is for one file; the Metalink \(path) describes \(count)")
                }
                // Running the same command again verifies and skips the files already complete, as a list does.
                base.skipExistingIfVerified = true
                try base.checkDestination()
            }
            jobs = try metalink.files.enumerated().map { (index, file) throws(BraidError) in
                let (url, options) = try file.download(
                    options: base, from: provenance, preferringLocations: metalinkLocations)
                return ListRunner.Job(
                    item: DownloadItem(id: index + 1, url: url, output: file.name),
                    url: url,
                    options: options,
                    label: file.name
                )
            }
        } catch {
            if json { JSONEventWriter(inList: false).failed(error) }
            StandardStreams.error("braid: \(error.commandLineMessage())\n")
            throw ExitCode(ExitStatus(error.code).rawValue)
        }
        if jobs.count == 1 {
            _ = try await runOne(jobs[0].url, options: jobs[0].options, as: jobs[0].item)
        } else {
            let observer = makeListObserver()
            try await runList(reportingTo: observer) { limits in
                ListRunner(jobs: jobs, limits: limits, observer: observer)
            }
        }
    }
}
