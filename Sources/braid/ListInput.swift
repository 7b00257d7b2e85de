import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// Reads the text of a list given with `-i`: a file, or standard input for `-`.
enum ListInput {
    /// The whole text; a missing or unreadable file is a local I/O error. What cannot be a list (a binary file, a
    /// line or a list without end) is a usage error as soon as the bytes read show it (`DownloadList.Input`).
    static func read(_ source: String) throws(BraidError) -> String {
        let descriptor = source == "-" ? STDIN_FILENO : open(source, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw BraidError(.localIO, "cannot open the list \(source): \(String(cString: strerror(errno)))")
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var input = DownloadList.Input()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                let name = source == "-" ? "standard input" : source
                throw BraidError(.localIO, "cannot read the list \(name): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            try input.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        return input.text()
    }
}
