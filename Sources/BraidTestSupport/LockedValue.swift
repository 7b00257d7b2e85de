import Foundation

/// A value shared between the test's task and Foundation's process-monitoring thread.
///
/// `Mutex` from Synchronization would do, but it needs macOS 15 and the package still builds for macOS 13.
final class LockedValue<Value>: @unchecked Sendable {
    // Safe because every access to `value` goes through `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}
