import Logging
import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// One download from probe to verified file, run synchronously on a thread of its own.
///
/// probe → choose the destination → resume from the manifest or plan afresh → transfer → verify → commit, as
/// `DownloadLifecycle` decides. A remote file that changes mid-way, or a server that turns out to ignore ranges,
/// sends it back to the probe.
///
/// A class, though nothing of it changes: a job is handed from the manager to the pool's thread and captured by the
/// closures of its requests, and each copy of a struct of its size retained some forty references (a tenth of a
/// list's retains a file).
final class DownloadJob: Sendable {
    let url: String
    let options: DownloadOptions
    let interrupter: Interrupter
    /// Connections shared with other downloads of a `DownloadManager`, if any.
    let budget: ConnectionBudget?
    /// The download's rate limit, chained to its manager's overall one.
    let limiter: RateLimiter?
    /// Final paths claimed by the downloads of the same `DownloadManager`, if any.
    let claims: DestinationClaims?
    /// The user's directories the downloads of the same `DownloadManager` checked and opened already, if any.
    let directories: OpenDirectories?
    /// The checksum files read already, by the downloads of the same `DownloadManager` or by this download.
    let checksumFiles: ChecksumFiles
    /// Where the download's requests run: its manager's pool, or one of its own.
    let pool: TransferPool
    /// Where a manager's download fetches its segments when it spreads them over connections of their own
    /// (`spreadsSegments`): its lane's pool for those (`PoolLanes.Lane.segments`), taken for the transfer; nil for a
    /// download on its own, whose pool speaks HTTP/1.1 for segments anyway.
    let segmentPool: SegmentPool?
    /// How messages name this download to the user: "line 3" of a list, else its URL without credentials.
    let label: String
    let logger: Logger
    /// Where the probe's requests are logged, at `-vv` only (the transfer's own are logged by its engine).
    let requestLog: RequestLog?
    /// Where `Download.chunks` takes a streamed download's bytes from.
    let chunks: ChunkChannel?
    /// `url` parsed, once: it is checked (`validate(url:parsed:)`) and names the file (`nameFromURL`).
    let parsedURL: URLComponents?
    /// The name `url` gives its file (`DestinationPaths.filename(from:)` of `parsedURL`; nil when it gives none, or
    /// when the destination names the file, which then never asks for it), worked out once: the destination is
    /// resolved several times a download (`place(suggestedFilename:url:)`).
    let nameFromURL: String?
    /// Where the user's credentials may go: `options.credentialScope`, or else the origins of the URL and mirrors
    /// given (`scope(of:options:)`), worked out once: every request of the download asks.
    let credentials: CredentialScope
    let emit: @Sendable (DownloadEvent) -> Void

    init(
        url: String, options: DownloadOptions, interrupter: Interrupter, budget: ConnectionBudget?,
        limiter: RateLimiter?, claims: DestinationClaims?, directories: OpenDirectories?,
        checksumFiles: ChecksumFiles = ChecksumFiles(), pool: TransferPool, segmentPool: SegmentPool? = nil,
        label: String, logger: Logger, chunks: ChunkChannel? = nil, parsedURL: URLComponents?, nameFromURL: String?,
        credentials: CredentialScope,
        emit: @escaping @Sendable (DownloadEvent) -> Void
    ) {
        self.url = url
        self.options = options
        self.interrupter = interrupter
        self.budget = budget
        self.limiter = limiter
        self.claims = claims
        self.directories = directories
        self.checksumFiles = checksumFiles
        self.pool = pool
        self.segmentPool = segmentPool
        self.label = label
        self.logger = logger
        requestLog = RequestLog(logger)
        self.chunks = chunks
        self.parsedURL = parsedURL
        self.nameFromURL = nameFromURL
        self.credentials = credentials
        self.emit = emit
    }

    /// The credential scope of a download of `url` with `options` (`credentials`).
    static func scope(of url: String, options: DownloadOptions) -> CredentialScope {
        options.credentialScope ?? CredentialScope(userNamed: [url] + options.mirrors)
    }

