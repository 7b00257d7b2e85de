import CCurl

/// One connection slot of the engine: an easy handle reused from request to request (so libcurl keeps its TCP
/// connection alive), the response head as it arrives, and the buffering of what the body brings.
///
/// Large chunks are written straight from libcurl's buffer; small ones (a slow link, TLS records) are gathered
/// first, so the number of writes stays low without a large buffer per connection.
///
/// It writes nothing outside the range it was given, whatever the server sends: the machine checks the response
/// head before the first body byte is accepted, and bytes at or past `end` (which moves down when another
/// connection takes over the rest) are never written.
final class Connection {
    let slot: Int
    /// Reused from request to request; replaced only by a response adopted from the probe (`adopt`). Made at the
    /// slot's first request: a download has a slot for every connection it may open, and most small files use one.
    var easy: EasyHandle {
        if let handle { return handle }
        let made = EasyHandle()
        handle = made
        installCallbacks()
        return made
    }
    private var handle: EasyHandle?
    unowned let engine: TransferEngine

    /// Whether a request is in flight.
    private(set) var isBusy = false
    /// The index of the engine's source this handle points at; -1 before its first request.
    private(set) var source = -1
    private(set) var headers = ResponseHeaders()
    /// Whether the machine asked to stop this transfer: its next bytes are refused.
    private(set) var isRefusing = false
    /// Whether the connection is paused by the rate limit, libcurl keeping the chunk it offered until it resumes.
    private(set) var isThrottled = false
    /// Whether the response head was handed to the engine.
    private var headDelivered = false
    /// Whether the response is one adopted from the probe: its request was sent before this one began.
    private var isAdopted = false
    /// Where writing must stop.
    private var end: Int64 = 0
    /// Body bytes to skip because they are already on disk (a single stream restarted from byte 0).
    private var skip: Int64 = 0
    /// The file offset of `buffer[0]`.
    private var fileOffset: Int64 = 0
    /// Gathers small chunks; allocated on first use, so fast links that deliver large chunks never touch it.
    private var buffer: UnsafeMutableRawPointer?
    private let capacity: Int
    private var buffered = 0
    /// Chunks at least this large are written directly.
    private let directWriteMinimum: Int

    init(slot: Int, engine: TransferEngine, bufferSize: Int) {
        self.slot = slot
        self.engine = engine
        capacity = bufferSize
        directWriteMinimum = max(1, bufferSize / 4)
    }

    /// Whether `raw` is this slot's handle (made or adopted).
    func owns(_ raw: UnsafeMutableRawPointer) -> Bool { handle?.raw == raw }

