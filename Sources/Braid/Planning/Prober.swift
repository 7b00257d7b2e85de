import CCurl
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// Learns a resource's length, range support, validators and digests before anything is downloaded.
///
/// HEAD first, following redirects; when HEAD is refused or does not promise ranges, a ranged GET of one byte
/// (`Range: bytes=0-0`) settles it from `Content-Range`. A conditional probe (`-N`) sends `If-Modified-Since` with
/// its first request, and ends at a `304 Not Modified`.
///
/// Each request runs on the download's `TransferPool`, so its connection is kept for the transfer's first range
/// request (or the next download's probe) and no second handshake is made; the calling thread waits for it.
///
/// Redirects are followed here, one hop at a time, not by libcurl: each hop is sent the user's credentials only if
/// its origin is one the user named (`CredentialScope`, applied as the hop is configured), a redirect to a scheme
/// outside `redirectSchemes` is refused, and one from HTTPS down to plain HTTP is reported before it is followed.
struct Prober {
    let options: RequestOptions
    /// Where the requests run.
    let pool: TransferPool
    var retryPolicy: RetryPolicy
    var onRetry: @Sendable (String, Double) -> Void = { _, _ in }
    /// Told of what the user should know: a redirect that leaves HTTPS.
    var onNotice: @Sendable (String) -> Void = { _ in }
    var isCancelled: @Sendable () -> Bool = { false }
    /// Whether the download is paused: a request that reads a body whole (`readsWhole`) stops then, as cancelled,
    /// since the bytes it holds would not survive the pause anyway.
    var isPaused: @Sendable () -> Bool = { false }
    /// Whether a HEAD that promises ranges is enough; when it has lied about the length, a ranged GET decides.
    var trustsHead = true
    /// Whether this is the run's first request to the server: failures that will not mend fail sooner
    /// (`RetryPolicy.attemptsForFirstContact`).
    var isFirstContact = false
    /// Whether the requests may share a connection over HTTP/2 (`EasyHandle.setHTTPVersion`): not when the
    /// download's segments will run side by side over HTTP/1.1, so that the probe's connection serves one of them.
    var multiplexes = true
    /// The longest body `probeFirstGet` reads to its end rather than leaving it paused, when its response carries
    /// the whole file (a `200` with a `Content-Length`, or a `206` of all of it): the download then writes it with
    /// no transfer to run, and the request's connection goes back to the pool at once. Nil reads none.
    var readsWhole: Int64?
    /// Told, on the pool's thread, how much of a body being read whole has come (`readsWhole`), and how long since
    /// its first byte: with its first bytes unless they are all of it, then about four times a second while it
    /// comes, so that a slow small file still shows its progress.
    var onWholeBody: (@Sendable (_ received: Int64, _ total: Int64, _ seconds: Double) -> Void)?
    /// Told, on the pool's thread, of the file whose body is about to be read whole, as its first bytes come: the
    /// transfer starts there. Not told when those bytes are all of it: the download reports the start then, off the
    /// pool's thread, which every request of the list waits for (`ParkedResponse.startReported`).
    var onWholeBodyStart: (@Sendable (RemoteResource) -> Void)?
    /// Where each request and its answer are logged (`-vv`), each redirect hop and each retry apart.
    var requestLog: RequestLog?

    /// What a conditional probe found.
    enum Answer: Equatable {
        case resource(RemoteResource)
        /// The server answered `304 Not Modified`: its file is not newer than the local copy.
        case notModified
    }

    func probe(_ url: String) throws(BraidError) -> RemoteResource {
        let answer = try probe(url, conditions: [])
        guard case let .resource(resource) = answer else { preconditionFailure("Invalid state: 304 unasked") }
        return resource
    }

    /// Probes `url`, sending `conditions` (`If-Modified-Since: …`) with its first request the server answers (the
    /// HEAD, or the ranged GET when HEAD is refused), so that one request settles a file that has not changed.
    func probe(_ url: String, conditions: [String]) throws(BraidError) -> Answer {
        let answer = try probeHeaders(url, conditions: conditions)
        if case let .resource(resource) = answer { try RemoteResource.checkLength(resource.length) }
        return answer
    }

