/// What a response decision needs to know beyond the request and the route: counters kept by the server.
struct RequestContext {
    /// The number of this request among the route's requests, from 1.
    var requestNumber: Int
    /// The server-wide number of the connection, from 1 in accept order.
    var connectionNumber: Int
    /// Requests for this route from the same client address being answered now, this one included.
    var requestsInFlightFromClient: Int
    /// The port the server listens on, for absolute redirect URLs.
    var port: Int
    /// The digest of a content; provided by the server so that repeated requests reuse one computation.
    var digest: (TestContent, TestContent.DigestAlgorithm) -> [UInt8]
    /// Whether this is the route's first response to carry a byte of a range corrupted once; the first call
    /// for a range answers `true` and records it, so the decision and the record are one step under the lock.
    var claimCorruption: (Range<UInt64>) -> Bool
}
