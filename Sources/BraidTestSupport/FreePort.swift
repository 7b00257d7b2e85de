#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Picks TCP ports on 127.0.0.1 that nothing is listening on, so parallel tests never collide on a fixed port.
///
/// The port is free when picked, not reserved: another process may take it before the caller binds it.
/// Callers that start a server retry with a new port when the bind fails.
public enum FreePort {
    /// Binds 127.0.0.1 port 0, reads the port the kernel chose, and closes the socket.
    public static func pick() throws -> Int {
        let socket = try LoopbackSocket()
        defer { socket.close() }
        return try socket.bindToAnyPort()
    }
}

/// A TCP port on 127.0.0.1 that refuses every connection until `close()`: a socket bound to it that never listens.
///
/// A port picked free and let go (`FreePort.pick()`) may be taken by a parallel test's server before the request
/// reaches it, which then answers instead of refusing. This socket keeps the port, and it does not allow the address
/// to be reused, so not even a server that asks for `SO_REUSEADDR` can bind it meanwhile.
public struct RefusingPort: Sendable {
    public let port: Int
    private let socket: LoopbackSocket

    public init() throws {
        socket = try LoopbackSocket()
        do {
            port = try socket.bindToAnyPort()
        } catch {
            socket.close()
            throw error
        }
    }

    /// Lets the port go.
    public func close() { socket.close() }
}