    /// How this download's requests are made; the user's credentials go to the origins the user named only
    /// (`credentials`).
    var requestOptions: RequestOptions {
        var requestOptions = options.requestOptions
        requestOptions.credentials = credentials
        return requestOptions
    }

    /// Whether the probe may share a connection over HTTP/2: in a list (a manager's download), where many small
    /// files share few connections and every request asks for HTTP/2 (`TransferEngine.init`'s `sharesPool`);
    /// else only for one connection, since the segments of a download on its own use HTTP/1.1, and the probe's
    /// connection then serves one of them.
    var probeMultiplexes: Bool {
        budget != nil || (options.connections == 1 && !options.automaticConnections)
    }

    /// - Parameter start: how far its start on the pool's thread went (`PooledStart`), when it began there: the
    ///   checks before anything is probed were made, `probing` was reported, and the first probe's answer is used
    ///   when there is one.
    func run(continuing start: PooledStart.Handover? = nil) throws(BraidError) -> DownloadResult {
        let started = start?.started ?? TransferEngine.now()
        if start == nil { try checkBeforeStart() }
        // A start on the pool that probed found nothing in place (`PooledStart`).
        if start?.probed == nil, let result = try listedExisting(started: started) { return result }
        var lifecycle = DownloadLifecycle()
        var firstContact = true
        while true {
            // Where a pass left the files when it was paused: the wait for resume is outside the `catch` below,
            // so that a stop meanwhile ends with the message that says where the progress is saved.
            let pausedAt: DestinationPaths
            do throws(BraidError) {
                if !firstContact || start == nil { emit(.state(.probing)) }
                defer { firstContact = false }
                // Only the first probe asks whether the file changed: a later one continues a download under way.
                let local = firstContact && options.timestamping && !options.measures ? try timestampedCopy() : nil
                let (resource, mirrors, first): (RemoteResource, [RemoteResource], ParkedResponse?)
                var opened: DestinationPaths.Opened?
                let probed: Probed
                if firstContact, let given = start?.probed {
                    probed = given
                } else {
                    probed = try probe(
                        lifecycle, firstContact: firstContact, unlessNewer: local,
                        looked: firstContact ? start?.looked : nil, earlier: firstContact ? start?.earlier : nil)
                }
                switch probed {
                case let .found(found, foundMirrors, parked, destination):
                    (resource, mirrors, first, opened) = (found, foundMirrors, parked, destination)
                case let .notModified(copy):
                    lifecycle.notModified()
                    return notModified(copy, started: started)
                }
                lifecycle.advance()
                let outcome =
                    options.measures
                    ? try measure(resource, mirrors: mirrors, started: started, lifecycle: &lifecycle)
                    : try attempt(
                        resource, mirrors: mirrors, first: first, opened: opened, started: started,
                        lifecycle: &lifecycle)
                switch outcome {
                case let .done(result):
                    return result
                case let .paused(paths):
                    pausedAt = paths
                case let .restart(reason):
                    emit(.notice(try lifecycle.restart(reason)))
                    continue
                }
            } catch {
                guard error.code == .cancelled, let reason = interrupter.reason else { throw error }
                // Paused while the probe read a small file whole: nothing was written, and it is probed anew.
                guard reason == .paused, lifecycle.stage == .probing else { throw Self.stop(reason, paths: nil) }
                try waitOutPause(&lifecycle, paths: nil)
                continue
            }
            try waitOutPause(&lifecycle, paths: pausedAt)
        }
    }

    /// What is checked before anything is probed or created: the URLs, the options and the destination, that the
    /// download was not cancelled before it began, and that no manifest there holds it to another digest.
    func checkBeforeStart() throws(BraidError) {
        try Self.checkBeforeStart(
            url: url, parsed: parsedURL, options: options, checksumFiles: checksumFiles, directories: directories)
        // Cancelled before it began (a cancelled task, say): nothing is probed or created.
        if interrupter.isEnding, let reason = interrupter.reason { throw Self.stop(reason, paths: nil) }
        try refuseContradictingDigest()
    }

