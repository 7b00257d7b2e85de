import ArgumentParser
import Braid

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension DownloadArguments {
    /// Checks the options that go with an `s3://` URL: `--include` and `--exclude` only with a prefix, `-o` and
    /// `--checksum` only with one object, and the URL itself well-formed.
    func validateObjectStore() throws {
        let location = try url.flatMap { url throws -> ObjectStoreLocation? in
            guard ObjectStoreLocation.isObjectStoreURL(url) else { return nil }
            do throws(BraidError) {
                return try ObjectStoreLocation(parsing: url)
            } catch {
                throw error.validationError
            }
        }
        let filters = !include.isEmpty || !exclude.isEmpty
        guard let location else {
            if filters { throw ValidationError("--include and --exclude choose among the objects of an s3:// prefix") }
            return
        }
        if metalink { throw ValidationError("--metalink reads a Metalink document, not an s3:// URL") }
        if location.isPrefix {
            if output != nil {
                throw ValidationError("-o names one file; the objects of an s3:// prefix are saved below -d DIR")
            }
            if checksum != nil { throw ValidationError("--checksum is for one file, not an s3:// prefix") }
        } else if filters {
            throw ValidationError("--include and --exclude choose among the objects of a prefix, which ends with '/'")
        }
        do throws(BraidError) {
            try ObjectKeyFilter(includes: include, excludes: exclude).validate()
        } catch {
            throw error.validationError
        }
    }

    /// Downloads the object an `s3://BUCKET/KEY` URL names, as one URL is downloaded, or every object below an
    /// `s3://BUCKET/PREFIX/`, as a list is (`-j`, the connection caps, the summary, the list's exit status), each
    /// into its key's path below the prefix, below `-d DIR`. The store, its region and credentials come from the
    /// `AWS_*` environment variables (`ObjectStore(environment:)`).
    func runObjectStore(_ url: String) async throws {
        let store: ObjectStore
        let location: ObjectStoreLocation
        do throws(BraidError) {
            store = try ObjectStore(environment: ProcessInfo.processInfo.environment)
            location = try ObjectStoreLocation(parsing: url)
        } catch {
            if json { JSONEventWriter(inList: false).failed(error) }
            StandardStreams.error("braid: \(error.commandLineMessage())\n")
            throw ExitCode(ExitStatus(error.code).rawValue)
        }
        if location.isPrefix {
            try await runObjectStorePrefix(location, in: store)
        } else {
            try await runObject(location, in: store)
        }
    }

    private func runObject(_ location: ObjectStoreLocation, in store: ObjectStore) async throws {
        var options = sharedOptions
        if let output { options.destination = .file(output) }
        let object: (url: String, options: DownloadOptions)
        do throws(BraidError) {
            options.expectedDigest = try checksum.map { checksum throws(BraidError) in
                try ExpectedDigest(checksumArgument: checksum)
            }
            object = try store.download(of: location, options: options)
        } catch {
            if json { JSONEventWriter(inList: false).failed(error) }
            StandardStreams.error("braid: \(error.commandLineMessage())\n")
            throw ExitCode(ExitStatus(error.code).rawValue)
        }
        _ = try await runOne(
            object.url, options: object.options, as: DownloadItem(id: 1, url: location.description, output: nil)
        ) { error in
            await store.explain(error, downloading: location, options: object.options)
        }
    }

    private func runObjectStorePrefix(_ location: ObjectStoreLocation, in store: ObjectStore) async throws {
        let observer = makeListObserver()
        var base = sharedOptions
        // Running the same command again verifies and skips the objects already complete, as a list does.
        base.skipExistingIfVerified = true
        let filter = ObjectKeyFilter(includes: include, excludes: exclude)
        let planned: [ObjectStore.PlannedObject]
        do throws(BraidError) {
            try base.checkDestination()
            if !quiet { observer.notice("Listing \(location)") }
            let objects = try await store.objects(in: location.bucket, prefix: location.key, options: base)
            planned = try store.plan(objects, below: location, filter: filter, options: base)
            if !quiet {
                let bytes = objects.reduce(0) { $0 + $1.size }
                let kept = planned.count == objects.count ? "" : ", \(planned.count) of them to download"
                observer.notice("\(objects.count) objects, \(Formatting.bytes(bytes))\(kept)")
            }
            if planned.isEmpty {
                throw filter == ObjectKeyFilter() || objects.isEmpty
                    ? BraidError(.protocolViolation, "there is no object below \(location)")
                    : BraidError(.usage, "none of the objects below \(location) matches --include and --exclude")
            }
        } catch {
            observer.failed(error)
            if json { StandardStreams.error("braid: \(error.commandLineMessage(inList: true))\n") }
            throw ExitCode(ExitStatus(error.code).rawValue)
        }
        let jobs = planned.enumerated().map { index, object in
            let item = { (output: String) in
                DownloadItem(id: index + 1, url: "s3://\(location.bucket)/\(object.key)", output: output)
            }
            switch object {
            case let .download(_, path, url, options):
                return ListRunner.Job(item: item(path), url: url, options: options, label: path)
            case let .refused(key, error):
                return ListRunner.Job(item: item(key), url: "", options: base, label: key, refusal: error)
            }
        }
        try await runList(reportingTo: observer) { limits in
            ListRunner(jobs: jobs, limits: limits, observer: observer)
        }
    }
}
