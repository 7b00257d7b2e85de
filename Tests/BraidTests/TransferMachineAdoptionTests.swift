import Testing

@testable import Braid

/// The probe's response (`Range: bytes=0-`) adopted as the transfer's first request, whatever that request keeps
/// of it: the request asks for all it carries, and is ended once its own bytes are in, as done, not failed.
@Suite("TransferMachine adopting the probe's open-ended response")
struct TransferMachineAdoptionTests {
    static let mebibyte: Int64 = 1 << 20
    static let length = 8 * mebibyte

    /// An 8 MiB file planned as 8 pieces of 1 MiB over two connections, beginning with the probe's response to
    /// `bytes=0-`, which carries `carried`.
    static func machine(carried: Range<Int64> = 0..<length, checksContentDigests: Bool = false) -> TransferMachine {
        var resource = TransferMachineTests.origin
        resource.length = length
        return TransferMachine(
            resource: resource,
            sources: [Source(resource: resource, usesRanges: true)],
            scheduler: SegmentScheduler(
                ranges: (0..<8).map { Int64($0) * mebibyte..<Int64($0 + 1) * mebibyte }, connectionLimit: 2),
            configuration: TransferMachine.Configuration(
                usesRanges: true, slots: 2, keepsCheckpoints: true, sizesPieces: true, probeFirstByte: 0.001,
                probeRange: carried, checksContentDigests: checksContentDigests)
        )
    }

    static func starts(_ actions: [TransferMachine.Action]) -> [TransferRequest] {
        actions.compactMap { if case let .start(_, _, request) = $0 { request } else { nil } }
    }

    /// The probe's head: a `206` of the whole file, with a `Content-Digest` of that whole body when asked.
    static func probeHead(contentDigest: Bool = false) -> ResponseHeaders {
        var lines = [
            "HTTP/1.1 206 Partial Content", "Content-Range: bytes 0-\(length - 1)/\(length)",
            "Content-Length: \(length)", "ETag: \"v1\"",
        ]
        // Of some other bytes: checked against what the request keeps, it could only fail.
        if contentDigest { lines.append("Content-Digest: sha-256=:\(String(repeating: "A", count: 43))=:") }
        var headers = ResponseHeaders()
        for line in lines { headers.consume(line: line + "\r\n") }
        return headers
    }

    @Test("the first request keeps one plan piece and asks for all the probe's response carries")
    func firstRequestAsksForTheProbesBytes() {
        var machine = Self.machine()
        let requests = Self.starts(machine.start(now: 0))
        #expect(requests.map(\.range) == [0..<Self.mebibyte, Self.mebibyte..<2 * Self.mebibyte])
        #expect(requests.map(\.asked) == [0..<Self.length, nil], "only the first is the probe's")
        #expect(requests.first?.rangeHeader == "0-\(Self.length - 1)")
    }

    @Test("a first request that keeps all the probe's bytes asks for them as they are")
    func firstRequestKeepsAll() {
        var machine = Self.machine(carried: 0..<Self.mebibyte)
        let requests = Self.starts(machine.start(now: 0))
        #expect(requests.first?.range == 0..<Self.mebibyte)
        #expect(requests.first?.asked == nil)
    }

    @Test(
        "a probe's response that ends before the file (a list's bounded probe, or less of 0- sent) is the first request, exactly"
    )
    func shortProbeResponse() {
        var machine = Self.machine(carried: 0..<(Self.mebibyte / 2))
        let requests = Self.starts(machine.start(now: 0))
        #expect(requests.first?.range == 0..<(Self.mebibyte / 2), "the first request is what the response carries")
        #expect(requests.first?.asked == nil, "kept whole: nothing to cut")
        #expect(requests.dropFirst().allSatisfy { $0.range.lowerBound >= Self.mebibyte / 2 })
    }

    @Test("a list's bounded probe is the first request even where the plan's first segment is longer")
    func boundedProbeCutsThePlan() {
        var resource = TransferMachineTests.origin
        resource.length = Self.length
        var machine = TransferMachine(
            resource: resource,
            sources: [Source(resource: resource, usesRanges: true)],
            scheduler: SegmentScheduler(
                ranges: [0..<Self.length / 2, Self.length / 2..<Self.length], connectionLimit: 2),
            configuration: TransferMachine.Configuration(
                usesRanges: true, slots: 2, keepsCheckpoints: true, sizesPieces: true, probeFirstByte: 0.001,
                probeRange: 0..<Self.mebibyte)
        )
        let requests = Self.starts(machine.start(now: 0))
        #expect(requests.first?.range == 0..<Self.mebibyte)
        #expect(requests.first?.asked == nil)
        #expect(requests.count == 2)
    }

    @Test("the adopted response is cut once its request's bytes are in: done, not failed, nothing retried")
    func cutIsDone() throws {
        var machine = Self.machine()
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.probeHead(), now: 0.01).isEmpty, "the head is accepted")
        machine.deliver(slot: 0, bytes: Int(Self.mebibyte))
        // More arrives: the connection stops it.
        #expect(machine.overran(slot: 0) == [.abort(slot: 0)])
        let ended = machine.transferEnded(slot: 0, result: .aborted, now: 0.02)
        #expect(!ended.contains { if case .retry = $0 { true } else { false } }, "\(ended)")
        #expect(ended.contains(.confirm(upTo: Self.mebibyte)), "\(ended)")
        #expect(Self.starts(ended).first?.range.lowerBound == 2 * Self.mebibyte, "the slot's next request")
        #expect(machine.statistics.retries == 0)
        #expect(machine.scheduler.segments[0].state == .complete)
        let recorded = try #require(machine.scheduler.manifestSegments.first)
        #expect(recorded.start == 0 && recorded.end == Self.mebibyte && recorded.done == Self.mebibyte, "\(recorded)")
    }

    @Test("the adopted response is cut even when the rest of the file would come at once: it is not read to its end")
    func fastCutNotDrained() {
        var machine = Self.machine()
        _ = machine.start(now: 0)
        // Its request's mebibyte in a millisecond: the seven after it would come within `drainSeconds`. They are
        // the file's rest, which the other connection fetches: reading them over this one too would fetch it twice.
        #expect(machine.responseHead(slot: 0, headers: Self.probeHead(), now: 0.001).isEmpty)
        machine.deliver(slot: 0, bytes: Int(Self.mebibyte))
        machine.now = 0.001
        #expect(machine.overran(slot: 0) == [.abort(slot: 0)])
        let ended = machine.transferEnded(slot: 0, result: .aborted, now: 0.002)
        #expect(ended.contains(.confirm(upTo: Self.mebibyte)), "\(ended)")
        #expect(machine.statistics.retries == 0)
    }

    @Test("the Content-Digest of the whole response, cut short, is not checked against the bytes kept")
    func cutResponseDigestIgnored() {
        var machine = Self.machine(checksContentDigests: true)
        _ = machine.start(now: 0)
        #expect(machine.responseHead(slot: 0, headers: Self.probeHead(contentDigest: true), now: 0.01).isEmpty)
        machine.deliver(slot: 0, bytes: Int(Self.mebibyte))
        _ = machine.overran(slot: 0)
        let ended = machine.transferEnded(slot: 0, result: .aborted, now: 0.02)
        #expect(!ended.contains { if case .verify = $0 { true } else { false } }, "\(ended)")
        #expect(!ended.contains { if case .retry = $0 { true } else { false } }, "\(ended)")
        #expect(ended.contains(.confirm(upTo: Self.mebibyte)), "\(ended)")
        #expect(machine.scheduler.segments[0].state == .complete)
    }
}