    /// The checks of `checkBeforeStart()` that `url` and `options` alone decide: the URLs, the checksum files and
    /// the destination (in `directories`, the manager's, where there are some). Also run before a direct file's
    /// request (`DirectRequest`).
    static func checkBeforeStart(
        url: String, parsed: URLComponents?, options: DownloadOptions, checksumFiles: ChecksumFiles,
        directories: OpenDirectories?
    ) throws(BraidError) {
        try validate(url: url, parsed: parsed)
        for mirror in options.mirrors { try validate(url: mirror) }
        try options.validate(checksumFiles: checksumFiles)
        if let directories {
            try directories.check(options.destination)
        } else {
            try DestinationPaths.checkDestination(options.destination)
        }
    }

    /// Holds a paused download until it is resumed, then lets it probe anew; stopped meanwhile, it ends as `stop`
    /// says, its files at `paths`.
    private func waitOutPause(_ lifecycle: inout DownloadLifecycle, paths: DestinationPaths?) throws(BraidError) {
        lifecycle.paused()
        emit(.state(.paused))
        if let reason = interrupter.waitWhilePaused() { throw Self.stop(reason, paths: paths) }
        lifecycle.advance()
        emit(.notice("resuming"))
    }

    /// What a probe found.
    enum Probed {
        /// The URL's resource, the mirrors that serve the same file, and the probe's response to the file's first
        /// piece, when the probe asked for it, with the destination looked at before it (`lookBeforeProbe`).
        case found(RemoteResource, mirrors: [RemoteResource], first: ParkedResponse?, opened: DestinationPaths.Opened?)
        /// The server answered `304 Not Modified`: its file is not newer than this local copy.
        case notModified(LocalCopy)
    }

    /// The URL's resource as a fresh probe finds it, with the mirrors that serve the same file; or, when asked about
    /// a local copy, the server's answer that its file is not newer.
    ///
    /// - Parameters:
    ///   - looked: the destination a look before the probe already found free (`lookBeforeProbe`), which is then
    ///     not looked at again.
    ///   - earlier: how the first GET made on the pool's thread ended (`PooledStart`), which counts as the first
    ///     GET's first attempt.
    private func probe(
        _ lifecycle: DownloadLifecycle,
        firstContact: Bool,
        unlessNewer local: LocalCopy?,
        looked: DestinationPaths.Opened? = nil,
        earlier: Prober.FirstGetEnd? = nil
    ) throws(BraidError) -> Probed {
        let prober = makeProber(lifecycle, firstContact: firstContact)
        if firstContact && local == nil, case (true, let opened) = looked.map({ (true, $0) }) ?? lookBeforeProbe() {
            let (resource, first) = try prober.probeFirstGet(url, firstBytes: probeBytes, after: earlier)
            return .found(resource, mirrors: usableMirrors(of: resource, prober: prober), first: first, opened: opened)
        }
        switch try prober.probe(url, conditions: local?.conditionalHeaders ?? []) {
        case .notModified:
            // A probe without conditions is never answered "not modified" (`Prober.probe(_:conditions:)`).
            guard let local else { preconditionFailure("Invalid state: not modified without a local copy") }
            return .notModified(local)
        case var .resource(resource):
            if lifecycle.forcesSingleStream { resource.acceptsRanges = false }
            return .found(resource, mirrors: usableMirrors(of: resource, prober: prober), first: nil, opened: nil)
        }
    }