    /// Probes a file the download will fetch afresh with its first request: a GET of the whole file from its
    /// start (`Range: bytes=0-`), whose head gives the length, validators, digests and range support. Its body is
    /// left paused on the pool for the transfer to adopt as its first request, whatever bytes from 0 that request
    /// keeps (`ParkedResponse`); the caller cancels it if it does not. A file no longer than `readsWhole` is read
    /// to its end instead (`ParkedResponse.body`).
    ///
    /// A `HEAD` follows only where that GET cannot tell the file's digests: a `206` of part of the file (a server
    /// that answers an open range with less than the rest of the file) that carries `Content-MD5` (which then
    /// describes the part), and an empty file, which has no first byte to ask for. The response is given up before
    /// it, so that no download holds a paused connection while it waits for another: with every connection to a
    /// host so held, none would be left for the `HEAD`s. A download that asks S3 for its checksums
    /// (`Prober.asksS3ForChecksums`), which S3 sends only with `HEAD` and a GET of the whole object, not with a range
    /// (moto does with one that covers the object; MinIO, following S3, does not), asks with no `Range` at all. One
    /// whose object is not listed as small is probed with `HEAD` instead (`DownloadJob.lookBeforeProbe`).
    ///
    /// - Parameter firstBytes: when set, only the file's first `firstBytes` are asked for (`bytes=0-N`), and a
    ///   `206` of other bytes is a protocol violation (see `DownloadJob.probeBytes`).
    ///
    /// - Parameter earlier: how the same request ended on the pool's thread (`startFirstGet`), which counts as the
    ///   first attempt: its response is answered, or its failure retried, without asking again first.
    func probeFirstGet(
        _ url: String, firstBytes: Int64? = nil, after earlier: FirstGetEnd? = nil
    ) throws(BraidError) -> (RemoteResource, ParkedResponse?) {
        precondition(firstBytes.map { $0 > 0 } ?? true, "a first request has bytes")
        var given: Response?
        var failed: ProbeFailure?
        switch earlier?.kind {
        case let .response(response)?: given = response
        case let .failure(failure)?: failed = failure
        case nil: break
        }
        let response = try withRetries(afterFailed: failed) { () throws(ProbeFailure) in
            let response: Response
            if let taken = given {
                (response, given) = (taken, nil)
            } else {
                response = try request(url, method: .firstGet(firstBytes), conditions: [])
            }
            try Self.checkFirstRange(of: response, firstBytes: firstBytes)
            return response
        }
        if let whole = Self.fileReadWhole(in: response) { return whole }
        let answer: FirstGetAnswer
        do throws(BraidError) {
            answer = try Self.answer(to: response, of: url, firstBytes: firstBytes)
        } catch {
            response.parked?.cancel()
            throw error
        }
        switch answer {
        case let .file(resource, parkedRange):
            return (resource, response.parked.map { ParkedResponse($0, headers: response.headers, range: parkedRange) })
        case var .partWithDigest(resource):
            response.parked?.cancel()
            resource.digests += wholeFileDigests(at: resource)
            return (resource, nil)
        case .empty:
            // An empty file: nothing to fetch, and only a HEAD can tell its digests.
            response.parked?.cancel()
            return (try probe(url), nil)
        }
    }

    /// What a first GET's response says, where it did not read the file whole.
    private enum FirstGetAnswer {
        /// The file, and the bytes of it the body holds (nil for all of them, with no range).
        case file(RemoteResource, parkedRange: Range<Int64>?)
        /// The file, from a `206` of part of it whose `Content-MD5` describes that part: a `HEAD` tells the
        /// file's digests.
        case partWithDigest(RemoteResource)
        /// A `416`: an empty file, which has no first byte to ask for.
        case empty
    }

    private static func mismatch(_ headers: ResponseHeaders, firstBytes: Int64?) -> String {
        "the server answered a request for bytes \(firstBytes.map { "0-\($0 - 1)" } ?? "0-") with a Content-Range "
            + "that does not match: '\(headers["content-range"] ?? "(none)")'"
    }

    /// Throws a first GET's `206` of other bytes than it asked for, as a violation to retry, as a range request's
    /// is, having given the response up: the rest of the file from byte 0, or (a server may send less of an open
    /// range) a part of it from there; exactly the bytes asked for when they are bounded.
    private static func checkFirstRange(of response: Response, firstBytes: Int64?) throws(ProbeFailure) {
        guard response.headers.status == 206,
            let contentRange = response.headers["content-range"].flatMap(ContentRange.init),
            let range = contentRange.range, let total = contentRange.completeLength
        else { return }
        let expected = firstBytes.map { range.upperBound == min($0, total) - 1 } ?? (range.upperBound < total)
        guard range.lowerBound != 0 || !expected else { return }
        response.parked?.cancel()
        throw ProbeFailure(
            kind: .transient(
                .protocolViolation, mismatch(response.headers, firstBytes: firstBytes), retryAfter: nil,
                refusedConnection: false),
            headers: response.headers)
    }

    /// What a first GET's `response` says of the file, with no further request; a status that is not an answer is
    /// thrown, the response left to the caller to give up.
    private static func answer(
        to response: Response, of url: String, firstBytes: Int64?
    ) throws(BraidError) -> FirstGetAnswer {
        let headers = response.headers
        if let problem = headers.contentLengthProblem { throw .protocolViolation(problem) }
        var resource = described(by: headers, url: url, effectiveURL: response.effectiveURL)
        switch headers.status {
        case 206:
            guard let contentRange = headers["content-range"].flatMap(ContentRange.init),
                let range = contentRange.range, let total = contentRange.completeLength
            else {
                // A length too long for Braid is said as such; any other unreadable Content-Range is a violation.
                let claimed = headers["content-range"]?.split(separator: "/").last.flatMap { Int64($0) }
                try RemoteResource.checkLength(claimed)
                throw .protocolViolation(mismatch(headers, firstBytes: firstBytes))
            }
            let whole = range.upperBound + 1 == total
            resource.length = total
            resource.acceptsRanges = true
            // The body is the whole file when it covers it: its Content-MD5 is the file's.
            resource.digests = DigestHeaders.digests(in: headers, isPartialResponse: !whole)
            try RemoteResource.checkLength(resource.length)
            if !whole && headers["content-md5"] != nil { return .partWithDigest(resource) }
            return .file(resource, parkedRange: 0..<(range.upperBound + 1))
        case 200:
            resource.length = headers.contentLength
            resource.digests = DigestHeaders.digests(in: headers, isPartialResponse: false)
            try RemoteResource.checkLength(resource.length)
            return .file(resource, parkedRange: nil)
        case 416:
            return .empty
        default:
            throw failure(for: headers)
        }
    }

