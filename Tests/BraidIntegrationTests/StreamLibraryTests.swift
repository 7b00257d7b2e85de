import Braid
import BraidTestSupport
import Foundation
import Testing

/// The library's face of streaming: `Download.chunks` hands a download's bytes out in order to a task that takes
/// its time, and an extraction target unpacks an archive, both reported in `DownloadResult`.
@Suite("streaming through the library", .serialized)
struct StreamLibraryTests {
    @Test("Download.chunks yields every byte in order to a slow iterator, within the window")
    func chunksInOrder() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-chunks")
        defer { directory.remove() }
        let root = directory.appending("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let size = 24 << 20
        try PseudoRandomContent(seed: 31).write(to: root.appendingPathComponent("model.bin"), size: size)
        let nginx = try await NginxFixture.start(.init(documentRoot: root))
        defer { nginx.shutdown() }

        var options = DownloadOptions()
        options.destination = .directory(directory.appending("state").path)
        options.stream = StreamOptions(target: .chunks, window: 2 << 20)
        options.syncOnCompletion = false
        let download = Download(url: nginx.url("/model.bin"), options: options)
        async let result = download.run()
        var received = Data()
        var chunks = 0
        for try await chunk in download.chunks {
            received.append(contentsOf: chunk)
            chunks += 1
            // A consumer that yields between chunks, as a loader doing work would.
            if chunks % 4 == 0 { await Task.yield() }
        }
        let finished = try await result
        #expect(received == (try Data(contentsOf: root.appendingPathComponent("model.bin"))))
        #expect(finished.bytes == Int64(size))
        #expect(finished.path.isEmpty, "nothing is kept")
        #expect(chunks >= size >> 20, "chunks of at most 1 MiB")
    }

    @Test("An extraction target unpacks the archive and reports what it wrote")
    func extractionTarget() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-extract-api")
        defer { directory.remove() }
        let source = directory.appending("src")
        try ExtractTests.makeTree(at: source)
        try FileManager.default.createDirectory(at: directory.appending("www"), withIntermediateDirectories: true)
        try await ExtractTests.shell("tar -cJf '\(directory.appending("www/a.tar.xz").path)' -C '\(source.path)' .")
        let nginx = try await NginxFixture.start(.init(documentRoot: directory.appending("www")))
        defer { nginx.shutdown() }

        var options = DownloadOptions()
        options.destination = .directory(directory.appending("state").path)
        options.stream = StreamOptions(
            target: .extraction(ExtractionOptions(directory: directory.appending("out").path)))
        let result = try await Download(url: nginx.url("/a.tar.xz"), options: options).run()
        #expect(result.extraction?.written == 8, "\(String(describing: result.extraction))")
        #expect(result.extraction?.refused == [])
        #expect(result.extraction?.bytes == Int64(3 << 20) + 25, "the contents of big-0.bin, sub/a.txt and sub/run.sh")
        #expect(TreeSnapshot(of: directory.appending("out").path) == TreeSnapshot(of: source.path))
    }
}
