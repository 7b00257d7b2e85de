import Foundation

extension ResponsePlan {
    /// Decides the answer to `request` for `route` (`nil` when no route has the path).
    ///
    /// Precedence, first match wins: connection limit, forced status, signed URLs (minted or required), redirect,
    /// method checks, the conditional headers (`304`), then the content itself, to which the body, range and header
    /// faults apply.
    init(answering request: HTTPRequestHead, route: TestServer.Route?, context: RequestContext) {
        self.init(status: 404)
        add("Date", HTTPDate.now())
        guard let route else {
            add("Content-Length", "0")
            return
        }
        let faults = route.faults.flatMap { $0.active(forRequest: context.requestNumber) }
        var content = route.content
        for case .changeContent(let afterRequests, let seed) in faults where context.requestNumber > afterRequests {
            content = TestContent(seed: seed, size: content.size)
        }
        for case .latency(let delay) in faults {
            latency += delay
        }
        if let refusal = Self.refusal(for: request, faults: faults, context: context) {
            status = refusal.status
            if let retryAfter = refusal.retryAfter {
                add("Retry-After", retryAfter)
            }
            if let location = refusal.location {
                add("Location", location)
            }
            if status == 405 {
                add("Allow", "GET, HEAD")
            }
            add("Content-Length", "0")
            closeConnection = refusal.closesConnection || !request.keepAlive
            return
        }
        if let document = route.document {
            status = 200
            add("Content-Type", document.contentType)
            add("Content-Length", String(document.bytes.count))
            if request.method != "HEAD" { documentBody = document.bytes }
        } else {
            serve(content, for: request, faults: faults, context: context)
        }
        closeConnection = closeConnection || !request.keepAlive
    }

    /// An answer that is not the content: a limit, a forced status, a redirect or an unsupported method.
    private static func refusal(
        for request: HTTPRequestHead, faults: [TestServer.Fault], context: RequestContext
    ) -> (status: Int, retryAfter: String?, location: String?, closesConnection: Bool)? {
        for case .limitConnections(let perClient, let retryAfter) in faults
        where context.requestsInFlightFromClient > perClient {
            return (503, retryAfter.map(String.init), nil, true)
        }
        for fault in faults {
            switch fault {
            case .status(let status, let retryAfter): return (status, retryAfter.map(String.init), nil, false)
            case .statusRawRetryAfter(let status, let retryAfter): return (status, retryAfter, nil, false)
            default: continue
            }
        }
        for case .mintSignedURL(let path, let validFor) in faults {
            let expires =
                Date().timeIntervalSince1970 + Double(validFor.components.seconds)
                + Double(validFor.components.attoseconds) / 1e18
            let target = SignedURL.target(path: path, expires: expires)
            return (302, nil, "http://127.0.0.1:\(context.port)\(target)", false)
        }
        if faults.contains(.requireSignedURL),
            request.method != "GET" || SignedURL.refusal(of: request.target, now: Date().timeIntervalSince1970) != nil
        {
            return (403, nil, nil, false)
        }
        for case .redirect(let status, let target) in faults {
            let location =
                switch target {
                case .path(let path): "http://127.0.0.1:\(context.port)\(path)"
                case .otherHost(let path): "http://localhost:\(context.port)\(path)"
                case .location(let location): location
                }
            return (status, nil, location, false)
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return (405, nil, nil, false)
        }
        if request.method == "HEAD" && faults.contains(.refuseHead) {
            return (405, nil, nil, false)
        }
        return nil
    }