    /// The file a first GET's response read whole, and the response, its body in memory; nil when it read none. Its
    /// head was read for the file as the body started (`wholeFile(in:url:effectiveURL:)`).
    private static func fileReadWhole(in response: Response) -> (RemoteResource, ParkedResponse)? {
        guard let body = response.body, let file = response.wholeFile else { return nil }
        let headers = response.headers
        let first = ParkedResponse(
            body: body, headers: headers, range: headers.status == 206 ? 0..<Int64(body.count) : nil,
            firstByteSeconds: response.firstByteSeconds, startReported: response.startReported)
        return (file, first)
    }

    /// What a first GET's response says of the file before its length is read: its validators, name and type.
    private static func described(by headers: ResponseHeaders, url: String, effectiveURL: String?) -> RemoteResource {
        RemoteResource(
            requestedURL: url,
            resolvedURL: effectiveURL ?? url,
            length: nil,
            acceptsRanges: false,
            etag: headers["etag"],
            lastModified: headers["last-modified"],
            suggestedFilename: headers["content-disposition"].flatMap(ContentDisposition.filename),
            digests: [],
            contentType: headers["content-type"]
        )
    }

    /// The file a first GET's response carries whole (`ResponseHeaders.wholeFileLength`), as `probeFirstGet` finds
    /// it once the response is in.
    static func wholeFile(in headers: ResponseHeaders, url: String, effectiveURL: String?) -> RemoteResource? {
        guard let length = headers.wholeFileLength, (try? RemoteResource.checkLength(length)) != nil else { return nil }
        var resource = described(by: headers, url: url, effectiveURL: effectiveURL)
        resource.length = length
        resource.acceptsRanges = headers.status == 206
        resource.digests = DigestHeaders.digests(in: headers, isPartialResponse: false)
        return resource
    }

    /// Whether `headers` ask S3 for its checksums, which it sends only with whole objects and `HEAD`.
    static func asksS3ForChecksums(_ headers: [String]) -> Bool {
        headers.contains { $0.lowercased().hasPrefix("x-amz-checksum-mode:") }
    }

    /// The digests a `HEAD` of `resource`'s URL offers for the whole file, when it describes the same file (the
    /// same length and validators); none when it fails or does not.
    private func wholeFileDigests(at resource: RemoteResource) -> [ExpectedDigest] {
        var head = self
        head.retryPolicy.maximumAttempts = min(2, retryPolicy.maximumAttempts)
        guard
            let answer = try? head.withRetries({ () throws(ProbeFailure) in
                try head.request(resource.resolvedURL, method: .head, conditions: [])
            }),
            (200..<300).contains(answer.headers.status), answer.headers.contentLength == resource.length,
            answer.headers["etag"] == resource.etag, answer.headers["last-modified"] == resource.lastModified
        else { return [] }
        return DigestHeaders.digests(in: answer.headers, isPartialResponse: false)
    }

