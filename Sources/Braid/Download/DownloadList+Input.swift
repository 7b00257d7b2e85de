extension DownloadList {
    /// A list's bytes as they are read from a file or a pipe, refused as soon as they show they are no list of URLs:
    /// a NUL byte (a binary file), a line longer than `maximumLineLength`, or more than `maximumLength` bytes in all.
    /// The checks run on each chunk as it comes, so `braid -i /dev/urandom` or `yes URL | braid -i -` stop within the
    /// first chunk or the first `maximumLength` bytes instead of reading until memory runs out, and the message names
    /// the line without repeating it.
    public struct Input {
        /// 256 MiB: about two million URLs of a hundred bytes or so, far more than a list written on purpose holds (the
        /// largest model repositories list some hundred thousand files), while what a runaway pipe or a wrong file
        /// brings is stopped before it takes more memory than the entries of such a list would.
        public static let defaultMaximumLength = 256 << 20
        /// 64 KiB: the longest URLs in use, signed ones with their tokens, are a few KiB, and a line of several such
        /// mirrors or a `header=` with a long token stays well below; a longer line is a file that is not a list.
        public static let defaultMaximumLineLength = 64 << 10

        /// The most bytes the list may have.
        public let maximumLength: Int
        /// The most bytes a line may have, its line break not counted.
        public let maximumLineLength: Int

        /// The bytes so far, in blocks of `blockSize`: the text is copied once, at the end, and no growing array
        /// holds the old copy beside the new one on the way.
        private var blocks: [[UInt8]] = []
        /// How many bytes were appended.
        private var length = 0
        /// The number of the line the next byte is on, counting line breaks as `DownloadList(parsing:)` does: "\n",
        /// "\r\n" or "\r".
        private var line = 1
        /// The bytes of that line so far.
        private var lineLength = 0
        /// Whether the last byte was a "\r", so that a "\n" next ends no other line.
        private var afterCarriageReturn = false

        private static let blockSize = 1 << 20

        /// - Parameters:
        ///   - maximumLength: the most bytes the whole list may have.
        ///   - maximumLineLength: the most bytes one line may have.
        public init(
            maximumLength: Int = Self.defaultMaximumLength, maximumLineLength: Int = Self.defaultMaximumLineLength
        ) {
            self.maximumLength = maximumLength
            self.maximumLineLength = maximumLineLength
        }

        /// Adds the next bytes read; throws a usage error, naming the line where there is one, when they show the
        /// input is not a list.
        public mutating func append(_ bytes: UnsafeRawBufferPointer) throws(BraidError) {
            try scan(bytes)
            guard bytes.count <= maximumLength - length else {
                throw .usage("the list is longer than \(Self.size(maximumLength)): is it a list of URLs?")
            }
            store(bytes)
        }

        /// The list's text, for `DownloadList(parsing:)`. Bytes that are not UTF-8 become U+FFFD, and the line they
        /// are on is then refused for what it says.
        public func text() -> String {
            String(unsafeUninitializedCapacity: length) { buffer in
                var offset = 0
                for block in blocks {
                    _ = UnsafeMutableBufferPointer(rebasing: buffer[offset...]).initialize(fromContentsOf: block)
                    offset += block.count
                }
                return offset
            }
        }

        /// Follows the lines through `bytes`, refusing a NUL byte and a line too long.
        private mutating func scan(_ bytes: UnsafeRawBufferPointer) throws(BraidError) {
            // Locals, so that the loop keeps them in registers; the state is stored back once.
            var line = self.line
            var lineLength = self.lineLength
            var afterCarriageReturn = self.afterCarriageReturn
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\n"):
                    if !afterCarriageReturn { line += 1 }
                    lineLength = 0
                    afterCarriageReturn = false
                case UInt8(ascii: "\r"):
                    line += 1
                    lineLength = 0
                    afterCarriageReturn = true
                case 0:
                    throw .usage("line \(line) of the list has a NUL byte: is it a list of URLs?")
                default:
                    lineLength += 1
                    afterCarriageReturn = false
                    if lineLength > maximumLineLength {
                        throw .usage(
                            "line \(line) of the list is longer than \(Self.size(maximumLineLength)): "
                                + "is it a list of URLs?")
                    }
                }
            }
            self.line = line
            self.lineLength = lineLength
            self.afterCarriageReturn = afterCarriageReturn
        }

        /// Copies `bytes` into the blocks, starting a block when the last is full.
        private mutating func store(_ bytes: UnsafeRawBufferPointer) {
            var start = 0
            while start < bytes.count {
                if blocks.last.map({ $0.count == Self.blockSize }) ?? true {
                    blocks.append([])
                    blocks[blocks.count - 1].reserveCapacity(Self.blockSize)
                }
                let end = min(start + Self.blockSize - blocks[blocks.count - 1].count, bytes.count)
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[start..<end]).assumingMemoryBound(to: UInt8.self)
                blocks[blocks.count - 1].append(contentsOf: chunk)
                start = end
            }
            length += bytes.count
        }

        /// A limit as the messages give it: `64 KiB`, `256 MiB`, or in bytes when it is not a whole number of either.
        private static func size(_ bytes: Int) -> String {
            if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
            if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
            return "\(bytes) bytes"
        }
    }
}
