extension HTTPRequestHead {
    /// The outcome of ``HTTPRequestHead/take(from:)``.
    enum ParseResult {
        /// A whole head was parsed.
        case complete(HTTPRequestHead)
        /// More bytes are needed.
        case incomplete
        /// The bytes are not an HTTP/1.x request head, or the head is unreasonably long.
        case malformed
    }
}
