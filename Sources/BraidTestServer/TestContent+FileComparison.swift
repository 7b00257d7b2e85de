import Foundation

extension TestContent {
    /// The offset of the first byte where the file at `path` differs from this content, or `nil` when the file
    /// holds exactly these bytes.
    ///
    /// A file that is a strict prefix or extension of the content differs at the shorter length. Returning
    /// the offset rather than a `Bool` lets a failing test say where a download went wrong.
    public func firstDifference(fromFileAt path: String) throws -> UInt64? {
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? file.close() }
        let chunkSize = 1 << 20
        var expected = [UInt8](repeating: 0, count: chunkSize)
        var offset: UInt64 = 0
        while true {
            let actual = try file.read(upToCount: chunkSize) ?? Data()
            let wanted = Int(min(UInt64(chunkSize), size - offset))
            expected.withUnsafeMutableBytes {
                fill(UnsafeMutableRawBufferPointer(rebasing: $0[0..<wanted]), from: offset)
            }
            let common = min(actual.count, wanted)
            let mismatch = actual.withUnsafeBytes { actualBytes in
                expected.withUnsafeBytes { expectedBytes in
                    common == 0 || memcmp(actualBytes.baseAddress!, expectedBytes.baseAddress!, common) == 0
                        ? nil : (0..<common).first { actualBytes[$0] != expectedBytes[$0] }
                }
            }
            if let mismatch {
                return offset + UInt64(mismatch)
            }
            if actual.count != wanted {
                return offset + UInt64(common)
            }
            if actual.isEmpty {
                return nil
            }
            offset += UInt64(actual.count)
        }
    }
}
