import CCurl

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One connection slot of the engine: an easy handle reused from segment to segment (so libcurl keeps its TCP
/// connection alive), the response checks, and the positional writes of what arrives.
///
/// Large chunks are written straight from libcurl's buffer; small ones (a slow link, TLS records) are gathered
/// first, so the number of writes stays low without a large buffer per connection.
///
/// Every byte it writes lies inside the segment it was given, whatever the server sends: a response is checked
/// before its first body byte is accepted, and bytes past the segment's end are never written.
final class Connection {
    /// Why the connection stopped its transfer before libcurl finished it.
    enum Stop {
        /// The segment's end was reached (another connection took over the rest).
        case reachedEnd
        case failure(FailureKind)
        /// The server's file is not the one being downloaded any more.
        case remoteChanged(String)
        /// The server answered a range request with the whole file.
        case rangesIgnored
        /// The length in `Content-Range` is not the one the probe learnt: probe again, trusting ranged GETs.
        case lengthDisagrees(String)
    }

    let id: Int
    let easy = EasyHandle()
    unowned let engine: TransferEngine

    private(set) var segment: Int?
    /// The index of the engine's source this connection fetches from; -1 before its first request.
    private(set) var source = -1
    /// The range asked for: `requestStart ..< requestEnd`.
    private(set) var requestStart: Int64 = 0
    private(set) var requestEnd: Int64 = 0
    private(set) var headers = ResponseHeaders()
    private(set) var stop: Stop?
    /// Whether the response was checked and its body may be written.
    private var validated = false
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

    init(id: Int, engine: TransferEngine, bufferSize: Int) {
        self.id = id
        self.engine = engine
        capacity = bufferSize
        directWriteMinimum = max(1, bufferSize / 4)
    }

    deinit {
        buffer?.deallocate()
    }

    static func from(_ userdata: UnsafeMutableRawPointer?) -> Connection {
        Unmanaged<Connection>.fromOpaque(userdata!).takeUnretainedValue()
    }

    /// Prepares the handle for fetching `start ..< end` of `segment`.
    func begin(segment: Int, source: Int, from start: Int64, to end: Int64, skip: Int64) {
        precondition(self.segment == nil, "Invalid state: connection \(id) is busy")
        self.segment = segment
        self.source = source
        requestStart = start
        requestEnd = end
        self.skip = skip
        fileOffset = start
        buffered = 0
        headers = ResponseHeaders()
        stop = nil
        validated = false
    }

    /// Ends the current request, writing whatever is still buffered. Returns the segment it was working on.
    func finish() -> Int? {
        flush()
        let finished = segment
        segment = nil
        return finished
    }

    /// Writes what is buffered now, so that a checkpoint can claim it.
    func flushBuffer() {
        if segment != nil { flush() }
    }

    /// Checks a response that ended before any body arrived (an error status, an empty body).
    func validateIfNeeded() {
        if !validated && stop == nil { validated = validate() }
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
        if !validated {
            guard stop == nil, validate() else { return braid_curl_abort_write }
            validated = true
        }
        guard let segment else { return braid_curl_abort_write }
        var pointer = data
        var count = offered
        if skip > 0 {
            let skipped = Int(min(Int64(count), skip))
            skip -= Int64(skipped)
            pointer += skipped
            count -= skipped
            if count == 0 { return offered }
        }
        let end = engine.scheduler.segments[segment].end
        let room = end - (fileOffset + Int64(buffered))
        let take = Int(min(Int64(count), max(0, room)))
        if take > 0 {
            engine.received(segment: segment, bytes: take)
            if buffered > 0 && (take >= directWriteMinimum || buffered + take > capacity) {
                guard flush() else { return braid_curl_abort_write }
            }
            if take >= directWriteMinimum {
                guard write(UnsafeRawBufferPointer(start: pointer, count: take)) else { return braid_curl_abort_write }
            } else {
                let gather =
                    buffer
                    ?? {
                        let allocated = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 4096)
                        buffer = allocated
                        return allocated
                    }()
                (gather + buffered).copyMemory(from: pointer, byteCount: take)
                buffered += take
                if buffered == capacity {
                    guard flush() else { return braid_curl_abort_write }
                }
            }
        }
        if take < count {
            guard flush() else { return braid_curl_abort_write }
            if end < requestEnd || !engine.usesRanges {
                // Another connection took the rest, or a single stream reached the byte limit it was given.
                stop = .reachedEnd
            } else {
                stop = .failure(
                    .transient(
                        .protocolViolation,
                        "the server sent more bytes than the range it announced",
                        retryAfter: nil,
                        refusedConnection: false
                    )
                )
                engine.discardAttempt(segment: segment)
            }
            return braid_curl_abort_write
        }
        return offered
    }

    @discardableResult
    private func flush() -> Bool {
        guard buffered > 0, let buffer else { return true }
        let ok = write(UnsafeRawBufferPointer(start: buffer, count: buffered))
        buffered = 0
        return ok
    }

    private func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let segment else { return false }
        guard !engine.wouldRewriteVerifiedBytes(at: fileOffset) else {
            stop = .failure(
                .fatal(.integrity, "internal error: bytes at \(fileOffset) were already verified and must not change")
            )
            return false
        }
        do {
            try engine.file.write(bytes, at: fileOffset)
        } catch {
            stop = .failure(.fatal(error.code, error.message))
            return false
        }
        fileOffset += Int64(bytes.count)
        engine.flushed(segment: segment, bytes: bytes.count)
        return true
    }

    /// Decides whether the response in `headers` may be written: the right status, and for a range request
    /// exactly the range and total length that were asked for.
    private func validate() -> Bool {
        let status = headers.status
        let resource = engine.sources[source].resource
        switch status {
        case 206 where engine.usesRanges:
            guard let header = headers["content-range"], let contentRange = ContentRange(header) else {
                return fail(protocol: "the server's 206 response has no valid Content-Range")
            }
            if contentRange.range == requestStart...(requestEnd - 1), let total = contentRange.completeLength,
                total != engine.resource.length
            {
                stop = .lengthDisagrees(
                    "the server's Content-Range says the file is \(total) bytes, its HEAD said \(resource.length ?? -1)"
                )
                return false
            }
            guard contentRange.range == requestStart...(requestEnd - 1),
                contentRange.completeLength == engine.resource.length
            else {
                return fail(
                    protocol: "the server answered bytes \(requestStart)-\(requestEnd - 1)/\(resource.length ?? -1) "
                        + "with Content-Range '\(header)'"
                )
            }
            if let length = headers.contentLength, length != requestEnd - requestStart {
                return fail(protocol: "the server's Content-Length \(length) does not match its Content-Range")
            }
            return true
        case 200:
            let sameFile = resource.sameRepresentation(
                etag: headers["etag"],
                lastModified: headers["last-modified"]
            )
            let sameLength =
                resource.length == nil || headers.contentLength == nil
                || headers.contentLength == resource.length
            if !sameFile || !sameLength {
                stop = .remoteChanged("the file on the server changed since the download started")
                return false
            }
            if engine.usesRanges {
                stop = .rangesIgnored
                return false
            }
            return true
        case 416:
            stop = .remoteChanged("the server can no longer serve the range (HTTP 416): the file changed")
            return false
        case 300..<400:
            // Redirects are followed only by the probe, which decides where the user's headers may go.
            return fail(protocol: "the server redirected a range request (HTTP \(status)) instead of answering it")
        default:
            if status >= 200 && status < 300 {
                return fail(protocol: "the server answered with unexpected status \(status)")
            }
            stop = .failure(FailureKind.classify(status: status, retryAfter: headers["retry-after"]))
            return false
        }
    }

    private func fail(protocol message: String) -> Bool {
        stop = .failure(.transient(.protocolViolation, message, retryAfter: nil, refusedConnection: false))
        return false
    }
}

@available(*, unavailable)
extension Connection: Sendable {}