    /// The prober of a pass, for the first contact with the server or a later one.
    func makeProber(_ lifecycle: DownloadLifecycle, firstContact: Bool) -> Prober {
        var prober = Prober(
            options: requestOptions,
            pool: pool,
            retryPolicy: options.retryPolicy,
            onRetry: { [emit] reason, delay in emit(.retry(reason: reason, delay: delay)) },
            onNotice: { [emit] message in emit(.notice(message)) },
            isCancelled: { [interrupter] in interrupter.isEnding }
        )
        prober.isPaused = { [interrupter] in interrupter.reason == .paused }
        prober.trustsHead = !lifecycle.distrustsHead
        prober.isFirstContact = firstContact
        prober.multiplexes = probeMultiplexes
        prober.requestLog = requestLog
        if readsWholeFirstResponse {
            prober.readsWhole = Self.oneRequestLength
            prober.onWholeBodyStart = { [self] resource in
                // Where the file goes, as the claim will find it (`DownloadJob.writeReceived`).
                let place = try? self.place(suggestedFilename: resource.suggestedFilename, url: resource.requestedURL)
                reportStart(of: resource, at: place?.path.string ?? "")
            }
            prober.onWholeBody = { [emit] received, total, seconds in
                emit(.progress(.oneRequest(received: received, of: total, seconds: seconds)))
            }
        }
        return prober
    }

    /// Reports that the file of `resource`, going to `path`, starts to come, from nothing on disk: where its transfer
    /// starts, or for a file read whole by the probe, as its body started (`Prober.onWholeBodyStart`) or, when it
    /// came in one piece, as the download writes it.
    func reportStart(of resource: RemoteResource, at path: String) {
        emit(.started(resource: resource, path: path, resumedBytes: 0))
        emit(.state(.downloading))
    }

    /// The longest file fetched in one request, which keeps no manifest: the smallest piece a plan cuts, so that a
    /// fresh plan of such a file is one piece.
    static let oneRequestLength = SegmentPlanner.minimumSegment

    /// What a fresh download's first GET asks for: the whole file from its start (`bytes=0-`), and for a download
    /// of a list (or the daemon) only its first `oneRequestLength` bytes. The transfer adopts the response as its
    /// first request and, when that request keeps less, cuts it, which closes an HTTP/1.1 connection: a download
    /// alone pays one connection for a probe that saves a request (a far server sends the first connection its whole
    /// share) and that no server answers later than an unranged GET (moto answers a bounded range 4 ms later).
    /// A list's connections are reused from file to file and held to the host's cap, so there every first response
    /// is kept whole, as the first request.
    var probeBytes: Int64? {
        budget == nil ? nil : Self.oneRequestLength
    }

    /// Whether the first response of a file fetched in one request is read to its end by the probe
    /// (`Prober.readsWhole`), which then makes the file's only request and leaves no transfer to run: for the
    /// downloads of a list (or the daemon), where such files come by the thousand, unless a rate limit paces their
    /// bytes or a stream reads them as they come. A download on its own leaves the body paused for its transfer,
    /// which costs it one hand-over to the pool and reports it as any other.
    var readsWholeFirstResponse: Bool {
        budget != nil && Self.readsWholeFirstResponse(options, limiter: limiter)
    }

    /// Whether a manager's download of `url` with `options` and `limiter` starts on its lane's pool thread
    /// (`PooledStart`): one whose first response is read whole (`readsWholeFirstResponse`) and that may start
    /// afresh (`mayStartAfresh`), over HTTP or HTTPS, with no mirrors (whose probes are waited for).
    static func startsOnPool(url: String, options: DownloadOptions, limiter: RateLimiter?) -> Bool {
        readsWholeFirstResponse(options, limiter: limiter) && mayStartAfresh(options) && options.mirrors.isEmpty
            && isWeb(url)
    }

    /// Whether `url` is an HTTP or HTTPS one, its scheme written in any case (RFC 3986, 3.1).
    private static func isWeb(_ url: String) -> Bool {
        // Eight characters at most: a string that short is kept inline, with no allocation a file.
        let start = url.prefix(8).lowercased()
        return start.hasPrefix("https://") || start.hasPrefix("http://")
    }

    /// `readsWholeFirstResponse` of a manager's download with `options` and `limiter`.
    static func readsWholeFirstResponse(_ options: DownloadOptions, limiter: RateLimiter?) -> Bool {
        options.stream == nil && limiter?.effectiveRate == nil
    }

