import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// Reads the text of a list given with `-i`: a file, or standard input for `-`.
enum ListInput {
    /// The whole text; a missing or unreadable file is a local I/O error.
    static func read(_ source: String) throws(BraidError) -> String {
        let descriptor = source == "-" ? STDIN_FILENO : open(source, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw BraidError(.localIO, "cannot open the list \(source): \(String(cString: strerror(errno)))")
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                let name = source == "-" ? "standard input" : source
                throw BraidError(.localIO, "cannot read the list \(name): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
