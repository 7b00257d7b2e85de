import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// A full disk is reported clearly, keeps the manifest true, and the download finishes once space is freed.
@Suite("disk full", .serialized)
struct DiskFullTests {
    @Test("ENOSPC: exit 3 with a clear message, the manifest intact, and a finished download after space is freed")
    func diskFull() async throws {
        guard let filesystem = try SmallFilesystem.mount(megabytes: 10) else {
            print(SmallFilesystem.unavailable)
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
        let left = try FileManager.default.contentsOfDirectory(atPath: filesystem.mountPoint).sorted()
        #expect(left == ["filler", "out.bin.braid", "out.bin.part"], "the reserve has no name")

        try FileManager.default.removeItem(atPath: filler)
        let freed = try await BraidCLI.run(arguments)

        #expect(freed.status == .exited(0), "\(freed.standardError)")
        #expect(try content.firstDifference(fromFileAt: output) == nil)
        if manifest.done > 0 { #expect(freed.standardError.contains("resuming at")) }
    }

    @Test("a disk with no room for a byte: exit 3, and nothing is left beside the files that were there")
    func noRoomAtAll() async throws {
        guard let filesystem = try SmallFilesystem.mount(megabytes: 1) else {
            print(SmallFilesystem.unavailable)
            return
        }
        defer { filesystem.unmount() }
        // One file large enough to keep a manifest, one small enough to come in the probe's one response.
        let large = TestContent(seed: 22, size: 3 << 20)
        let small = TestContent(seed: 23, size: 5000)
        let server = TestServer(routes: ["/large.bin": .init(content: large), "/small.bin": .init(content: small)])
        try server.start()
        defer { server.shutdown() }
        try filesystem.fill("filler")
        let list = try TemporaryDirectory(prefix: "braid-full-list")
        defer { list.remove() }
        let listFile = list.appending("list.txt")
        try Data("\(server.url("/large.bin"))\n\(server.url("/small.bin"))\n".utf8).write(to: listFile)

        let run = try await BraidCLI.run(["-i", listFile.path, "-d", filesystem.mountPoint, "--no-fsync"])

        #expect(run.status == .exited(3), "\(run.standardError)")
        #expect(run.standardError.contains("no space left on device"), "\(run.standardError)")
        let left = try FileManager.default.contentsOfDirectory(atPath: filesystem.mountPoint)
        #expect(left == ["filler"], "\(run.standardError)")
    }
}
