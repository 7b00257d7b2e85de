import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The edges of scale: empty and one-byte files, and offsets past 4 GiB.
@Suite("scale edges")
struct ScaleTests {
    @Test("0-byte and 1-byte files download and verify", arguments: [0, 1] as [UInt64])
    func tinyFiles(size: UInt64) async throws {
        let content = TestContent(seed: 3, size: size)
        let server = TestServer(routes: ["/f": .init(content: content, faults: [.contentMD5(correct: true)])])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-scale")
        defer {
            server.shutdown()
            directory.remove()
        }

        let download = await LibraryDownload.run(server.url("/f"), into: directory)

        let result = try download.result.get()
        #expect(result.bytes == Int64(size))
        #expect(result.verifiedDigest?.algorithm == .md5)
        #expect(try content.firstDifference(fromFileAt: result.path) == nil)
    }

    @Test("ranges and positional writes past 4 GiB: the tail of a 5 GiB file lands at the right offsets")
    func offsetsBeyondFourGiB() async throws {
        let size: UInt64 = 5 << 30
        let tail: UInt64 = 8 << 20
        let content = TestContent(seed: 9, size: size)
        let server = TestServer(routes: ["/big": .init(content: content)])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-scale")
        defer {
            server.shutdown()
            directory.remove()
        }
        let output = directory.appending("big.bin").path
        let url = server.url("/big")
        // A sparse partial file and a manifest, written by this boot, that claim all but the last 8 MiB.
        let part = open(output + ".part", O_WRONLY | O_CREAT, 0o644)
        #expect(ftruncate(part, off_t(size)) == 0)
        close(part)
        let bootID = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let split = size - tail
        let manifest = """
            {"format":"braid-manifest","version":1,"url":"\(url)","resolvedURL":"\(url)","length":\(size),\
            "etag":\(String(reflecting: content.entityTag)),"lastModified":"\(content.lastModified)",\
            "bootID":"\(bootID)","segments":[{"start":0,"end":\(split),"done":\(split),"durable":0},\
            {"start":\(split),"end":\(size),"done":0,"durable":0}]}
            """
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: output + ".braid"))

        let download = await LibraryDownload.run(url, into: directory, name: "big.bin") { $0.connections = 4 }

        let result = try download.result.get()
        #expect(result.bytes == Int64(size))
        #expect(result.resumedBytes == Int64(split))
        #expect(result.fetchedBytes == Int64(tail))
        let starts = server.requestLog.compactMap(\.range).compactMap { UInt64($0.dropFirst(6).prefix { $0 != "-" }) }
        #expect(!starts.isEmpty && starts.allSatisfy { $0 >= split }, "only the missing tail was requested")
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: output))
        try handle.seek(toOffset: split)
        let written = try handle.read(upToCount: Int(tail)) ?? Data()
        try handle.close()
        #expect(written == Data(content.bytes(in: split..<size)))
    }
}
