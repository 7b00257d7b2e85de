/// A cache peer's answer is held to more than the origin's: it must show that it is the origin's version of the
/// file, by the same `ETag` (or, without one, the same `Last-Modified`) and the same complete length, since a
/// cache may hold an older copy and nothing else tells.
extension ResponseCheck {
    /// The verdict on a cache peer's response head: `remoteChanged` (the peer is skipped for this file) when its
    /// validators or length are not the origin's, else the verdict any response gets.
    ///
    /// - Parameter origin: what the probe of the origin learnt, which the peer's answer must match.
    static func peerVerdict(
        status: Int,
        headers: ResponseHeaders,
        request: Range<Int64>,
        origin: RemoteResource,
        wallClock: Double
    ) -> Verdict? {
        if status == 206 {
            if let mismatch = validatorMismatch(headers: headers, origin: origin) { return .remoteChanged(mismatch) }
            if let header = headers["content-range"], let total = ContentRange(header)?.completeLength,
                total != origin.length
            {
                return .remoteChanged("its copy is \(total) bytes long, the origin's \(origin.length ?? -1)")
            }
        }
        return verdict(
            status: status, headers: headers, request: request, resource: origin, ranged: true, wallClock: wallClock)
    }

    /// Why a peer's validators do not show the origin's version, or nil when they do: the origin's `ETag`
    /// (compared weakly, as `W/` may be added by a proxy), or without one its `Last-Modified`, must be there and
    /// equal. An origin with neither leaves only the length to compare.
    static func validatorMismatch(headers: ResponseHeaders, origin: RemoteResource) -> String? {
        if let etag = origin.etag {
            guard let theirs = headers["etag"] else {
                return "its answer has no ETag to show it is the origin's \(etag)"
            }
            return opaque(theirs) == opaque(etag) ? nil : "its copy has ETag \(theirs), the origin's is \(etag)"
        }
        if let modified = origin.lastModified {
            guard let theirs = headers["last-modified"] else {
                return "its answer has no Last-Modified to show it is the origin's \(modified)"
            }
            return theirs == modified ? nil : "its copy was modified \(theirs), the origin's \(modified)"
        }
        return nil
    }

    private static func opaque(_ etag: String) -> Substring {
        etag.hasPrefix("W/") ? etag.dropFirst(2) : Substring(etag)
    }
}
