/// Why the daemon's server could not start: what happened, and the underlying cause when there is one.
public struct DaemonServerError: Error, CustomStringConvertible {
    /// The kinds of failure, hidden so that new ones can be added without breaking callers.
    enum Code: Equatable {
        case cannotBind
        case alreadyStarted
        case stopped
    }

    let code: Code
    /// One sentence saying what happened and, where it helps, what to do.
    public let message: String
    /// The error that caused this one (the socket error of a failed bind), if any.
    public let cause: (any Error)?

    public var description: String {
        if let cause { "\(message) (\(cause))" } else { message }
    }

    /// The listening socket could not be opened: the port is taken, the host is not an address of this machine, or
    /// the port needs privileges.
    static func cannotBind(host: String, port: Int, cause: any Error) -> Self {
        Self(
            code: .cannotBind,
            message: "cannot listen on \(host) port \(port): choose another --rpc-listen-port or host",
            cause: cause
        )
    }

    /// `start()` was called on a server that is already serving or has been started before.
    static func alreadyStarted() -> Self {
        Self(code: .alreadyStarted, message: "the daemon's server was already started; make a new one", cause: nil)
    }

    /// `stop()` was called while `start()` was still binding; the half-started server was shut down.
    static func stopped() -> Self {
        Self(code: .stopped, message: "the daemon's server was stopped while it was starting", cause: nil)
    }
}
