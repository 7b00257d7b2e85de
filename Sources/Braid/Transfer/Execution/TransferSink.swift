/// Where a transfer's bytes go: the partial file, or nowhere when only the transfer itself is measured.
protocol TransferSink: AnyObject, Sendable {
    /// Writes `bytes` at `offset`; every byte lies inside the range the machine handed out.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(BraidError)
}

extension PartFile: TransferSink {}

/// A sink that drops what it is given, for measuring a transfer without touching the disk (`braid bench`).
final class DiscardingSink: TransferSink {
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(BraidError) {}
}
