/// Decides whether a response may be written into the file: the right status, and for a range request exactly
/// the range and total length asked for, from the same file the probe found.
///
/// A pure function of the response head, the request and the source's resource, so that every way a server can
/// answer wrongly is tested without one.
enum ResponseCheck {
    /// Why an attempt stops before its transfer ends by itself, or nil while it may go on.
    enum Verdict: Equatable, Sendable {
        /// The segment's end was reached (another connection took over the rest, or a single stream reached the end
        /// of its plan).
        case reachedEnd
        case failure(FailureKind)
        /// The server's file is not the one being downloaded any more.
        case remoteChanged(String)
        /// The server answered a range request with the whole file.
        case rangesIgnored
        /// The length in `Content-Range` is not the one the probe learnt: probe again, trusting ranged GETs.
        case lengthDisagrees(String)
    }

    /// The verdict on a response head: nil accepts it.
    ///
    /// - Parameters:
    ///   - resource: what the probe learnt about the source the request went to (its length, its validators).
    ///   - ranged: whether the request asked for `request` as a byte range.
    ///   - wallClock: when the head was received, in seconds since 1970: a `Retry-After` date counts from it.
    static func verdict(
        status: Int,
        headers: ResponseHeaders,
        request: Range<Int64>,
        resource: RemoteResource,
        ranged: Bool,
        wallClock: Double
    ) -> Verdict? {
        if let problem = headers.contentLengthProblem { return .failure(.fatal(.protocolViolation, problem)) }
        switch status {
        case 206 where ranged:
            // If-Range is only sent with a strong validator; without one (or from a server that ignores it), a
            // changed file can still answer 206, and its validators are what tell.
            guard resource.sameRepresentation(etag: headers["etag"], lastModified: headers["last-modified"]) else {
                return .remoteChanged("the file on the server changed since the download started")
            }
            return partialContent(headers: headers, request: request, resource: resource)
        case 200:
            let sameFile = resource.sameRepresentation(etag: headers["etag"], lastModified: headers["last-modified"])
            let sameLength =
                resource.length == nil || headers.contentLength == nil || headers.contentLength == resource.length
            if !sameFile || !sameLength {
                return .remoteChanged("the file on the server changed since the download started")
            }
            return ranged ? .rangesIgnored : nil
        case 416:
            return .remoteChanged("the server can no longer serve the range (HTTP 416): the file changed")
        case 300..<400:
            // Redirects are followed only by the probe, which decides where the user's headers may go.
            return violation("the server redirected a range request (HTTP \(status)) instead of answering it")
        case 200..<300:
            return violation("the server answered with unexpected status \(status)")
        default:
            return .failure(
                FailureKind.classify(status: status, retryAfter: headers["retry-after"], wallClock: wallClock))
        }
    }

    private static func partialContent(
        headers: ResponseHeaders,
        request: Range<Int64>,
        resource: RemoteResource
    ) -> Verdict? {
        guard let header = headers["content-range"], let contentRange = ContentRange(header) else {
            return violation("the server's 206 response has no valid Content-Range")
        }
        let asked = request.lowerBound...(request.upperBound - 1)
        if let served = contentRange.range, served.lowerBound == asked.lowerBound, served.upperBound < asked.upperBound,
            contentRange.completeLength == resource.length
        {
            // Fewer bytes than asked, from where asked, as a server that caps each response sends them: taken, and
            // the rest asked for next (`servedEnd`), as aria2 does.
            return partialLength(headers: headers, served: served.lowerBound..<(served.upperBound + 1))
        }
        if contentRange.range == asked, let total = contentRange.completeLength, total != resource.length {
            return .lengthDisagrees(
                "the server's Content-Range says the file is \(total) bytes, its HEAD said \(resource.length ?? -1)"
            )
        }
        guard contentRange.range == asked, contentRange.completeLength == resource.length else {
            return violation(
                "the server answered bytes \(request.lowerBound)-\(request.upperBound - 1)/\(resource.length ?? -1) "
                    + "with Content-Range '\(header)'"
            )
        }
        return partialLength(headers: headers, served: request)
    }

    /// A violation when the `Content-Length` of a `206` serving `served` is not its length.
    private static func partialLength(headers: ResponseHeaders, served: Range<Int64>) -> Verdict? {
        if let length = headers.contentLength, length != served.upperBound - served.lowerBound {
            return violation("the server's Content-Length \(length) does not match its Content-Range")
        }
        return nil
    }

    /// Where the bytes of an accepted `206` end (exclusive) when the server sent fewer than `request` asked for,
    /// from its start; nil when it sent them all.
    static func servedEnd(headers: ResponseHeaders, request: Range<Int64>) -> Int64? {
        guard headers.status == 206, let header = headers["content-range"],
            let served = ContentRange(header)?.range, served.lowerBound == request.lowerBound,
            served.upperBound + 1 < request.upperBound
        else { return nil }
        return served.upperBound + 1
    }

    private static func violation(_ message: String) -> Verdict {
        .failure(.transient(.protocolViolation, message, retryAfter: nil, refusedConnection: false))
    }
}
