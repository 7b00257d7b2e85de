import CLinuxIO
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Writes the file in order to an open descriptor (standard output for `-o -`), waiting for it to be writable a
/// tenth of a second at a time, so that a download ending meanwhile is seen even while the reader at the other end
/// of a pipe takes nothing.
struct DescriptorWriter: StreamConsumer {
    let descriptor: Int32
    let start: Int64 = 0
    static let bufferSize = 1 << 20

    func consume(_ feed: StreamFeed) throws(BraidError) {
        // A pipe of a block's size, where the kernel allows it: one switch to the reader per block rather than per
        // 64 KiB. Anything else (a file, a terminal) refuses, and is written as it is.
        _ = braid_set_pipe_size(descriptor, Int32(Self.bufferSize))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 4096)
        defer { buffer.deallocate() }
        var position = start
        while true {
            let count = try feed.read(into: buffer)
            guard count > 0 else { return }
            try write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), after: position, feed: feed)
            position += Int64(count)
            feed.release(upTo: position)
        }
    }

    private func write(_ bytes: UnsafeRawBufferPointer, after position: Int64, feed: StreamFeed) throws(BraidError) {
        var offset = 0
        while offset < bytes.count {
            var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let polled = poll(&ready, 1, 100)
            if feed.isEnding { throw .localIO("the download ended") }
            if polled < 0 && errno != EINTR { throw .localIO("cannot wait for the output: \(Errno(rawValue: errno))") }
            guard polled > 0 else { continue }
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                switch errno {
                case EINTR, EAGAIN: continue
                case EPIPE:
                    throw .localIO(
                        "the reader of the output closed it after \(position + Int64(offset)) bytes")
                default:
                    throw .localIO("cannot write the output: \(Errno(rawValue: errno))")
                }
            }
            offset += written
        }
    }
}
