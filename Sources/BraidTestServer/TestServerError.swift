import Glibc

/// Why the test server could not start: which socket call failed and with what `errno`.
public struct TestServerError: Error, CustomStringConvertible {
    /// The failing call, e.g. `bind`.
    public let operation: String
    /// The `errno` the call left.
    public let errno: Int32

    /// Captures the current `errno` for `operation`.
    static func lastError(_ operation: String) -> TestServerError {
        TestServerError(operation: operation, errno: Glibc.errno)
    }

    /// One line saying what failed and why, e.g. `bind failed: Address already in use (errno 98)`.
    public var description: String {
        "\(operation) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
