#if canImport(Glibc)
    import Glibc
#endif

/// Writes to stdout and stderr with write(2): unbuffered, so progress lines and errors interleave in order.
enum StandardStreams {
    static func error(_ text: String) {
        write(text, to: STDERR_FILENO)
    }

    static func output(_ text: String) {
        write(text, to: STDOUT_FILENO)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