    private func probeHeaders(_ url: String, conditions: [String]) throws(BraidError) -> Answer {
        let head = try withRetries { () throws(ProbeFailure) in
            try request(url, method: .head, conditions: conditions)
        }
        if !conditions.isEmpty && head.headers.status == 304 { return .notModified }
        let headUsable = head.headers.status >= 200 && head.headers.status < 300
        var resource = RemoteResource(
            requestedURL: url,
            resolvedURL: head.effectiveURL ?? url,
            length: headUsable ? head.headers.contentLength : nil,
            acceptsRanges: false,
            etag: headUsable ? head.headers["etag"] : nil,
            lastModified: headUsable ? head.headers["last-modified"] : nil,
            suggestedFilename: headUsable
                ? head.headers["content-disposition"].flatMap(ContentDisposition.filename) : nil,
            digests: headUsable ? DigestHeaders.digests(in: head.headers, isPartialResponse: false) : [],
            contentType: headUsable ? head.headers["content-type"] : nil
        )
        if trustsHead, headUsable, resource.length != nil,
            head.headers["accept-ranges"]?.lowercased().contains("bytes") == true
        {
            resource.acceptsRanges = true
            if resource.length == 0 { resource.acceptsRanges = false }
            return .resource(resource)
        }

        // A HEAD that answered has settled the conditions: the ranged GET asks for the file whatever its date.
        let getConditions = headUsable ? [] : conditions
        let get = try withRetries { () throws(ProbeFailure) in
            try request(url, method: .rangedGet, conditions: getConditions)
        }
        if !getConditions.isEmpty && get.headers.status == 304 { return .notModified }
        let headers = get.headers
        resource.resolvedURL = get.effectiveURL ?? resource.resolvedURL
        resource.etag = headers["etag"] ?? resource.etag
        resource.lastModified = headers["last-modified"] ?? resource.lastModified
        resource.suggestedFilename =
            headers["content-disposition"].flatMap(ContentDisposition.filename) ?? resource.suggestedFilename
        resource.contentType = headers["content-type"] ?? resource.contentType
        if let problem = headers.contentLengthProblem { throw .protocolViolation(problem) }
        switch headers.status {
        case 206:
            guard let contentRange = headers["content-range"].flatMap(ContentRange.init),
                contentRange.range == 0...0, let total = contentRange.completeLength
            else {
                throw .protocolViolation(
                    "the server answered a 1-byte range request with a Content-Range that does not match: "
                        + "'\(headers["content-range"] ?? "(none)")'"
                )
            }
            resource.length = total
            resource.acceptsRanges = true
            resource.digests += DigestHeaders.digests(in: headers, isPartialResponse: true)
        case 200:
            resource.length = headers.contentLength
            resource.acceptsRanges = false
            resource.digests = DigestHeaders.digests(in: headers, isPartialResponse: false)
        case 416:
            // A range of an empty file cannot be satisfied: `Content-Range: bytes */0`.
            guard let contentRange = headers["content-range"].flatMap(ContentRange.init),
                contentRange.range == nil, contentRange.completeLength == 0
            else {
                throw .protocolViolation("the server refused a 1-byte range request (HTTP 416)", status: 416)
            }
            resource.length = 0
            resource.acceptsRanges = false
        default:
            throw Self.failure(for: headers)
        }
        return .resource(resource)
    }

    private enum Method {
        case head, rangedGet
        /// A GET of the file from its start, of its first bytes when bounded, its body paused for the transfer
        /// (`probeFirstGet`).
        case firstGet(Int64?)
    }

    fileprivate struct Response {
        var headers: ResponseHeaders
        var effectiveURL: String?
        /// A `firstGet` whose `2xx` body waits, paused.
        var parked: PoolRequest?
        /// A `firstGet`'s `2xx` body read to its end: the whole file (`readsWhole`), as its head describes it.
        var body: [UInt8]? = nil
        var wholeFile: RemoteResource? = nil
        var firstByteSeconds: Double = 0
        /// Whether the start of a body read whole was reported as it came (`onWholeBodyStart`).
        var startReported = false
    }

    /// Configures `handle` for one hop of a probe request of `url`, to `current` (`url` itself, or where a redirect
    /// led), with a fresh collector's callbacks; returns the collector, and whether the hop uses HTTP/1.1 because
    /// HTTP/2 failed at its origin.
    private func configureHop(
        _ handle: EasyHandle, of url: String, to current: String, method: Method, conditions: [String]
    ) -> (ProbeCollector, fallenBack: Bool) {
        let collector = ProbeCollector()
        let fallenBack = pool.driver.http2Failed(current)
        if case let .firstGet(bytes) = method {
            collector.parksBody = true
            collector.readsWhole = readsWhole
            collector.onBody = onWholeBody
            collector.describe = { headers in Self.wholeFile(in: headers, url: url, effectiveURL: current) }
            collector.onStart = onWholeBodyStart
            Self.configureFirstGet(
                handle, to: current, options: options, firstBytes: bytes, conditions: conditions,
                multiplexes: multiplexes, http2Failed: fallenBack)
        } else {
            // The conditions are about the file, not the user: every hop gets them, as curl -z sends them.
            handle.configure(url: current, options: options, headers: conditions)
            handle.setHTTPVersion(for: current, options: options, multiplexes: multiplexes, http2Failed: fallenBack)
        }
        let context = Unmanaged.passUnretained(collector).toOpaque()
        handle.set(CURLOPT_HEADERDATA, pointer: context)
        handle.set(CURLOPT_HEADERFUNCTION, callback: ProbeCollector.headerCallback)
        handle.set(CURLOPT_WRITEDATA, pointer: context)
        handle.set(CURLOPT_WRITEFUNCTION, callback: ProbeCollector.writeCallback)
        switch method {
        case .head: handle.set(CURLOPT_NOBODY, true)
        case .rangedGet: handle.set(CURLOPT_RANGE, "0-0")
        case .firstGet: break
        }
        return (collector, fallenBack)
    }

