import Testing

@testable import Braid

/// Expired signed URLs, event by event: a range refused with 401/403/404/410 has its source's URL as given
/// followed again (`refreshSource`, answered by `sourceRefreshed`), and the download goes on at the fresh URL when
/// it leads to the same file. Files and segments are those of `TransferMachineTests`.
@Suite("TransferMachine renewing expired URLs")
struct TransferMachineRenewalTests {
    typealias Machine = TransferMachineTests

    /// The origin reached through a redirector: the probe was redirected to a signed URL.
    static let signed = RemoteResource(
        requestedURL: "https://example.com/file.iso",
        resolvedURL: "https://bucket.example.org/file.iso?X-Amz-Signature=1",
        length: 300,
        acceptsRanges: true,
        etag: "\"v1\"",
        lastModified: "Sun, 06 Nov 1994 08:49:37 GMT",
        suggestedFilename: nil,
        digests: []
    )

    static let forbidden = Machine.head("HTTP/1.1 403 Forbidden", "Content-Length: 0")

    static let notice =
        "the server refused a range (HTTP 403), as it does once a signed URL expired; following "
        + "https://example.com/file.iso again for a fresh one"

    /// What following the URL as given again finds: the same file at a fresh signed URL, unless told otherwise.
    static func fresh(
        signature: Int = 2,
        length: Int64 = 300,
        etag: String = "\"v1\"",
        lastModified: String = "Sun, 06 Nov 1994 08:49:37 GMT"
    ) -> Result<Source, BraidError> {
        var resource = signed
        resource.resolvedURL = "https://bucket.example.org/file.iso?X-Amz-Signature=\(signature)"
        resource.length = length
        resource.etag = etag
        resource.lastModified = lastModified
        return .success(Source(resource: resource, usesRanges: true))
    }

    /// Three connections on the three segments of the signed URL; renewals on unless `renewsURLs` is false.
    static func running(
        resources: [RemoteResource] = [signed],
        renewsURLs: Bool = true
    ) -> TransferMachine {
        var machine = Machine.machine(minimumSteal: 1000, resources: resources, renewsURLs: renewsURLs)
        _ = machine.start(now: 0)
        return machine
    }

