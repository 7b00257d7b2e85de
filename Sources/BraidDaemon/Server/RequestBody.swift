import NIOCore

/// The body of one HTTP request as its chunks arrive, held to a limit: a pure value the connection feeds and asks.
///
/// The limit is checked twice: up front against a declared `Content-Length`, so an oversized upload is refused
/// before a byte of it is read, and again as chunks arrive, for chunked bodies that declare nothing.
struct RequestBody {
    /// Whether the body is still within the limit after a chunk.
    enum Verdict: Equatable {
        case withinLimit
        case tooLarge
    }

    /// The most any limit can be: a `ByteBuffer` holds at most 4 GiB, and no JSON-RPC request needs a gigabyte.
    static let ceiling = 1 << 30
    /// How much is reserved up front for a declared length; a larger body grows as it arrives, so a client cannot
    /// make the server allocate by merely declaring a length.
    static let reservation = 1 << 20

    /// The largest body accepted, in bytes.
    let limit: Int
    /// The bytes received so far.
    private(set) var collected: ByteBuffer

    init(limit: Int, declaredLength: Int?) {
        self.limit = min(limit, Self.ceiling)
        self.collected = ByteBuffer()
        if let declaredLength, declaredLength > 0 {
            collected.reserveCapacity(min(declaredLength, self.limit, Self.reservation))
        }
    }

    /// Whether a request that declares `declaredLength` (nil: it declares nothing) may be read at all.
    static func admits(declaredLength: Int?, limit: Int) -> Bool {
        guard let declaredLength else { return true }
        return declaredLength <= min(limit, ceiling)
    }

    /// Adds the next chunk; `.tooLarge` once the total passes the limit (the chunk is then not kept).
    mutating func append(_ chunk: ByteBuffer) -> Verdict {
        guard chunk.readableBytes <= limit - collected.readableBytes else { return .tooLarge }
        var chunk = chunk
        collected.writeBuffer(&chunk)
        return .withinLimit
    }

    /// The body received, as the bytes handed to the endpoint.
    var bytes: [UInt8] { Array(collected.readableBytesView) }
}