    /// Configures `handle` for a first GET, to `current`, of the file from its start: its first `firstBytes`
    /// (all of it when nil), with `conditions` (`If-Modified-Since: …`), asking for the digest of a response kept
    /// whole so that it can be checked as it lands (as the range requests ask, `Source`). A GET that asks S3 for its
    /// checksums asks for the whole object, with no range: S3 sends an object's checksums with no ranged one. The
    /// caller sets the callbacks.
    private static func configureFirstGet(
        _ handle: EasyHandle, to current: String, options: RequestOptions, firstBytes: Int64?, conditions: [String],
        multiplexes: Bool, http2Failed: Bool
    ) {
        // The conditions are about the file, not the user: every hop gets them, as curl -z sends them.
        handle.configure(
            url: current, options: options, headers: conditions + ["Want-Content-Digest: sha-256=10, sha-512=5"])
        handle.setHTTPVersion(for: current, options: options, multiplexes: multiplexes, http2Failed: http2Failed)
        // Set even when there is none: a spare handle (`startFirstGet`) keeps the range of its last request.
        handle.set(CURLOPT_RANGE, firstGetRange(firstBytes: firstBytes, options: options))
    }

    /// The range a first GET asks for: none when it asks S3 for its checksums (`configureFirstGet`).
    private static func firstGetRange(firstBytes: Int64?, options: RequestOptions) -> String? {
        asksS3ForChecksums(options.headers) ? nil : firstBytes.map { "0-\($0 - 1)" } ?? "0-"
    }

    /// What `-vv` says of a hop of a request of `method` to `current`; nil when nothing is logged.
    private func logged(_ method: Method, to current: String) -> RequestLog.Entry? {
        guard let requestLog else { return nil }
        switch method {
        case .head:
            return requestLog.entry("HEAD", current)
        case .rangedGet:
            return requestLog.entry("GET", current, ["braid.range": "0-0"])
        case let .firstGet(bytes):
            let range = Self.firstGetRange(firstBytes: bytes, options: options)
            return requestLog.entry("GET", current, range.map { ["braid.range": "\($0)"] } ?? [:])
        }
    }

    /// What stops a request of `method`: a cancellation, and for a first GET that reads a body whole, a pause too.
    private func stops(_ method: Method) -> @Sendable () -> Bool {
        if case .firstGet = method, readsWhole != nil {
            return { [isCancelled, isPaused] in isCancelled() || isPaused() }
        }
        return isCancelled
    }

    /// The response of a first GET's hop that read its body whole (`readsWhole`), once it ended with `code`; nil
    /// when it read none. A body shorter or longer than its head announced is thrown, as a violation to retry.
    private static func bodyReadWhole(
        by collector: ProbeCollector, on handle: EasyHandle, ended code: CURLcode, at current: String
    ) throws(ProbeFailure) -> Response? {
        guard code == CURLE_OK || collector.overran, let body = collector.body else { return nil }
        // libcurl holds a body to its Content-Length; this holds it to the range's too.
        guard Int64(body.count) == collector.wholeLength, !collector.overran else {
            let message =
                "the server's response to the first request does not have the \(collector.wholeLength) bytes "
                + "its head announced"
            throw ProbeFailure(
                kind: .transient(.protocolViolation, message, retryAfter: nil, refusedConnection: false),
                headers: collector.headers)
        }
        return Response(
            headers: collector.headers, effectiveURL: current, body: body, wholeFile: collector.wholeFile,
            firstByteSeconds: handle.firstByteSeconds, startReported: collector.startReported)
    }

    /// Runs one probe request, following redirects; a transport failure or a retryable status is thrown as
    /// `ProbeFailure`.
    private func request(_ url: String, method: Method, conditions: [String]) throws(ProbeFailure) -> Response {
        let handle = EasyHandle()
        var current = url
        var hops = 0
        while true {
            let (collector, fallenBack) = configureHop(
                handle, of: url, to: current, method: method, conditions: conditions)
            let stops = stops(method)
            let request = PoolRequest(
                handle, context: collector, logged: logged(method, to: current), isCancelled: stops
            ) { collector.parked }
            let code: CURLcode
            switch request.perform(on: pool) {
            case .parked:
                return Response(headers: collector.headers, effectiveURL: current, parked: request)
            case let .ended(result):
                code = result
            }
            if code == CURLE_ABORTED_BY_CALLBACK && stops() {
                throw ProbeFailure(kind: .fatal(.cancelled, "cancelled while probing"), headers: nil)
            }
            let hop = Hop(url: current, number: hops, collector: collector, handle: handle, fallenBack: fallenBack)
            switch try end(of: hop, code: code) {
            case let .response(response):
                return response
            case let .redirect(target):
                hops += 1
                current = target
            case .again:
                continue
            }
        }
    }

    /// One hop of a probe's request, as libcurl ran it: to `url`, after `number` redirects.
    private struct Hop {
        let url: String
        let number: Int
        let collector: ProbeCollector
        let handle: EasyHandle
        /// Whether it used HTTP/1.1 because HTTP/2 failed at its origin.
        let fallenBack: Bool
    }

    /// Where a hop that ended (not parked, not stopped) leads.
    private enum HopEnd {
        /// The response: its body read whole, or its head alone (a status that is not retried, a body given up).
        case response(Response)
        /// A redirect the probe may follow, to this URL.
        case redirect(String)
        /// The same hop again, over HTTP/1.1: the server offered HTTP/2 and then reset its streams.
        case again
    }

