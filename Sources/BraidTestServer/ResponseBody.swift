/// The body bytes of a response and how they are delivered.
struct ResponseBody {
    /// Where the bytes come from: the route's content, or another one when a fault sends wrong bytes.
    var source: TestContent
    /// The offset in `source` of the first byte sent.
    var offset: UInt64
    /// How many bytes are sent, which faults make smaller or larger than what the headers promise.
    var length: UInt64
    /// Whether the bytes are framed with `Transfer-Encoding: chunked`.
    var chunked = false
    /// The pacing, or `nil` for as fast as the client reads.
    var bytesPerSecond: Int?
    /// A rate shared with every other response of the route being sent at the same time, or `nil` for none.
    var routeBytesPerSecond: Int?
    /// Ranges of offsets in `source` whose bytes are sent altered (XOR 0xFF).
    var corrupted: [Range<UInt64>] = []
    /// What happens once `length` bytes are sent.
    var ending = Ending.complete
}
