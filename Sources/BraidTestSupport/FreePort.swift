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
