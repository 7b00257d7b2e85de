/// The first response of a fresh download: the probe read its head, and its body waits, paused on the pool, for the
/// transfer to write it. The probe then costs no request of its own, and the download receives one round trip
/// sooner (see [the transfer note](../../../../docs/design/transfer.md#probe)).
///
/// A small file's body may have been read to its end instead (`body`): the request is over, its connection back in
/// the pool, and the download writes the bytes itself, with no transfer to run (`DownloadJob.writeReceived`).
///
/// `TransferEngine` adopts it as the transfer's first request when that request asks for exactly the bytes it
/// carries (`TransferRequest.requested`), whatever part of them from byte 0 the request keeps: the connection ends
/// it once that part is in. Otherwise, or when the download ends before, it is cancelled and its connection closed.
final class ParkedResponse: @unchecked Sendable {
    // @unchecked: `request` is touched from other threads only through `cancel()`, which it makes thread-safe;
    // `adopt()` is called on the pool's thread, and the rest is immutable.

    /// The response head.
    let headers: ResponseHeaders
    /// The bytes of the file its body carries: the first `n` of a `206` (all of the file, unless the server sent
    /// less of the open range); nil for a `200`, the whole file.
    let range: Range<Int64>?
    /// The seconds the server took from the request to its first byte (connecting not counted).
    let firstByteSeconds: Double
    /// The whole body, when the probe read it to its end (the whole file, no longer than `Prober.readsWhole`);
    /// nil when it waits, paused.
    let body: [UInt8]?
    /// Whether the start of the body read whole was reported as its first bytes came (`Prober.onWholeBodyStart`);
    /// when they were all of it, the download reports it (`DownloadJob.reportStart`).
    let startReported: Bool
    /// The paused request; nil when the body was read.
    private let request: PoolRequest?

    /// Read once the request parked, as its head is: libcurl's timings of it are final.
    init(_ request: PoolRequest, headers: ResponseHeaders, range: Range<Int64>?) {
        self.request = request
        self.headers = headers
        self.range = range
        firstByteSeconds = request.easy.firstByteSeconds
        body = nil
        startReported = false
    }

    /// A response whose body was read to its end: the file, all of it (`range` for a `206`).
    init(body: [UInt8], headers: ResponseHeaders, range: Range<Int64>?, firstByteSeconds: Double, startReported: Bool) {
        request = nil
        self.startReported = startReported
        self.headers = headers
        self.range = range
        self.firstByteSeconds = firstByteSeconds
        self.body = body
    }

    /// Whether its body is what `request` asks for: the same range (of which the request may keep fewer bytes,
    /// from the same start), or the whole file from its start.
    func covers(_ request: TransferRequest) -> Bool {
        guard request.skip == 0, request.range.lowerBound == 0 else { return false }
        guard let range else { return !request.ranged }
        return request.ranged && request.requested == range
    }

    /// On the pool's thread: takes the request over, its body still paused; nil once it was cancelled, or when
    /// its body was read.
    func adopt() -> EasyHandle? {
        request?.adopt()
    }

    /// Gives the response up, from any thread; nothing once it was adopted, or when its body was read.
    func cancel() {
        request?.cancel()
    }
}
