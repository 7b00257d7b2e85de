import Braid
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// stderr as a terminal user sees it: permanent lines, and below them one live line that is redrawn in place.
///
/// Every write goes through one lock, so a line from one download never lands in the middle of another's
/// live line, and a permanent line first clears the live one.
///
/// Whatever is written is shown, never obeyed: control, bidirectional and invisible characters in it are escaped
/// (`PrintableText.escapingControlCharacters`), all but the line breaks between a permanent text's lines. A name or
/// a path that may hold a line break of its own is escaped where it is put into the text.
final class StatusLine: Sendable {
    /// Whether stderr is a terminal; off one, there is no live line.
    let isTerminal: Bool
    private let liveShown = Mutex(false)

    init() {
        isTerminal = isatty(STDERR_FILENO) == 1
    }

    /// Replaces the live line (on a terminal only).
    func showLive(_ text: String) {
        guard isTerminal else { return }
        liveShown.withLock { shown in
            StandardStreams.error("\r" + PrintableText.escapingControlCharacters(text) + "\u{1B}[K")
            shown = true
        }
    }

    /// Writes a permanent line, clearing the live line first.
    func print(_ line: String) {
        liveShown.withLock { shown in
            if shown { StandardStreams.error("\r\u{1B}[K") }
            shown = false
            let lines = line.split(separator: "\n", omittingEmptySubsequences: false)
            StandardStreams.error(
                lines.map { PrintableText.escapingControlCharacters(String($0)) }.joined(separator: "\n") + "\n")
        }
    }

    /// Removes the live line, if one is shown.
    func clear() {
        liveShown.withLock { shown in
            if shown { StandardStreams.error("\r\u{1B}[K") }
            shown = false
        }
    }
}