    /// What `hop`, ended with `code`, comes to, for `request` and `startFirstGet` alike: a transport failure or a
    /// retryable status is thrown as `ProbeFailure`, as is a redirect that may not be followed.
    private func end(of hop: Hop, code: CURLcode) throws(ProbeFailure) -> HopEnd {
        if EasyHandle.failedInHTTP2(code) && !hop.fallenBack {
            pool.driver.recordHTTP2Failure(hop.url)
            return .again
        }
        if let response = try Self.bodyReadWhole(by: hop.collector, on: hop.handle, ended: code, at: hop.url) {
            return .response(response)
        }
        if !hop.collector.responseCame(endingWith: code) {
            let failure = TransportFailure(
                code, detail: hop.handle.describe(code), inHead: hop.collector.headers.isHeadOpen)
            throw ProbeFailure(
                kind: FailureKind.classify(failure),
                headers: nil,
                remedies: FailureKind.remedies(for: failure.kind),
                transport: failure
            )
        }
        let received = hop.collector.headers
        if Self.redirectStatuses.contains(received.status), let target = hop.handle.redirectURL {
            return .redirect(try follow(from: hop.url, to: target, hops: hop.number + 1, status: received.status))
        }
        if received.status >= 400 {
            let kind = FailureKind.classify(
                status: received.status, retryAfter: received["retry-after"], wallClock: TransferEngine.wallClock())
            if case .transient = kind { throw ProbeFailure(kind: kind, headers: received) }
        }
        return .response(Response(headers: received, effectiveURL: hop.url))
    }

    private static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Decides whether a redirect from `source` to `target` may be followed; returns the URL to request next.
    private func follow(from source: String, to target: String, hops: Int, status: Int) throws(ProbeFailure)
        -> String
    {
        func refuse(_ message: String, remedies: [BraidError.Remedy] = []) -> ProbeFailure {
            ProbeFailure(kind: .fatal(.protocolViolation, message), headers: nil, remedies: remedies)
        }
        guard hops <= options.maximumRedirects else {
            throw refuse("too many redirects (more than \(options.maximumRedirects)), ending at \(source)")
        }
        guard let next = Origin(url: target), next.scheme == "http" || next.scheme == "https" else {
            throw refuse("the server redirected (HTTP \(status)) to '\(target)', which is not an http or https URL")
        }
        guard options.redirectSchemes.contains(next.scheme) else {
            throw refuse(
                "refusing the redirect from \(source) to \(target): redirects to \(next.scheme) are not allowed",
                remedies: [.allowRedirectScheme]
            )
        }
        if Origin(url: source)?.scheme == "https" && next.scheme == "http" {
            onNotice(
                DownloadEvent.warningPrefix
                    + "\(source) redirects to plain HTTP (\(target)): the download is no longer protected by TLS and your"
                    + " credentials are not sent there; --proto-redir =https refuses such redirects"
            )
        }
        return target
    }

    /// Runs `body` until it returns, as often as the retry policy allows a failure it throws.
    ///
    /// - Parameter first: how a first attempt made already failed, which counts as one: `body` is retried as after
    ///   any failure.
    private func withRetries(
        afterFailed first: ProbeFailure? = nil, _ body: () throws(ProbeFailure) -> Response
    ) throws(BraidError) -> Response {
        var attempt = first == nil ? 0 : 1
        var failure = first
        while true {
            if let failure { try awaitRetry(after: failure, attempt: attempt) }
            attempt += 1
            do {
                return try body()
            } catch {
                failure = error
            }
        }
    }

    /// Throws `failure`, the end of attempt `attempt`, when it is fatal or the last attempt allowed; else reports the
    /// retry and waits for it.
    private func awaitRetry(after failure: ProbeFailure, attempt: Int) throws(BraidError) {
        switch failure.kind {
        case let .fatal(code, message):
            throw BraidError(
                code,
                message,
                httpStatus: failure.headers?.status,
                remedies: failure.remedies,
                cause: failure.transport?.cause
            )
        case let .transient(code, message, retryAfter, _):
            let limit =
                isFirstContact
                ? retryPolicy.attemptsForFirstContact(after: failure.transport?.kind)
                : retryPolicy.maximumAttempts
            guard attempt < limit else {
                throw BraidError(
                    code,
                    attempt == 1 ? message : "\(message); gave up after \(attempt) attempts",
                    httpStatus: failure.headers?.status,
                    cause: failure.transport?.cause
                )
            }
            if let retryAfter, retryAfter > retryPolicy.maximumRetryAfter {
                throw .protocolViolation(RetryPolicy.refusal(message, retryAfter: retryAfter))
            }
            let delay = retryPolicy.delay(
                afterAttempt: attempt,
                retryAfter: retryAfter,
                random: Double.random(in: 0...1)
            )
            onRetry(message, delay)
            try sleep(seconds: delay)
        }
    }

