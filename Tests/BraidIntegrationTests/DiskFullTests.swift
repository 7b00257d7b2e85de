import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A full disk is reported clearly, keeps the manifest true, and the download finishes once space is freed.
@Suite("disk full", .serialized)
struct DiskFullTests {
    /// A small tmpfs the test mounts itself; needs root and permission to mount (not inside every container).
    struct SmallFilesystem {
        let directory: TemporaryDirectory
        let mountPoint: String

        static func mount(megabytes: Int) throws -> SmallFilesystem? {
            guard getuid() == 0 else { return nil }
            let directory = try TemporaryDirectory(prefix: "braid-diskfull")
            let mountPoint = directory.appending("fs").path
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            let status = runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint])
            guard status == 0 else {
                directory.remove()
                return nil
            }
            return SmallFilesystem(directory: directory, mountPoint: mountPoint)
        }

        func unmount() {
            _ = runCommand("/bin/umount", [mountPoint])
            directory.remove()
        }

        private static func runCommand(_ path: String, _ arguments: [String]) -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return -1 }
            process.waitUntilExit()
            return process.terminationStatus
        }

        private func runCommand(_ path: String, _ arguments: [String]) -> Int32 {
            Self.runCommand(path, arguments)
        }
    }

    @Test("ENOSPC: exit 3 with a clear message, the manifest intact, and a finished download after space is freed")
    func diskFull() async throws {
        guard let filesystem = try SmallFilesystem.mount(megabytes: 10) else {
            print("skipped: mounting a tmpfs needs root and CAP_SYS_ADMIN, which this environment does not give")
            return
        }
        defer { filesystem.unmount() }
        let size: UInt64 = 8 << 20
        let content = TestContent(seed: 21, size: size)
        let server = TestServer(routes: ["/f": .init(content: content)])
        try server.start()
        defer { server.shutdown() }
        let filler = filesystem.mountPoint + "/filler"
        try Data(count: 5 << 20).write(to: URL(fileURLWithPath: filler))
        let output = filesystem.mountPoint + "/out.bin"
        let arguments = [server.url("/f"), "-n", "4", "-o", output]

        let full = try await BraidCLI.run(arguments)

        #expect(full.status == .exited(3), "\(full.standardError)")
        #expect(full.standardError.contains("no space left on device"))
        #expect(full.standardError.split(separator: "\n").last?.hasPrefix("braid: ") == true)
        #expect(!FileManager.default.fileExists(atPath: output))
        let manifest = try #require(ManifestFile(at: URL(fileURLWithPath: output + ".braid")), "manifest intact")
        #expect(manifest.length == Int64(size))
        #expect(manifest.done < Int64(size))

        try FileManager.default.removeItem(atPath: filler)
        let freed = try await BraidCLI.run(arguments)

        #expect(freed.status == .exited(0), "\(freed.standardError)")
        #expect(try content.firstDifference(fromFileAt: output) == nil)
        if manifest.done > 0 { #expect(freed.standardError.contains("resuming at")) }
    }
}
