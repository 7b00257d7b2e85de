import Testing

@testable import Braid

/// A streamed download, event by event: the machine starts only what fits the reader's window, starts the rest as
/// the reader moves, reads ahead for the reader as bytes are written, and ends with the reader's error.
@Suite("TransferMachine window")
struct TransferMachineWindowTests {
    static let mebibyte: Int64 = 1 << 20

    /// A 4 MiB file in four segments of 1 MiB over `slots` connections, with a window of `window` bytes.
    static func machine(window: Int64, slots: Int = 4) -> TransferMachine {
        let resource = RemoteResource(
            requestedURL: "https://example.com/file.tar",
            resolvedURL: "https://example.com/file.tar",
            length: 4 * mebibyte,
            acceptsRanges: true,
            etag: "\"v1\"",
            lastModified: nil,
            suggestedFilename: nil,
            digests: []
        )
        return TransferMachine(
            resource: resource,
            sources: [Source(resource: resource, usesRanges: true)],
            scheduler: SegmentScheduler(
                ranges: (0..<4).map { Int64($0) * mebibyte..<Int64($0 + 1) * mebibyte },
                connectionLimit: slots,
                minimumSteal: 1 << 30,
                window: SegmentScheduler.Window(size: window, from: 0, connections: slots)
            ),
            configuration: TransferMachine.Configuration(
                usesRanges: true, slots: slots, progressInterval: 1000, hashesAhead: true)
        )
    }

    static func ranged(_ range: Range<Int64>) -> TransferRequest {
        TransferRequest(range: range, skip: 0, ranged: true)
    }

    @Test("Start requests only what fits the window, however many connections are free")
    func startsWithinWindow() {
        var machine = Self.machine(window: 2 * Self.mebibyte)
        #expect(
            machine.start(now: 0) == [
                .start(slot: 0, source: 0, request: Self.ranged(0..<Self.mebibyte)),
                .start(slot: 1, source: 0, request: Self.ranged(Self.mebibyte..<2 * Self.mebibyte)),
            ]
        )
        #expect(machine.quietTick(now: 1) == [], "two connections stay idle: the rest is past the window")
    }

    @Test("The reader moving on starts what now fits; moving less than a grain starts nothing")
    func readerMovesWindow() {
        var machine = Self.machine(window: 2 * Self.mebibyte)
        _ = machine.start(now: 0)
        #expect(machine.readerMoved(to: 100 << 10) == [], "100 KiB of segment 2 is less than a grain (256 KiB)")
        #expect(
            machine.readerMoved(to: Self.mebibyte) == [
                .start(slot: 2, source: 0, request: Self.ranged(2 * Self.mebibyte..<3 * Self.mebibyte))
            ]
        )
        #expect(machine.readerMoved(to: Self.mebibyte) == [], "the same position again changes nothing")
    }

    @Test("Written bytes of the first segment are read ahead for the reader as they arrive")
    func readsAheadForReader() {
        var machine = Self.machine(window: 2 * Self.mebibyte)
        _ = machine.start(now: 0)
        _ = machine.responseHead(
            slot: 0,
            headers: TransferMachineTests.head(
                "HTTP/1.1 206 Partial Content", "Content-Range: bytes 0-1048575/4194304",
                "Content-Length: 1048576", "ETag: \"v1\""),
            now: 0.1)
        machine.deliver(slot: 0, bytes: Int(Self.mebibyte))
        #expect(machine.quietTick(now: 0.2).contains(.hashAhead(upTo: Self.mebibyte)))
    }

    @Test("A reader that fails ends the transfer with its error, aborting every connection")
    func readerFails() {
        var machine = Self.machine(window: 2 * Self.mebibyte)
        _ = machine.start(now: 0)
        let error = BraidError(.localIO, "the reader of standard output closed it")
        #expect(machine.readerFailed(error) == [.abort(slot: 0), .abort(slot: 1)])
        _ = machine.transferEnded(slot: 0, result: .aborted, now: 1)
        let last = machine.transferEnded(slot: 1, result: .aborted, now: 1)
        #expect(last.last == .finish(.failed(error)))
        #expect(machine.readerMoved(to: 3 * Self.mebibyte) == [], "an ending transfer starts nothing")
    }
}
