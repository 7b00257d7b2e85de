/// The digests of a file's consecutive pieces of equal length (the last one may be shorter), as a Metalink's
/// `<pieces length=… type=…>` lists them: each piece is checked as soon as all its bytes are written, and a bad
/// one is fetched again on its own.
public struct PieceHashes: Sendable, Equatable, Codable {
    public var algorithm: DigestAlgorithm
    /// Bytes in each piece but the last.
    public var pieceLength: Int64
    /// One digest per piece, in file order.
    public var digests: [[UInt8]]

    public init(algorithm: DigestAlgorithm, pieceLength: Int64, digests: [[UInt8]]) {
        self.algorithm = algorithm
        self.pieceLength = pieceLength
        self.digests = digests
    }

    /// The bytes of piece `index` in a file of `totalLength` bytes.
    func range(ofPiece index: Int, totalLength: Int64) -> Range<Int64> {
        let start = Int64(index) * pieceLength
        return start..<min(totalLength, start + pieceLength)
    }

    /// The pieces that lie entirely inside `range`, by index.
    func pieces(within range: Range<Int64>, totalLength: Int64) -> Range<Int> {
        let first = Int((range.lowerBound + pieceLength - 1) / pieceLength)
        let endByte = min(range.upperBound, totalLength)
        let last = endByte == totalLength ? digests.count : Int(endByte / pieceLength)
        return first..<max(first, min(last, digests.count))
    }

    /// Refuses piece hashes that cannot describe a file of `totalLength` bytes.
    public func validate(totalLength: Int64) throws(BraidError) {
        guard pieceLength >= 1 else {
            throw .integrity("the piece hashes give a piece length of \(pieceLength) bytes")
        }
        let expected = totalLength == 0 ? 0 : (totalLength - 1) / pieceLength + 1
        guard Int64(digests.count) == expected else {
            throw .integrity(
                "the piece hashes list \(digests.count) pieces of \(pieceLength) bytes; a file of \(totalLength) "
                    + "bytes has \(expected)")
        }
        guard digests.allSatisfy({ $0.count == algorithm.byteCount }) else {
            throw .integrity("a piece hash is not a \(algorithm) digest")
        }
    }
}
