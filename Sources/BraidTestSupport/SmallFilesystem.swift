import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small tmpfs a test mounts itself, to fill up: needs root and permission to mount, which not every container
/// gives, so `mount` answers nil where it cannot.
public struct SmallFilesystem: Sendable {
    private let directory: TemporaryDirectory
    /// Where the file system is mounted.
    public let mountPoint: String

    /// What a test that needs one says when `mount` answers nil, before it returns.
    public static let unavailable =
        "skipped: mounting a tmpfs needs root and CAP_SYS_ADMIN, which this environment does not give"

    /// Mounts a tmpfs of `megabytes` MiB in a fresh temporary directory; nil when this process may not mount.
    public static func mount(megabytes: Int) throws -> SmallFilesystem? {
        guard getuid() == 0 else { return nil }
        let directory = try TemporaryDirectory(prefix: "braid-smallfs")
        let mountPoint = directory.appending("fs").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let status = run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint])
        guard status == 0 else {
            directory.remove()
            return nil
        }
        return SmallFilesystem(directory: directory, mountPoint: mountPoint)
    }

    /// Unmounts the file system and removes its directory.
    public func unmount() {
        _ = Self.run("/bin/umount", [mountPoint])
        directory.remove()
    }

    /// Writes a file at `name` until the file system is full, and returns how many bytes it took.
    @discardableResult
    public func fill(_ name: String) throws -> Int {
        let descriptor = open(mountPoint + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw TestSupportError.systemCall("open", errno: errno) }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0xA5, count: 4096)
        var total = 0
        while true {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                total += written
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && errno == ENOSPC {
                return total
            } else {
                throw TestSupportError.systemCall("write", errno: errno)
            }
        }
    }

    private static func run(_ path: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
