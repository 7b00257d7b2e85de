/// The events of a streamed download's reader (`-o -`, `--extract`, `Download.chunks`), which takes the file's bytes
/// in order while the connections fetch ahead of it within the scheduler's window.
///
/// Design: `docs/design/streaming.md#the-window`.
extension TransferMachine {
    /// The reader has taken the file's bytes up to `position`, and the digest has read them: the window moves on,
    /// and connections start on what now fits.
    mutating func readerMoved(to position: Int64) -> [Action] {
        guard case .running = state, let window = scheduler.window, position + window.size > window.end else {
            return []
        }
        scheduler.moveWindow(to: position)
        return proceed()
    }

    /// The reader cannot go on (the pipe it writes to was closed, the archive it unpacks is malformed): the transfer
    /// ends with its error, progress saved.
    mutating func readerFailed(_ error: BraidError) -> [Action] {
        end(with: .failed(error))
    }
}