    private func sleep(seconds: Double) throws(BraidError) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if isCancelled() { throw BraidError(.cancelled, "cancelled while waiting to retry") }
            usleep(UInt32(min(0.05, max(0, deadline.timeIntervalSinceNow)) * 1_000_000))
        }
    }

    private static func failure(for headers: ResponseHeaders) -> BraidError {
        let kind = FailureKind.classify(
            status: headers.status, retryAfter: headers["retry-after"], wallClock: TransferEngine.wallClock())
        return BraidError(.protocolViolation, kind.message, httpStatus: headers.status)
    }
}

// MARK: A first GET the pool's thread runs

extension Prober {
    /// How `startFirstGet`'s request ended, for its caller on the pool's thread.
    enum PooledFirstGet {
        /// The file, its body read whole or paused for a transfer to adopt.
        case found(RemoteResource, ParkedResponse)
        /// Anything else the request came to, which `probeFirstGet(_:firstBytes:after:)` settles on a thread that
        /// can wait, as its first attempt, without asking again: a failure to retry (a transport failure, a
        /// retryable status, a body cut short), one that ends the download (a redirect it may not follow), or a
        /// response that is not the file as it stands (an error status, an empty file, a part whose digest only a
        /// `HEAD` tells).
        case unsettled(FirstGetEnd)
        /// A stop or a pause (`isCancelled`, `isPaused`) ended it: nothing to go on from.
        case stopped
    }

    /// What a first GET on the pool's thread ended with, for `probeFirstGet(_:firstBytes:after:)`.
    struct FirstGetEnd: @unchecked Sendable {
        // @unchecked: made on the pool's thread and handed to the one blocking thread that settles it. A response
        // in it holds no request: a paused body is given up before it is handed over.
        fileprivate enum Kind {
            case response(Response)
            case failure(ProbeFailure)
        }

        fileprivate let kind: Kind
    }

    /// `probeFirstGet`'s request for a caller that does not wait for it (`PooledStart`): it runs on the pool,
    /// following redirects and falling back from HTTP/2 as `probeFirstGet`'s does, and `then` is told on the pool's
    /// thread how it ended (`PooledFirstGet`).
    ///
    /// Called on the pool's thread. A handle whose request read a file whole is kept for the next first GET on the
    /// pool (`TransferPool.Driver.keepSpare`), which sets every option such a request sets again.
    func startFirstGet(_ url: String, firstBytes: Int64?, then: @escaping (PooledFirstGet) -> Void) {
        let handle = pool.driver.takeSpareHandle() ?? EasyHandle()
        sendFirstGet(url, to: url, hops: 0, on: handle, firstBytes: firstBytes, then: then)
    }

    /// One hop of `startFirstGet`'s request, to `current`, after `hops` redirects.
    private func sendFirstGet(
        _ url: String, to current: String, hops: Int, on handle: EasyHandle, firstBytes: Int64?,
        then: @escaping (PooledFirstGet) -> Void
    ) {
        let method = Method.firstGet(firstBytes)
        let stops = stops(method)
        let (collector, fallenBack) = configureHop(handle, of: url, to: current, method: method, conditions: [])
        let request = PoolRequest(
            handle, context: collector, logged: logged(method, to: current), isCancelled: stops
        ) { collector.parked }
        request.start(on: pool) { [self] outcome in
            let unsettled = { (kind: FirstGetEnd.Kind) in then(.unsettled(FirstGetEnd(kind: kind))) }
            switch outcome {
            case .parked:
                let response = Response(headers: collector.headers, effectiveURL: current, parked: request)
                do throws(ProbeFailure) {
                    try Self.checkFirstRange(of: response, firstBytes: firstBytes)
                } catch {
                    return unsettled(.failure(error))
                }
                if case let .file(resource, range)? = try? Self.answer(to: response, of: url, firstBytes: firstBytes) {
                    return then(.found(resource, ParkedResponse(request, headers: collector.headers, range: range)))
                }
                // Given up here: no connection waits, paused, for the thread that settles it.
                request.cancel()
                unsettled(.response(Response(headers: collector.headers, effectiveURL: current)))
            case let .ended(code):
                if code == CURLE_ABORTED_BY_CALLBACK && stops() { return then(.stopped) }
                let hop = Hop(url: current, number: hops, collector: collector, handle: handle, fallenBack: fallenBack)
                let end: HopEnd
                do throws(ProbeFailure) {
                    end = try self.end(of: hop, code: code)
                } catch {
                    return unsettled(.failure(error))
                }
                switch end {
                case let .response(response):
                    guard let found = Self.fileReadWhole(in: response) else { return unsettled(.response(response)) }
                    // Nothing holds the request any more: its body is in `found`.
                    pool.driver.keepSpare(handle)
                    then(.found(found.0, found.1))
                case let .redirect(target):
                    sendFirstGet(url, to: target, hops: hops + 1, on: handle, firstBytes: firstBytes, then: then)
                case .again:
                    sendFirstGet(url, to: current, hops: hops, on: handle, firstBytes: firstBytes, then: then)
                }
            }
        }
    }
}

