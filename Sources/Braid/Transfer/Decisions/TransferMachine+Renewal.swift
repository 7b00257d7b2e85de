/// Signed URLs that expire: object stores and CDNs redirect to a URL valid for a while, and a range request made
/// after it expired is refused. The URL as given is followed again for a fresh one, and the download goes on if it
/// still leads to the same file.
///
/// A source's renewal: `refreshSource` (its requests already running go on, none starts) → `sourceRefreshed`,
/// which swaps in the fresh URL, or ends the download as a changed remote (the fresh URL serves another file) or
/// as failed (following the URL failed). A fresh URL refused before any of its responses was accepted is not
/// renewed again: the refusal is what it seems, and fails the download as it would without renewals.
extension TransferMachine {
    /// The statuses with which an expired signed URL is refused: S3 and GCS answer 403, others 401, 404 or 410.
    static let expiryStatuses: Set<Int> = [401, 403, 404, 410]

    /// Whether the ended `attempt` was refused by an expired URL, and if so what to do: renew its source's URL
    /// (or wait for the renewal already under way) and put its segment back, without a failure counted. Nil
    /// leaves the attempt to the usual failure handling.
    mutating func renewal(after attempt: Attempt, now: Double) -> [Action]? {
        guard configuration.renewsURLs, isOrigin(attempt.source), attempt.request.ranged,
            Self.expiryStatuses.contains(attempt.status),
            case .failure(.fatal) = attempt.verdict, sources[attempt.source].alive
        else { return nil }
        let source = attempt.source
        // A refused response wrote nothing; what earlier attempts wrote stays as checked, or not, as it was.
        let confirms = configuration.pieceHashes == nil
        if sources[source].refreshing || attempt.generation < sources[source].generation {
            // Another connection's refusal renews (or renewed) the URL: retry at the fresh one.
            scheduler.requeue(segment: attempt.segment, now: now, confirms: confirms)
            return []
        }
        guard sources[source].answeredSinceRenewal else { return nil }
        sources[source].refreshing = true
        scheduler.requeue(segment: attempt.segment, now: now, confirms: confirms)
        let requested = PrintableText.sanitised(URLUserinfo.removed(from: sources[source].resource.requestedURL))
        return [
            // The refused URL itself is not shown: a signed URL carries its signature.
            .notice(
                "the server refused a range (HTTP \(attempt.status)), as it does once a signed URL expired; "
                    + "following \(requested) again for a fresh one"),
            .refreshSource(source: source),
        ]
    }

    /// Following `source`'s URL as given again found `result`: the same file at a fresh URL (requests to the
    /// source start again there), another file (the download starts over), or an error (the download fails
    /// unless another source can take over).
    mutating func sourceRefreshed(source: Int, result: Result<Source, BraidError>, now: Double) -> [Action] {
        guard sources[source].refreshing else {
            preconditionFailure("Invalid state: source \(source) refreshed unasked")
        }
        self.now = now
        sources[source].refreshing = false
        guard case .running = state else { return [] }
        let others = sources.indices.contains { $0 != source && isOrigin($0) && sources[$0].alive }
        switch result {
        case let .failure(error):
            // A stop asked for while following the URL ends the transfer by itself.
            if error.code == .cancelled { return [] }
            guard others else { return end(with: .failed(error)) }
            return [drop(source, because: error.message)] + proceed()
        case let .success(fresh) where !sources[source].sameFile(as: fresh):
            let message = "the file on the server changed since the download started"
            guard others else { return end(with: .remoteChanged(message)) }
            return [drop(source, because: message)] + proceed()
        case let .success(fresh):
            sources[source].renew(from: fresh)
            return proceed()
        }
    }
}
