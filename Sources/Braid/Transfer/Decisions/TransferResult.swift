/// How the transfer of one request ended, as the executor saw it.
enum TransferResult: Equatable, Sendable {
    /// The transfer ran to its end without an error.
    case finished
    /// The transfer failed below HTTP.
    case failed(TransportFailure)
    /// The executor took the transfer away, on the machine's `abort`.
    case aborted
}