    /// Whether a listing said, before any request, that the file is fetched in one request
    /// (`DownloadOptions.listed`): an S3 object then asked for its checksums with a GET of all of it.
    static func isListedSmall(_ options: DownloadOptions) -> Bool {
        options.listed.map { $0.size <= oneRequestLength } ?? false
    }

    /// Whether the download starts afresh, so that its first request can be a GET of the file from its start
    /// rather than a HEAD: nothing at the destination the URL names (a manifest to resume, a file to check or
    /// keep), no conditional request (`-N`), no measurement, no piece hashes (whose requests ask for digests the
    /// probe would not), no repair, no cache peers (whose slices the origin must not send: it gets a `HEAD`), and
    /// no S3 checksums, which S3 sends only with `HEAD` and a GET of the whole object, unless a listing says the
    /// object is small (`isListedSmall`), which is then asked for with no range (`Prober.probeFirstGet`). A name
    /// the server then gives may still hold a manifest: the first response is then given up, and the download
    /// resumes as usual. The names are looked up, or found absent in the manager's listing of the directory
    /// (`ReadWhole.look`).
    ///
    /// Returns too the destination it opened to look, for the attempt to use when the name stays the same
    /// (`claimDestination`): one look at the directory, not two. Where a directory of the place is missing, the
    /// place alone: nothing is made before the server answers, and the claim makes the directories.
    func lookBeforeProbe() -> (startsAfresh: Bool, opened: DestinationPaths.Opened?) {
        guard Self.mayStartAfresh(options) else { return (false, nil) }
        guard let place = try? place(suggestedFilename: nil, url: url) else { return (true, nil) }
        return ReadWhole.look(at: place, options: options, directories: directories, claims: claims)
    }

    /// Whether a download with `options` may start afresh, as `lookBeforeProbe` says, when nothing is at its
    /// destination.
    static func mayStartAfresh(_ options: DownloadOptions) -> Bool {
        !options.timestamping && !options.measures && options.pieceHashes == nil && !options.repair
            && options.cachePeers.isEmpty
            && (!Prober.asksS3ForChecksums(options.headers) || isListedSmall(options))
    }

    /// Where the file of `url` goes (`DestinationPaths.resolve`), with the name the server suggested, if any: for
    /// the download's own URL, by the name worked out once (`nameFromURL`).
    func place(suggestedFilename: String?, url: String) throws(BraidError) -> DestinationPaths.Place {
        guard url == self.url else {
            return try DestinationPaths.resolve(options.destination, suggestedFilename: suggestedFilename, url: url)
        }
        return try DestinationPaths.resolve(
            options.destination, suggestedFilename: suggestedFilename, nameFromURL: nameFromURL)
    }

    /// How one pass from the probe's answer ended.
    enum AttemptOutcome {
        case done(DownloadResult)
        case restart(DownloadLifecycle.Restart)
        /// Stopped by `pause()`, progress saved; the files are at `paths`.
        case paused(DestinationPaths)
    }

    /// Probes each mirror; keeps those that serve the same length and, for a segmented download, byte ranges.
    private func usableMirrors(of resource: RemoteResource, prober: Prober) -> [RemoteResource] {
        guard resource.isSegmentable else {
            if !options.mirrors.isEmpty {
                emit(.notice("ignoring mirrors: the file cannot be split into ranges"))
            }
            return []
        }
        var prober = prober
        prober.retryPolicy.maximumAttempts = min(2, prober.retryPolicy.maximumAttempts)
        return options.mirrors.compactMap { mirror in
            do throws(BraidError) {
                let candidate = try prober.probe(mirror)
                guard candidate.length == resource.length, candidate.isSegmentable else {
                    emit(
                        .notice(
                            "dropping mirror \(mirror): it serves \(candidate.length ?? -1) bytes without ranges or of another length"
                        ))
                    return nil
                }
                return candidate
            } catch {
                emit(.notice("dropping mirror \(mirror): \(error.message)"))
                return nil
            }
        }
    }