private struct ProbeFailure: Error {
    var kind: FailureKind
    var headers: ResponseHeaders?
    var remedies: [BraidError.Remedy] = []
    /// How the request failed below HTTP, when it did rather than with a status.
    var transport: TransportFailure?
}

/// Gathers the probe's response headers and stops the body as soon as it starts, unless it is small enough to
/// read to its end, which keeps the connection for the next request.
private final class ProbeCollector {
    var headers = ResponseHeaders()
    var stoppedOnPurpose = false
    /// Whether a `2xx` body is paused at its first byte, for the transfer to adopt, rather than stopped.
    var parksBody = false
    /// Whether it was.
    var parked = false
    /// The longest `2xx` body of the whole file read to its end rather than paused (`Prober.readsWhole`).
    var readsWhole: Int64?
    /// The body being read to its end, once its first bytes came and it is the whole file.
    var body: [UInt8]?
    /// The length of the file the body being read is, from the head.
    var wholeLength: Int64 = 0
    /// Whether the body being read ran past `wholeLength`.
    var overran = false
    /// What the head of a body about to be read whole says of the file (`Prober.wholeFile`), and the file so
    /// described; nil until then, and when the head does not describe a file (the body is then paused).
    var describe: ((ResponseHeaders) -> RemoteResource?)?
    var wholeFile: RemoteResource?
    /// Told of the file whose body is about to be read whole (`Prober.onWholeBodyStart`), unless its first bytes
    /// are all of it; and whether it was.
    var onStart: (@Sendable (RemoteResource) -> Void)?
    var startReported = false
    /// Told of the body being read whole (`Prober.onWholeBody`), every `reportInterval` seconds.
    var onBody: (@Sendable (Int64, Int64, Double) -> Void)?
    /// When the body being read started, and when it is next reported.
    private var bodyStarted = 0.0
    private var nextReport = 0.0
    private static let reportInterval = 0.25
    /// Body bytes of a redirect or an error read so far.
    private var discarded = 0
    /// The most of a redirect's or an error's body read to keep the connection: more costs more than a new one.
    private static let discardable = 64 << 10

    /// Whether a request that ended with `code` brought its response: it ended well, or its body was stopped on
    /// purpose (a redirect's or an error's, longer than is worth reading).
    func responseCame(endingWith code: CURLcode) -> Bool {
        code == CURLE_OK || (code == CURLE_WRITE_ERROR && stoppedOnPurpose)
    }

    static func from(_ userdata: UnsafeMutableRawPointer?) -> ProbeCollector {
        Unmanaged<ProbeCollector>.fromOpaque(userdata!).takeUnretainedValue()
    }

    static let headerCallback: braid_curl_data_callback = { data, size, count, userdata in
        ProbeCollector.from(userdata).headers.consume(bytes: UnsafeRawBufferPointer(start: data, count: size * count))
        return size * count
    }

    static let writeCallback: braid_curl_data_callback = { data, size, count, userdata in
        let collector = ProbeCollector.from(userdata)
        let status = collector.headers.status
        if collector.parksBody && (200..<300).contains(status) {
            if collector.body == nil && !collector.parked, let limit = collector.readsWhole,
                let length = collector.headers.wholeFileLength, length <= limit,
                let file = collector.describe?(collector.headers)
            {
                collector.wholeLength = length
                collector.wholeFile = file
                collector.body = []
                collector.body!.reserveCapacity(Int(length))
                if let onStart = collector.onStart, Int64(size * count) < length {
                    onStart(file)
                    collector.startReported = true
                }
                if collector.onBody != nil {
                    // Reported at once unless the first bytes are all of it, then every `reportInterval`.
                    collector.bodyStarted = TransferEngine.now()
                    collector.nextReport = collector.bodyStarted
                }
            }
            if collector.body != nil {
                // More than the head said ends the request, as a violation to retry, never as a longer file.
                guard Int64(collector.body!.count + size * count) <= collector.wholeLength else {
                    collector.overran = true
                    return braid_curl_abort_write
                }
                // Typed, so that the bytes are copied at once rather than one by one.
                let bytes = UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self)
                collector.body!.append(contentsOf: UnsafeBufferPointer(start: bytes, count: size * count))
                if let onBody = collector.onBody, Int64(collector.body!.count) < collector.wholeLength,
                    case let now = TransferEngine.now(), now >= collector.nextReport
                {
                    collector.nextReport = now + ProbeCollector.reportInterval
                    onBody(Int64(collector.body!.count), collector.wholeLength, now - collector.bodyStarted)
                }
                return size * count
            }
            // libcurl keeps the chunk and hands it to whatever write callback the handle has when it resumes.
            collector.parked = true
            return braid_curl_pause_write
        }
        // One byte of a 206 is all a probe needs; a 200's whole body is not wanted here at all.
        if status == 206 && size * count <= 1 { return size * count }
        if !(200..<300).contains(status) && collector.discarded + size * count <= ProbeCollector.discardable {
            collector.discarded += size * count
            return size * count
        }
        collector.stoppedOnPurpose = true
        return braid_curl_abort_write
    }
}
