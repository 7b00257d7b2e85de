#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Many TCP connections to one loopback port that never send a byte: the attack of a crowd of silent clients.
///
/// Each connect is non-blocking and not waited for, since a server that stops accepting leaves later ones in its
/// backlog, or unanswered; the sockets are closed together by `close()`.
final class SilentSockets {
    private var descriptors: [Int32] = []

    /// Opens `count` connections to 127.0.0.1:`port`.
    init(count: Int, port: Int) throws {
        for _ in 0..<count {
            #if canImport(Glibc)
                let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue), 0)
            #else
                let descriptor = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            guard descriptor >= 0 else {
                close()
                throw DaemonTestError("socket() failed with errno \(errno) after \(descriptors.count) sockets")
            }
            descriptors.append(descriptor)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard result == 0 || errno == EINPROGRESS else {
                close()
                throw DaemonTestError("connect() failed with errno \(errno)")
            }
        }
    }

    /// Closes every connection.
    func close() {
        #if canImport(Glibc)
            for descriptor in descriptors { _ = Glibc.close(descriptor) }
        #else
            for descriptor in descriptors { _ = Darwin.close(descriptor) }
        #endif
        descriptors = []
    }

    deinit { close() }
}
