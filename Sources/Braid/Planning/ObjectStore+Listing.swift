import Logging

extension ObjectStore {
    /// The most objects one listing reads: a million keys take a few hundred MiB of memory, and a server that
    /// never stops paging must not take more.
    public static let maximumListedObjects = 1_000_000

    /// Every object of `bucket` whose key starts with `prefix`, in S3's order (by key), read page by page
    /// (ListObjectsV2, `pageSize` keys a page, each page asked for with the continuation token of the one before).
    ///
    /// The requests are made as a download's are (`options`: proxy, TLS trust, timeouts, retries, extra headers),
    /// signed for the store's origin only. The blocking work runs on a thread of its own; cancelling the calling
    /// task ends it between requests.
    ///
    /// - Throws: `BraidError`: `.protocolViolation` (exit status 5) when the store refuses, with S3's error code and
    ///   message (`NoSuchBucket`, `AccessDenied`, `InvalidAccessKeyId`, `SignatureDoesNotMatch`, …) and the
    ///   remedies `.objectStoreCredentials` or `.objectStoreRegion` where they apply, or when its answer is not a
    ///   listing; `.usage` for a store or options that cannot be used; `.network` when a page cannot be fetched
    ///   (a stall past `options.stallTimeoutSeconds` on each of `options.maximumAttempts`, a refused connection);
    ///   `.cancelled`. Every message but the cancellation's starts `listing s3://BUCKET/PREFIX: `.
    public func objects(
        in bucket: String, prefix: String, options: DownloadOptions = DownloadOptions(), pageSize: Int = 1000
    ) async throws(BraidError) -> [Object] {
        try validate()
        try options.validate()
        _ = try ObjectStoreLocation(parsing: "s3://\(bucket)/\(prefix)")
        guard (1...1000).contains(pageSize) else {
            throw .usage("a listing page holds 1 to 1000 keys, not \(pageSize)", option: .objectStore)
        }
        // Bound by the caller (swift-log's `withLogger`), as a download's is when it runs (`Download`).
        let log = RequestLog(Logger.current)
        return try await BlockingThreads.value { isCancelled throws(BraidError) in
            try listing(
                bucket: bucket, prefix: prefix, options: options, pageSize: pageSize, log: log,
                isCancelled: isCancelled)
        }
    }

    /// The request options of every request to `bucket`: the download options' own, signed, with the user's
    /// credentials (the signature, and any extra headers) scoped to the bucket's origin.
    func requestOptions(for bucket: String, sharing options: DownloadOptions) -> RequestOptions {
        var requestOptions = options.requestOptions
        requestOptions.awsSignature = signature
        requestOptions.credentials = CredentialScope(userNamed: [origin(of: bucket)])
        return requestOptions
    }

    private func listing(
        bucket: String, prefix: String, options: DownloadOptions, pageSize: Int, log: RequestLog?,
        isCancelled: () -> Bool
    ) throws(BraidError) -> [Object] {
        let source = "the listing of s3://\(bucket)/\(prefix)"
        let doing = "listing s3://\(bucket)/\(prefix)"
        let requestOptions = requestOptions(for: bucket, sharing: options)
        var objects: [Object] = []
        var token: String?
        var tokens: Set<String> = []
        while true {
            let url = listingURL(bucket: bucket, prefix: prefix, pageSize: pageSize, continuationToken: token)
            let response: Response
            do throws(BraidError) {
                response = try Self.get(
                    url, options: requestOptions, retryPolicy: options.retryPolicy, log: log,
                    isCancelled: isCancelled)
            } catch {
                // A stalled or refused connection says nothing of what it was for: a listing that fails before
                // any download started would otherwise read as a download's failure.
                throw error.code == .cancelled ? error : error.doing(doing)
            }
            guard response.headers.status == 200 else { throw failure(response, doing: doing) }
            let page = try ObjectListingParser.page(response.body, source: source)
            // By bytes: `hasPrefix` compares characters, and a combining mark after the prefix would hide it.
            for object in page.objects where !object.key.utf8.starts(with: prefix.utf8) {
                throw ObjectListingParser.refusal(
                    source, "lists the key '\(object.key)', which does not start with the prefix")
            }
            objects += page.objects
            guard objects.count <= Self.maximumListedObjects else {
                throw .protocolViolation(
                    "\(source) has more than \(Self.maximumListedObjects) objects; list a narrower prefix")
            }
            guard page.isTruncated, let next = page.continuationToken else { return objects }
            guard tokens.insert(next).inserted else {
                throw ObjectListingParser.refusal(source, "repeats the continuation token '\(next)'")
            }
            token = next
        }
    }

    /// The ListObjectsV2 request of one page. Its query is written in SigV4's canonical form (parameters sorted,
    /// values percent-encoded), which libcurl 7.88 signs as written. Keys come back percent-encoded
    /// (`encoding-type=url`), so that a key with a character XML 1.0 cannot carry still arrives.
    func listingURL(bucket: String, prefix: String, pageSize: Int, continuationToken: String?) -> String {
        var query: [String] = []
        if let continuationToken {
            query.append("continuation-token=" + Self.percentEncoded(continuationToken, keepingSlashes: false))
        }
        query += ["encoding-type=url", "list-type=2", "max-keys=\(pageSize)"]
        if !prefix.isEmpty { query.append("prefix=" + Self.percentEncoded(prefix, keepingSlashes: false)) }
        return origin(of: bucket) + "?" + query.joined(separator: "&")
    }

    /// The error for a refused request: S3's code and message from its error document when it sent one, and what
    /// would help.
    func failure(_ response: Response, doing what: String) -> BraidError {
        let status = response.headers.status
        let service = ObjectListingParser.serviceError(response.body)
        var message = "\(what): " + (service.map { "\($0.code): \($0.message)" } ?? "HTTP \(status)")
        if service != nil { message += " (HTTP \(status))" }
        var remedies: [BraidError.Remedy] = []
        let code = service?.code ?? ""
        let region = response.headers["x-amz-bucket-region"] ?? service?.region
        if Self.regionCodes.contains(code) || status == 301 || (code == "AuthorizationHeaderMalformed" && region != nil)
        {
            if let region, region != self.region { message += "; the bucket is in \(region)" }
            remedies.append(.objectStoreRegion)
        } else if Self.credentialCodes.contains(code) || status == 401 || (status == 403 && service == nil) {
            if credentials == nil { message += "; the request was not signed, as no credentials were given" }
            remedies.append(.objectStoreCredentials)
        }
        return BraidError(.protocolViolation, message, httpStatus: status, remedies: remedies)
    }

    /// S3's codes for a refused key, signature, token or permission.
    static let credentialCodes: Set<String> = [
        "AccessDenied", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken",
        "ExpiredToken", "TokenRefreshRequired", "InvalidSecurity", "AuthorizationHeaderMalformed",
        "InvalidPayer", "AccountProblem",
    ]
    /// S3's codes for a bucket asked for in the wrong region.
    static let regionCodes: Set<String> = [
        "PermanentRedirect", "TemporaryRedirect", "IllegalLocationConstraintException",
    ]
}

extension ObjectStoreLocation {
    /// Refuses a key that no request can name as it is: with a `.` or `..` segment, which URL parsers (libcurl's
    /// among them) remove before the request is sent. A prefix travels in the query, where they are harmless.
    func checkedForRequests() throws(BraidError) {
        guard !isPrefix else { return }
        let segments = key.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: { $0 == "." || $0 == ".." }) {
            throw .usage("the key '\(key)' has a '.' or '..' segment, which no URL can carry", option: .objectStore)
        }
    }
}