    /// Fills in a `304`, `200`, `206` or `416` answer serving `content`.
    private mutating func serve(
        _ content: TestContent, for request: HTTPRequestHead, faults: [TestServer.Fault], context: RequestContext
    ) {
        let isHead = request.method == "HEAD"
        var entityTag = content.entityTag
        for case .entityTag(let value) in faults {
            entityTag = value
        }
        let recentlyModified = faults.contains(.recentlyModified)
        if recentlyModified { entityTag = "W/" + entityTag }
        let lastModified = faults.contains(.noLastModified) ? nil : content.lastModified
        if !faults.contains(.ignoreConditionals),
            Self.notModified(
                request, entityTag: entityTag,
                lastModified: lastModified == nil ? nil : content.lastModifiedSecondsSince1970)
        {
            status = 304
            add("ETag", entityTag)
            if let lastModified { add("Last-Modified", lastModified) }
            return
        }
        var selected = 0..<content.size
        var partial = false
        if !isHead, !faults.contains(.ignoreRange), let header = request.header("Range"),
            let spec = ByteRangeSpec(header: header),
            Self.ifRangeHolds(
                request.header("If-Range"), entityTag: entityTag,
                lastModified: recentlyModified ? nil : lastModified)
        {
            guard let range = spec.resolve(size: content.size) else {
                status = 416
                add("Content-Range", "bytes */\(Self.claimedLength(of: content, faults: faults))")
                add("Content-Length", "0")
                return
            }
            if !range.isEmpty {
                selected = Self.shift(range, in: content.size, faults: faults)
                partial = true
            }
        }
        status = partial ? 206 : 200
        add("Accept-Ranges", "bytes")
        add("Content-Type", "application/octet-stream")
        add("ETag", entityTag)
        if let lastModified { add("Last-Modified", lastModified) }
        if partial {
            let total = Self.claimedLength(of: content, faults: faults)
            add("Content-Range", "bytes \(selected.lowerBound)-\(selected.upperBound - 1)/\(total)")
        }
        // A 206 whose body is the whole content is the whole representation: Content-MD5 describes it too.
        addMetadata(of: content, faults: faults, partial: partial && selected != 0..<content.size, context: context)
        for case .contentDigest(let algorithms) in faults where !isHead {
            let values = algorithms.map { algorithm in
                let digest = context.rangeDigest(content, selected, algorithm)
                return "\(algorithm.reprDigestKey)=:\(Data(digest).base64EncodedString()):"
            }
            add("Content-Digest", values.joined(separator: ", "))
        }
        let length =
            partial
            ? String(selected.upperBound - selected.lowerBound) : Self.claimedLength(of: content, faults: faults)
        addFraming(length: length, isHead: isHead, faults: faults)
        if !isHead {
            body = Self.body(of: content, range: selected, faults: faults, context: context)
            if body?.ending != .complete || faults.contains(.closeDelimited) {
                closeConnection = true
            }
        }
    }

