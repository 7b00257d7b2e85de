import Glibc

extension Socket {
    /// A socket listening on 127.0.0.1 at `port` (0 lets the kernel pick a free one), and the port it got.
    static func listen(port: Int) throws(TestServerError) -> (socket: Socket, port: Int) {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw .lastError("socket") }
        let socket = Socket(descriptor: descriptor)
        var reuse: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let error = TestServerError.lastError("bind")
            socket.close()
            throw error
        }
        guard Glibc.listen(descriptor, 128) == 0 else {
            let error = TestServerError.lastError("listen")
            socket.close()
            throw error
        }
        var actualLength = length
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &actualLength) }
        }
        return (socket, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// The next connection and its peer's address, or `nil` once the listener has been shut down.
    func accept() -> (socket: Socket, peer: String)? {
        while true {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let connection = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(descriptor, $0, &length) }
            }
            if connection >= 0 {
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
                let peer = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return (Socket(descriptor: connection), peer)
            }
            switch errno {
            case EINTR, ECONNABORTED, EPROTO: continue
            default: return nil
            }
        }
    }
}