    /// Refuses, as a usage error, a URL Braid cannot fetch: one too long, with a control character or a space, not
    /// `http` or `https`, without a host, or with a port outside 1...65535. `URLComponents` lets a control character,
    /// a space and any port through, and libcurl would then fetch what comes before a NUL while the file is named
    /// from the whole.
    static func validate(url: String) throws(BraidError) {
        try validate(url: url, parsed: URLComponents(string: url))
    }

    /// `validate(url:)` of a URL already parsed into `components` (nil when it could not be).
    static func validate(url: String, parsed components: URLComponents?) throws(BraidError) {
        guard url.utf8.count <= DownloadOptions.maximumTextLength else {
            throw .usage("a URL of \(url.utf8.count) bytes is too long")
        }
        // Before the scheme: `http://a b/` does not parse, and would be told it has none.
        if let byte = url.utf8.first(where: { $0 <= UInt8(ascii: " ") || $0 == 0x7F }) {
            let problem =
                byte == UInt8(ascii: " ")
                ? "it has a space, which a URL writes as %20"
                : "it has a control character, \(PrintableText.escapingControlCharacters(String(UnicodeScalar(byte))))"
            throw .usage("'\(url)' is not a valid URL: \(problem)")
        }
        guard let scheme = components?.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .usage(schemeProblem(in: url, scheme: components?.scheme))
        }
        guard let host = components?.host, !host.isEmpty else { throw .usage("'\(url)' has no host") }
        // A port too large for an `Int` parses, as no port at all: only its range is left to tell it is there. It
        // is looked for only where the authority has a colon, as few URLs' have: a list checks each of its URLs.
        let portInRange =
            components?.port.map { (1...65535).contains($0) }
            ?? (!Self.authorityHasColon(url) || components?.rangeOfPort == nil)
        guard portInRange else { throw .usage("'\(url)' is not a valid URL: its port is not from 1 to 65535") }
    }

    /// Whether the part of `url` between `://` and the path, query or fragment has a `:`, where a port (or a
    /// password, or an IPv6 address) would be.
    private static func authorityHasColon(_ url: String) -> Bool {
        let bytes = url.utf8
        guard let slashes = bytes.firstRange(of: "://".utf8) else { return true }
        for byte in bytes[slashes.upperBound...] {
            if byte == UInt8(ascii: ":") { return true }
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { return false }
        }
        return false
    }

    /// What is wrong with the scheme of `url`, with the URL it most likely meant when it has none: `example.com/f`
    /// and `localhost:8080/f` (which parses as the scheme `localhost`) both mean `http://…`, as curl takes them. One
    /// with `://` that does not parse (after an invisible character, say) meant no other: adding `http://` would not
    /// mend it.
    private static func schemeProblem(in url: String, scheme: String?) -> String {
        let afterScheme = scheme.map { url.dropFirst($0.count + 1) } ?? Substring(url)
        let looksLikeHostAndPort = scheme != nil && afterScheme.first.map(\.isNumber) == true
        guard scheme == nil || looksLikeHostAndPort else {
            return "only http and https URLs are supported, got '\(scheme ?? ""):'"
        }
        let host = url.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
        guard !url.hasPrefix("/"), !url.contains("://"), host.contains(".") || host.contains(":") || host == "localhost"
        else {
            return "'\(url)' is not a valid URL"
        }
        return "'\(url)' has no scheme; did you mean 'http://\(url)'?"
    }

    /// The error that ends a stopped download; a cancellation that asks for it also removes the partial file.
    static func stop(_ reason: StopReason, paths: DestinationPaths?, resumable: Bool = true) -> BraidError {
        let saved =
            (resumable ? paths : nil).map {
                " Progress is saved in \($0.manifest); run the same command again to resume."
            } ?? ""
        switch reason {
        case .interrupted, .paused:
            return BraidError(.interrupted, "interrupted." + saved)
        case .cancelled(removingPartialFile: true):
            paths?.removeDownloadState()
            return BraidError(.cancelled, "cancelled; the partial download was removed.")
        case .cancelled(removingPartialFile: false):
            return BraidError(.cancelled, "cancelled." + saved)
        }
    }
}