    @Test("A range refused with 403 has the URL as given followed again; the range is retried at the fresh URL")
    func refusalRenewsTheURL() {
        var machine = Self.running()
        #expect(machine.responseHead(slot: 0, headers: Self.forbidden, now: 1) == [.abort(slot: 0)])
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 1) == [
                .notice(Self.notice), .refreshSource(source: 0),
            ]
        )
        #expect(machine.sources[0].refreshing)
        #expect(
            machine.sourceRefreshed(source: 0, result: Self.fresh(), now: 1) == [
                .start(slot: 0, source: 0, request: Machine.ranged(0..<100))
            ]
        )
        #expect(machine.sources[0].resource.resolvedURL == "https://bucket.example.org/file.iso?X-Amz-Signature=2")
        #expect(machine.sources[0].generation == 1)
        #expect(machine.statistics.retries == 0, "an expired URL is not a failure")
        #expect(machine.scheduler.segments[0].failures == 0)
    }

    @Test(
        "Each status an expired URL is refused with renews it: 401, 403, 404 and 410", arguments: [401, 403, 404, 410])
    func everyExpiryStatusRenews(status: Int) {
        var machine = Self.running()
        _ = machine.responseHead(slot: 1, headers: Machine.head("HTTP/1.1 \(status) No"), now: 1)
        let actions = machine.transferEnded(slot: 1, result: .aborted, now: 1)
        #expect(actions.last == .refreshSource(source: 0))
    }

    @Test("Other connections refused while the URL is renewed wait for it, without asking again")
    func refusalsDuringRenewalWait() {
        var machine = Self.running()
        _ = machine.responseHead(slot: 0, headers: Self.forbidden, now: 1)
        _ = machine.transferEnded(slot: 0, result: .aborted, now: 1)
        #expect(machine.responseHead(slot: 1, headers: Self.forbidden, now: 1) == [.abort(slot: 1)])
        #expect(machine.transferEnded(slot: 1, result: .aborted, now: 1) == [])
        #expect(
            machine.sourceRefreshed(source: 0, result: Self.fresh(), now: 2) == [
                .start(slot: 0, source: 0, request: Machine.ranged(0..<100)),
                .start(slot: 1, source: 0, request: Machine.ranged(100..<200)),
            ]
        )
    }

    @Test("A connection still at work on the old URL goes on during the renewal; its refusal later retries at once")
    func requestToTheOldURLRetriesAtTheFreshOne() {
        var machine = Self.running()
        _ = machine.responseHead(slot: 0, headers: Self.forbidden, now: 1)
        _ = machine.transferEnded(slot: 0, result: .aborted, now: 1)
        _ = machine.sourceRefreshed(source: 0, result: Self.fresh(), now: 1)
        machine.deliver(slot: 2, bytes: 30)
        _ = machine.responseHead(slot: 2, headers: Self.forbidden, now: 2)
        #expect(
            machine.transferEnded(slot: 2, result: .aborted, now: 2) == [
                .start(slot: 2, source: 0, request: Machine.ranged(230..<300))
            ]
        )
        #expect(machine.sources[0].generation == 1, "no second renewal")
    }

    @Test("A fresh URL that served a range is renewed again when it expires in turn")
    func freshURLIsRenewedAgainAfterItAnswered() {
        var machine = Self.running()
        for slot in 0...1 {
            _ = machine.responseHead(slot: slot, headers: Self.forbidden, now: 1)
            _ = machine.transferEnded(slot: slot, result: .aborted, now: 1)
        }
        _ = machine.sourceRefreshed(source: 0, result: Self.fresh(), now: 1)
        #expect(machine.responseHead(slot: 0, headers: Self.partial(0, 99), now: 1) == [])
        machine.deliver(slot: 0, bytes: 50)
        _ = machine.responseHead(slot: 1, headers: Self.forbidden, now: 3)
        #expect(
            machine.transferEnded(slot: 1, result: .aborted, now: 3) == [
                .notice(Self.notice), .refreshSource(source: 0),
            ]
        )
        #expect(
            machine.sourceRefreshed(source: 0, result: Self.fresh(signature: 3), now: 3) == [
                .start(slot: 1, source: 0, request: Machine.ranged(100..<200))
            ]
        )
        #expect(machine.sources[0].generation == 2)
    }

    @Test("A fresh URL refused before it served anything ends the download as a refusal does without renewals")
    func freshURLRefusedAtOnceFails() {
        var machine = Self.running()
        _ = machine.responseHead(slot: 0, headers: Self.forbidden, now: 1)
        _ = machine.transferEnded(slot: 0, result: .aborted, now: 1)
        _ = machine.sourceRefreshed(source: 0, result: Self.fresh(), now: 1)
        _ = machine.responseHead(slot: 0, headers: Self.forbidden, now: 1)
        #expect(
            machine.transferEnded(slot: 0, result: .aborted, now: 1) == [.abort(slot: 1), .abort(slot: 2)]
        )
        let refused = BraidError(.protocolViolation, "the server refused access (HTTP 403)", httpStatus: 403)
        #expect(machine.state == .ending(.failed(refused)))
    }

    @Test("A fresh URL to a file of another length or with other validators ends the transfer as a changed remote")
    func freshURLToAnotherFileRestarts() {
        for changed in [Self.fresh(length: 301), Self.fresh(etag: "\"v2\""), Self.fresh(lastModified: "yesterday")] {
            var machine = Self.running()
            _ = machine.responseHead(slot: 0, headers: Self.forbidden, now: 1)
            _ = machine.transferEnded(slot: 0, result: .aborted, now: 1)
            #expect(machine.sourceRefreshed(source: 0, result: changed, now: 1) == [.abort(slot: 1), .abort(slot: 2)])
            #expect(
                machine.state == .ending(.remoteChanged("the file on the server changed since the download started")))
        }
    }

    @Test("Following the URL again fails: the download ends with that error, or drops the source for a mirror")
    func failedRenewal() {
        let gone = BraidError(.protocolViolation, "the server has no such file (HTTP 404)", httpStatus: 404)
        var machine = Self.running()
        _ = machine.responseHead(slot: 0, headers: Self.forbidden, now: 1)
        _ = machine.transferEnded(slot: 0, result: .aborted, now: 1)
        #expect(
            machine.sourceRefreshed(source: 0, result: .failure(gone), now: 1) == [.abort(slot: 1), .abort(slot: 2)])
        #expect(machine.state == .ending(.failed(gone)))

        // Meanwhile the mirror takes the range.
        var mirrored = Self.running(resources: [Self.signed, Machine.mirror])
        _ = mirrored.responseHead(slot: 0, headers: Self.forbidden, now: 1)
        #expect(
            mirrored.transferEnded(slot: 0, result: .aborted, now: 1) == [
                .notice(Self.notice), .refreshSource(source: 0),
                .start(slot: 0, source: 1, request: Machine.ranged(0..<100)),
            ]
        )
        #expect(
            mirrored.sourceRefreshed(source: 0, result: .failure(gone), now: 1) == [
                .notice("dropping https://example.com/file.iso: the server has no such file (HTTP 404)")
            ]
        )
        #expect(mirrored.sources.map(\.alive) == [false, true])
    }

    @Test("A stop asked for while the URL is followed again leaves the ending to the stop")
    func cancelledRenewal() {
        var machine = Self.running()
        _ = machine.responseHead(slot: 0, headers: Self.forbidden, now: 1)
        _ = machine.transferEnded(slot: 0, result: .aborted, now: 1)
        let cancelled = BraidError(.cancelled, "cancelled while waiting to retry")
        #expect(machine.sourceRefreshed(source: 0, result: .failure(cancelled), now: 1) == [])
        #expect(machine.isRunning)
    }

    @Test("Without renewals asked for (a single stream) a 403 fails the download at once, as before")
    func noRenewalWhenNotAsked() {
        var machine = Self.running(renewsURLs: false)
        _ = machine.responseHead(slot: 0, headers: Self.forbidden, now: 1)
        #expect(machine.transferEnded(slot: 0, result: .aborted, now: 1) == [.abort(slot: 1), .abort(slot: 2)])
    }

    /// The 206 the signed URL answers for `first...last`, with the probe's validators.
    static func partial(_ first: Int64, _ last: Int64) -> ResponseHeaders {
        Machine.head(
            "HTTP/1.1 206 Partial Content",
            "Content-Range: bytes \(first)-\(last)/300",
            "Content-Length: \(last - first + 1)",
            "ETag: \"v1\"",
            "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT"
        )
    }
}