    private func installCallbacks() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        easy.set(CURLOPT_HEADERDATA, pointer: context)
        easy.set(CURLOPT_HEADERFUNCTION, callback: Self.headerCallback)
        easy.set(CURLOPT_WRITEDATA, pointer: context)
        easy.set(CURLOPT_WRITEFUNCTION, callback: Self.writeCallback)
    }

    /// Takes over `handle`, whose response is under way with its body paused (the probe's): its
    /// callbacks come here from now on. `begin` the request, then `resumeAdopted`.
    func adopt(_ handle: EasyHandle) {
        precondition(!isBusy, "Invalid state: connection \(slot) is busy")
        self.handle = handle
        installCallbacks()
    }

    /// Lets the adopted response's body flow, its head being `head`: libcurl hands over the chunk it kept at the
    /// pause before this returns, if the head is accepted.
    func resumeAdopted(head: ResponseHeaders) {
        headers = head
        isAdopted = true
        _ = braid_easy_resume_receiving(easy.raw)
    }

    deinit {
        buffer?.deallocate()
    }

    static func from(_ userdata: UnsafeMutableRawPointer?) -> Connection {
        Unmanaged<Connection>.fromOpaque(userdata!).takeUnretainedValue()
    }

    /// Prepares for `request` to `source`.
    func begin(_ request: TransferRequest, source: Int) {
        precondition(!isBusy, "Invalid state: connection \(slot) is busy")
        isBusy = true
        self.source = source
        end = request.range.upperBound
        skip = request.skip
        fileOffset = request.range.lowerBound
        buffered = 0
        headers = ResponseHeaders()
        headDelivered = false
        isAdopted = false
        isRefusing = false
        isThrottled = false
    }

    /// Another connection took over the rest: nothing at or past `newEnd` is written.
    func shrink(to newEnd: Int64) {
        end = min(end, newEnd)
    }

    /// Refuses the transfer's next bytes, so libcurl ends it.
    func refuse() {
        isRefusing = true
    }

    /// Lets a connection paused by the rate limit receive again; libcurl may hand back the chunk it kept before this
    /// returns.
    func resumeReceiving() {
        guard isThrottled else { return }
        isThrottled = false
        _ = braid_easy_resume_receiving(easy.raw)
    }

    /// Throws away the chunk libcurl kept at a pause, before the transfer is taken off its handle: it is refused, so
    /// it is never written, and it cannot reach the handle's next request.
    func dropKeptChunk() {
        guard isThrottled else { return }
        isRefusing = true
        resumeReceiving()
    }

    /// Hands the response head to the engine once: with the first body byte, or at the end of a response without
    /// a body. A head the machine refuses leaves the connection refusing its bytes.
    func deliverHeadIfNeeded() {
        guard !headDelivered && !isRefusing else { return }
        headDelivered = true
        // An adopted response's first byte came before its attempt began: libcurl measured the server's wait.
        engine.responseHead(
            slot: slot, headers: headers, setupSeconds: easy.setupSeconds,
            waited: isAdopted ? easy.firstByteSeconds : nil)
    }

    /// Ends the current request, writing whatever is still buffered.
    func finish() {
        flush()
        isBusy = false
    }

    /// Writes what is buffered now, so that a checkpoint can claim it.
    func flushBuffer() {
        if isBusy { flush() }
    }

    // MARK: libcurl callbacks

    static let headerCallback: braid_curl_data_callback = { data, size, count, userdata in
        Connection.from(userdata).headers.consume(bytes: UnsafeRawBufferPointer(start: data, count: size * count))
        return size * count
    }

    static let writeCallback: braid_curl_data_callback = { data, size, count, userdata in
        Connection.from(userdata).receive(UnsafeRawPointer(data), count: size * count)
    }

    /// Accepts body bytes; returns how many were consumed (fewer than offered aborts the transfer).
    private func receive(_ data: UnsafeRawPointer, count offered: Int) -> Int {
        deliverHeadIfNeeded()
        guard isBusy, !isRefusing else { return braid_curl_abort_write }
        guard engine.admit(count: offered) else {
            isThrottled = true
            return braid_curl_pause_write
        }
        var pointer = data
        var count = offered
        if skip > 0 {
            let skipped = Int(min(Int64(count), skip))
            skip -= Int64(skipped)
            pointer += skipped
            count -= skipped
            if count == 0 { return offered }
        }
        let room = end - (fileOffset + Int64(buffered))
        let take = Int(min(Int64(count), max(0, room)))
        if take > 0 {
            engine.received(slot: slot, count: take)
            guard store(UnsafeRawBufferPointer(start: pointer, count: take)) else { return braid_curl_abort_write }
        }
        if take < count {
            guard flush() else { return braid_curl_abort_write }
            // Past the end: the machine ends the transfer (`refuse()`), or lets the rest come and be dropped, so
            // that an HTTP/1.1 connection stays open (`TransferMachine.overran(slot:)`).
            engine.overran(slot: slot)
            return isRefusing ? braid_curl_abort_write : offered
        }
        return offered
    }

    /// Writes `bytes` directly or gathers them into the buffer.
    private func store(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if buffered > 0 && (bytes.count >= directWriteMinimum || buffered + bytes.count > capacity) {
            guard flush() else { return false }
        }
        if bytes.count >= directWriteMinimum { return write(bytes) }
        let gather =
            buffer
            ?? {
                let allocated = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 4096)
                buffer = allocated
                return allocated
            }()
        (gather + buffered).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        buffered += bytes.count
        return buffered < capacity || flush()
    }

    @discardableResult
    private func flush() -> Bool {
        guard buffered > 0, let buffer else { return true }
        let ok = write(UnsafeRawBufferPointer(start: buffer, count: buffered))
        buffered = 0
        return ok
    }

    private func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard engine.write(bytes, at: fileOffset, slot: slot) else { return false }
        fileOffset += Int64(bytes.count)
        return true
    }
}

@available(*, unavailable)
extension Connection: Sendable {}
