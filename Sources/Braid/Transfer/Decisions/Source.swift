/// One server a transfer fetches from: the URL the user gave, or one of its mirrors, with its own validators,
/// request headers and health; or a cache peer, which serves the origin's file at a URL of its own.
struct Source: Equatable, Sendable {
    /// What the probe learnt; `resolvedURL` changes when an expired signed URL is renewed.
    private(set) var resource: RemoteResource
    /// The host the shared connection budget counts it under: the one of the URL the probe resolved.
    let host: String
    /// The header lines its range requests add: `If-Range` and `Want-Content-Digest`. The user's headers are
    /// not among them: each request gets those its URL's origin may carry (`CredentialScope`).
    private(set) var headers: [String]
    var alive = true
    /// Failures in a row on this source.
    var failures = 0
    var activeConnections = 0
    /// How many times its URL was renewed by following the URL as given again.
    private(set) var generation = 0
    /// Whether its URL is being renewed: no request starts on it meanwhile.
    var refreshing = false
    /// Whether a response from its current URL was accepted since the URL was last renewed (the probe's counts).
    var answeredSinceRenewal = true
    /// Whether its `206` responses carry a `Content-Digest`: its responses are then not cut short by steals.
    var servesContentDigests = false
    /// For a cache peer, its index in the transfer's `CachePeerRouter`: asked only for the slices the router
    /// gives it, at the URL the engine makes from its template and the origin's URL; nil for the origin and its
    /// mirrors.
    let peer: Int?

    /// Consecutive failures after which a source is dropped, while another is still alive.
    static let maximumFailures = 3

    init(resource: RemoteResource, usesRanges: Bool) {
        self.resource = resource
        host = Origin(url: resource.resolvedURL)?.host ?? ""
        var headers: [String] = []
        if usesRanges, let validator = resource.ifRangeValidator {
            headers.append("If-Range: \(validator)")
        }
        if usesRanges {
            // RFC 9530: a digest of each range lets every piece be checked as it lands.
            headers.append("Want-Content-Digest: sha-256=10, sha-512=5")
        }
        self.headers = headers
        peer = nil
    }

    /// Cache peer `peer` of the router, reached at `host`, serving the origin's `resource`: its answers are held
    /// to the origin's length and validators. It is sent no `If-Range` (a cache holding another version would
    /// answer with the whole file) and no `Want-Content-Digest` (a digest a cache sends is only its own word).
    init(peer: Int, host: String, serving resource: RemoteResource) {
        self.resource = resource
        self.host = host
        headers = []
        self.peer = peer
    }

    /// Whether a fresh probe of the URL as given found the same file: the same length and validators.
    func sameFile(as fresh: Source) -> Bool {
        fresh.resource.length == resource.length && fresh.resource.etag == resource.etag
            && fresh.resource.lastModified == resource.lastModified && fresh.resource.isSegmentable
    }

    /// Takes the URL (and the headers that go with it) a fresh probe of the same file redirected to; its health,
    /// connections and place in the connection budget stay.
    mutating func renew(from fresh: Source) {
        resource.resolvedURL = fresh.resource.resolvedURL
        headers = fresh.headers
        generation += 1
        refreshing = false
        answeredSinceRenewal = false
    }
}
