import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fresh, private directory under the system's temporary directory, for files one test creates.
///
/// Created with `mkdtemp` so that parallel tests never share a path. Removal is explicit (`remove()`), so a
/// test can keep the evidence around when it wants to.
public struct TemporaryDirectory: Sendable {
    /// The directory's location.
    public let url: URL

    /// Creates a new empty directory whose name starts with `prefix`.
    public init(prefix: String = "braid-test") throws {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix).XXXXXX").path
        var bytes = Array(template.utf8CString)
        let path = bytes.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        guard let path else { throw TestSupportError.systemCall("mkdtemp", errno: errno) }
        url = URL(fileURLWithPath: path, isDirectory: true)
    }

    /// The location of `name` inside the directory.
    public func appending(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    /// Deletes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
