extension TestServer {
    /// One way a route misbehaves. A route's faults combine; each is described by what the client sees.
    ///
    /// Counts of requests are per route and include every method, starting at 1; connection numbers are
    /// server-wide in accept order, starting at 1. Byte counts are body bytes, not header bytes.
    public indirect enum Fault: Sendable, Hashable {
        // MARK: Pacing

        /// Sends every body at most this fast, per connection.
        case throttle(bytesPerSecond: Int)
        /// Sends the route's bodies at most this fast all together, however many connections carry them, as a
        /// server behind one capped link does; the responses being sent take turns, a slice each.
        case totalThrottle(bytesPerSecond: Int)
        /// Waits this long after reading a request before sending the first byte of the response.
        case latency(Duration)
        /// Gives the `number`-th accepted connection its own, usually much lower, rate.
        case slowConnection(number: Int, bytesPerSecond: Int)
        /// Gives every `every`-th accepted connection (the `every`-th, `2 * every`-th, …) its own rate.
        case slowConnections(every: Int, bytesPerSecond: Int)

        // MARK: Broken bodies

        /// Sends `afterBytes` bytes of the body, then sends nothing more but keeps the connection open until the
        /// client gives up or the server shuts down.
        case stall(afterBytes: UInt64)
        /// Sends `afterBytes` bytes of the body, then closes the connection.
        case closeAfter(bytes: UInt64)
        /// Promises the full body but sends `missingBytes` fewer, then closes the connection.
        case shortBody(missingBytes: UInt64)
        /// Sends `count` bytes past the promised body (continuing the content), then closes the connection.
        case extraBytes(count: UInt64)

        // MARK: Wrong ranges

        /// Answers `200` with the whole body whatever `Range` asks for.
        case ignoreRange
        /// Answers a range moved by `offsetBy` bytes (clamped to the content), honestly labelled in
        /// `Content-Range`.
        case shiftRange(offsetBy: Int64)
        /// Answers a range with at most `bytes` of it, from where it starts, honestly labelled in `Content-Range`,
        /// as servers that cap each response do.
        case capRange(bytes: UInt64)
        /// Claims the asked range but sends bytes from a different content of the same size.
        case wrongBytes
        /// Alters (XOR 0xFF) every byte of `bytes` that a body carries, while the headers (`Content-Length`,
        /// `ETag`, digests) still describe the true content; with `once`, only the route's first response that
        /// carries any byte of `bytes` is altered, and later ones are correct.
        case corrupt(bytes: Range<UInt64>, once: Bool)

        // MARK: Refusals

        /// Answers every request with `status` (say 503 or 429), with `Retry-After: retryAfter` when given.
        case status(Int, retryAfter: Int?)
        /// Answers every request with `status`, with exactly this `Retry-After` value: a number past any integer
        /// type, a negative one, an HTTP-date far in the future.
        case statusRawRetryAfter(Int, retryAfter: String)
        /// Answers `HEAD` with `405 Method Not Allowed`.
        case refuseHead
        /// Allows at most `perClient` requests in flight from one client address; the others get `503` (with
        /// `Retry-After` when given) and a closed connection.
        case limitConnections(perClient: Int, retryAfter: Int?)

        // MARK: Framing and metadata

        /// Omits `Content-Length` and ends the body by closing the connection.
        case closeDelimited
        /// Omits `Content-Length` and sends the body with `Transfer-Encoding: chunked`.
        case chunked
        /// Answers `HEAD` with this `Content-Length`, disagreeing with what `GET` reports.
        case headContentLength(UInt64)
        /// Claims the content has this length, sent exactly as given (`2^62`, `99999999999999999999999`): as
        /// `Content-Length` of `HEAD` and `200`, and as the complete length in the `Content-Range` of `206` and
        /// `416`. The body and the ranges served are those of the real content.
        case claimLength(String)
        /// Serves a different content (new bytes, `ETag` and `Last-Modified`) of the same size from request
        /// `afterRequests + 1` on.
        case changeContent(afterRequests: Int, seed: UInt64)

        // MARK: Redirects

        /// Answers with a redirect status (301, 302, 307, 308) to `target`.
        case redirect(status: Int, to: RedirectTarget)

        // MARK: Signed URLs

        /// Answers `302` with a fresh signed URL for `path` on this server that expires `validFor` from now, minted
        /// per request as an object store's redirector does.
        case mintSignedURL(path: String, validFor: Duration)
        /// Serves the route only to a `GET` through an unexpired signed URL from ``mintSignedURL(path:validFor:)``;
        /// anything else, `HEAD` included (the signature is for `GET`, as S3's presigned URLs are), gets `403`.
        case requireSignedURL

        // MARK: Headers

        /// Sends `Content-Disposition` with exactly this value, e.g. `attachment; filename="../x"`.
        case contentDisposition(String)
        /// Sends this `ETag` instead of the content's own (and honours `If-Range` against it).
        case entityTag(String)
        /// The content was modified less than a second ago, as Apache sees it: its `ETag` is weak, and an
        /// `If-Range` date is not a strong validator, so a range request carrying one gets the whole body (200).
        case recentlyModified
        /// Sends no `Last-Modified`, so a client has no date to compare (and `If-Modified-Since` is not answered).
        case noLastModified
        /// Ignores `If-Modified-Since` and `If-None-Match`, answering as if they were absent, as some servers do.
        case ignoreConditionals
        /// Sends a header with raw bytes for its value, for filenames that are not valid UTF-8.
        case rawHeader(name: String, value: [UInt8])
        /// Sends `Content-MD5` (base64 of the MD5 of the whole representation) on `200`, `HEAD` and a `206` whose
        /// body is the whole representation, never on one of a part; a wrong one is the MD5 of another content.
        case contentMD5(correct: Bool)
        /// Sends an RFC 3230 `Digest` header (`MD5=<b64>,SHA-256=<b64>`) of the whole representation.
        case digest([TestContent.DigestAlgorithm], correct: Bool)
        /// Sends an RFC 9530 `Repr-Digest` header (`sha-256=:<b64>:`) of the whole representation.
        case reprDigest([TestContent.DigestAlgorithm], correct: Bool)
        /// Sends an RFC 9530 `Content-Digest` header (`sha-256=:<b64>:`) of the content each `200` or `206` carries:
        /// on a `206`, of the range only. It is always the digest of the true content, whatever other faults do to
        /// the bytes sent.
        case contentDigest([TestContent.DigestAlgorithm])
        /// Sends Google Cloud Storage's `x-goog-hash: crc32c=AAAAAA==, md5=<b64>` (the CRC32C is a placeholder).
        case googHash(correct: Bool)
        /// Sends S3's `x-amz-checksum-sha256: <b64>` with `x-amz-checksum-type: FULL_OBJECT`, or, when
        /// `composite`, the `<b64>-3` of a multipart upload with `x-amz-checksum-type: COMPOSITE`.
        case amzChecksum(correct: Bool, composite: Bool)

        // MARK: Scope

        /// Applies `fault` only to the first `requests` requests of the route, so that a retry can succeed.
        case onlyFirst(requests: Int, Fault)
        /// Applies `fault` only from request `requests + 1` on, so that a retry meets what the first did not.
        case afterFirst(requests: Int, Fault)
    }
}