    /// Whether the request's preconditions ask for `304 Not Modified` (RFC 9110 §13.2.2): `If-None-Match` naming
    /// the entity tag (weak comparison), or, only without `If-None-Match`, an `If-Modified-Since` date no earlier
    /// than the last modification. A date that is not an IMF-fixdate is ignored.
    private static func notModified(_ request: HTTPRequestHead, entityTag: String, lastModified: Int?) -> Bool {
        func opaque(_ tag: Substring) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : tag }
        if let ifNoneMatch = request.header("If-None-Match") {
            let tags = ifNoneMatch.split(separator: ",").map {
                opaque(Substring($0.trimmingCharacters(in: .whitespaces)))
            }
            return tags.contains("*") || tags.contains(opaque(Substring(entityTag)))
        }
        guard let lastModified, let since = request.header("If-Modified-Since").flatMap(HTTPDate.parse) else {
            return false
        }
        return lastModified <= since
    }

    /// Whether `If-Range` (absent, an entity tag or a date) lets the `Range` header apply (RFC 9110 §13.1.5):
    /// only a strong match does, so a weak entity tag never does, nor a date when `lastModified` is nil (a file
    /// too recently modified for its date to be a strong validator).
    private static func ifRangeHolds(_ ifRange: String?, entityTag: String, lastModified: String?) -> Bool {
        guard let ifRange else { return true }
        if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
            return !ifRange.hasPrefix("W/") && ifRange == entityTag
        }
        return ifRange == lastModified
    }

    /// The complete length the headers claim: the content's, unless ``TestServer/Fault/claimLength(_:)`` says
    /// otherwise.
    private static func claimedLength(of content: TestContent, faults: [TestServer.Fault]) -> String {
        var claimed = String(content.size)
        for case .claimLength(let value) in faults {
            claimed = value
        }
        return claimed
    }

    /// `range` moved by any ``TestServer/Fault/shiftRange(offsetBy:)``, clamped to the content, and cut by any
    /// ``TestServer/Fault/capRange(bytes:)``.
    private static func shift(_ range: Range<UInt64>, in size: UInt64, faults: [TestServer.Fault]) -> Range<UInt64> {
        var result = range
        for case .shiftRange(let offset) in faults {
            let start = UInt64(min(max(Int64(result.lowerBound) + offset, 0), Int64(size) - 1))
            result = start..<min(start + UInt64(result.count), size)
        }
        for case .capRange(let bytes) in faults where bytes > 0 {
            result = result.lowerBound..<min(result.upperBound, result.lowerBound + bytes)
        }
        return result
    }

    /// Adds `Content-Disposition`, raw headers and digests.
    private mutating func addMetadata(
        of content: TestContent, faults: [TestServer.Fault], partial: Bool, context: RequestContext
    ) {
        func digest(_ algorithm: TestContent.DigestAlgorithm, correct: Bool) -> String {
            // An empty impostor would have the same digest, so a wrong digest is taken over at least one byte.
            let digested = correct ? content : TestContent(seed: content.impostor.seed, size: max(content.size, 1))
            return Data(context.digest(digested, algorithm)).base64EncodedString()
        }
        for fault in faults {
            switch fault {
            case .contentDisposition(let value):
                add("Content-Disposition", value)
            case .rawHeader(let name, let value):
                headers.append((name, value))
            case .contentMD5(let correct) where !partial:
                add("Content-MD5", digest(.md5, correct: correct))
            case .digest(let algorithms, let correct):
                let values = algorithms.map { "\($0.instanceDigestToken)=\(digest($0, correct: correct))" }
                add("Digest", values.joined(separator: ","))
            case .reprDigest(let algorithms, let correct):
                let values = algorithms.map { "\($0.reprDigestKey)=:\(digest($0, correct: correct)):" }
                add("Repr-Digest", values.joined(separator: ", "))
            case .googHash(let correct):
                add("x-goog-hash", "crc32c=AAAAAA==, md5=\(digest(.md5, correct: correct))")
            case .amzChecksum(let correct, let composite):
                add("x-amz-checksum-sha256", digest(.sha256, correct: correct) + (composite ? "-3" : ""))
                add("x-amz-checksum-type", composite ? "COMPOSITE" : "FULL_OBJECT")
            default:
                break
            }
        }
    }

    /// Adds `Content-Length` or `Transfer-Encoding` as the framing faults say.
    private mutating func addFraming(length: String, isHead: Bool, faults: [TestServer.Fault]) {
        if faults.contains(.chunked) {
            add("Transfer-Encoding", "chunked")
        } else if !faults.contains(.closeDelimited) {
            var reported = length
            for case .headContentLength(let value) in faults where isHead {
                reported = String(value)
            }
            add("Content-Length", reported)
        }
    }

    /// The body for `range` of `content`, shortened, lengthened, corrupted or paced by the faults; a range corrupted
    /// once counts as served from the first body that carries any of its bytes.
    private static func body(
        of content: TestContent, range: Range<UInt64>, faults: [TestServer.Fault], context: RequestContext
    ) -> ResponseBody {
        let promised = range.upperBound - range.lowerBound
        var body = ResponseBody(source: content, offset: range.lowerBound, length: promised)
        for fault in faults {
            switch fault {
            case .wrongBytes:
                body.source = content.impostor
            case .chunked:
                body.chunked = true
            case .throttle(let rate) where body.bytesPerSecond == nil:
                body.bytesPerSecond = rate
            case .totalThrottle(let rate):
                body.routeBytesPerSecond = rate
            case .slowConnection(let number, let rate) where context.connectionNumber == number:
                body.bytesPerSecond = rate
            case .slowConnections(let every, let rate) where context.connectionNumber % every == 0:
                body.bytesPerSecond = rate
            case .stall(let afterBytes):
                body.length = min(afterBytes, promised)
                body.ending = .stall
            case .closeAfter(let bytes):
                body.length = min(bytes, promised)
                body.ending = .close
            case .shortBody(let missingBytes):
                body.length = promised - min(missingBytes, promised)
                body.ending = .close
            case .extraBytes(let count):
                body.length = promised + count
                body.ending = .close
            default:
                break
            }
        }
        let carried = body.offset..<body.offset + body.length
        for case .corrupt(let bytes, let once) in faults where carried.overlaps(bytes) {
            if !once || context.claimCorruption(bytes) {
                body.corrupted.append(bytes)
            }
        }
        return body
    }
}

extension TestServer.Fault {
    /// The faults this one amounts to for the route's `number`-th request: ``onlyFirst(requests:_:)`` drops
    /// out after its count, ``afterFirst(requests:_:)`` comes in after it, every other fault is itself.
    fileprivate func active(forRequest number: Int) -> [TestServer.Fault] {
        switch self {
        case .onlyFirst(let requests, let fault): number <= requests ? fault.active(forRequest: number) : []
        case .afterFirst(let requests, let fault): number > requests ? fault.active(forRequest: number) : []
        default: [self]
        }
    }
}

extension TestContent {
    /// A content of the same size with other bytes, for faults that send wrong bytes or wrong digests.
    fileprivate var impostor: TestContent {
        TestContent(seed: seed ^ 0x5555_5555_5555_5555, size: size)
    }
}

extension TestContent.DigestAlgorithm {
    /// The token RFC 3230's `Digest` header uses.
    fileprivate var instanceDigestToken: String {
        switch self {
        case .md5: "MD5"
        case .sha256: "SHA-256"
        case .sha512: "SHA-512"
        }
    }

    /// The key RFC 9530's `Repr-Digest` header uses.
    fileprivate var reprDigestKey: String {
        switch self {
        case .md5: "md5"
        case .sha256: "sha-256"
        case .sha512: "sha-512"
        }
    }
}
