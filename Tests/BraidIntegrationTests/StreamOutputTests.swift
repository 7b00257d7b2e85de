import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `braid URL -o -` against nginx, read through a pipe this test holds: the bytes come out in order and whole with
/// 8 connections, a reader that stops reading holds the download to the window, and a reader that closes the pipe
/// ends it with a clear message and the manifest kept.
@Suite("-o - to a pipe", .serialized)
struct StreamOutputTests {
    static let size = 32 << 20
    static let window = 4 << 20

    struct Fixture {
        let nginx: NginxFixture
        let directory: TemporaryDirectory
        let contents: Data

        static func start() async throws -> Fixture {
            let directory = try TemporaryDirectory(prefix: "braid-stream")
            let root = directory.appending("www")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try PseudoRandomContent(seed: 30).write(to: root.appendingPathComponent("file.bin"), size: size)
            let nginx = try await NginxFixture.start(.init(documentRoot: root))
            let contents = try Data(contentsOf: root.appendingPathComponent("file.bin"))
            return Fixture(nginx: nginx, directory: directory, contents: contents)
        }

        var state: String { directory.appending("state").path }
        var manifest: URL { directory.appending("state/file.bin.braid") }

        /// Starts `braid URL -o - -d STATE` with its stdout on a FIFO, and returns it with the FIFO's read end,
        /// opened read-write so that reads block rather than end while braid has not opened its end yet.
        func startBraid(_ extra: [String] = []) throws -> (ChildProcess, Int32) {
            let fifo = directory.appending("stdout.fifo").path
            unlink(fifo)
            guard mkfifo(fifo, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
            let descriptor = open(fifo, O_RDWR | O_CLOEXEC)
            guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
            let arguments = [nginx.url("/file.bin"), "-o", "-", "-d", state, "-n", "8", "--no-fsync"] + extra
            let child = try ChildProcess(
                "/bin/sh", ["-c", "exec \"$0\" \"$@\" > '\(fifo)'", BraidCLI.path] + arguments)
            return (child, descriptor)
        }

        func shutdown() {
            nginx.shutdown()
            directory.remove()
        }
    }

    /// Reads exactly `count` bytes from `descriptor`, blocking, and failing after a minute without a byte.
    static func read(_ count: Int, from descriptor: Int32) throws -> Data {
        var data = Data(count: count)
        var offset = 0
        try data.withUnsafeMutableBytes { buffer in
            while offset < count {
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 60_000) > 0 else { throw POSIXError(.ETIMEDOUT) }
                let read = Glibc.read(descriptor, buffer.baseAddress! + offset, count - offset)
                if read < 0 && errno == EINTR { continue }
                guard read > 0 else { throw POSIXError(.EIO) }
                offset += read
            }
        }
        return data
    }

    /// The end of the furthest byte range the manifest says is on disk.
    static func fetchedUpTo(_ manifest: URL) -> Int64 {
        guard let data = try? Data(contentsOf: manifest),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let segments = object["segments"] as? [[String: Any]]
        else { return 0 }
        return segments.reduce(Int64(0)) { furthest, segment in
            let start = (segment["start"] as? NSNumber)?.int64Value ?? 0
            let done = (segment["done"] as? NSNumber)?.int64Value ?? 0
            return done > 0 ? max(furthest, start + done) : furthest
        }
    }

    @Test("Every byte comes out in order with 8 connections; a reader that pauses holds the download to the window")
    func pausingReader() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let (child, descriptor) = try fixture.startBraid(["--stream-window", "4M"])
        defer {
            close(descriptor)
            child.stop(signal: SIGKILL)
        }
        var received = try Self.read(1 << 20, from: descriptor)
        // The reader pauses: the connections fetch ahead until the window is full, and no further.
        try await Polling.until("the window to fill", timeout: .seconds(60)) {
            Self.fetchedUpTo(fixture.manifest) >= Int64(received.count + Self.window * 3 / 4) || child.status != nil
        }
        let ahead = Self.fetchedUpTo(fixture.manifest)
        // What may sit between the reader and the window: the pipe's buffer and the writer's 1 MiB block.
        #expect(ahead <= Int64(received.count + Self.window + (2 << 20)), "fetched to \(ahead) while paused")
        #expect(child.status == nil, "braid ended while the reader paused: \(child.standardError)")
        // Then it reads on, a block at a time.
        while received.count < Self.size {
            received += try Self.read(min(3 << 20, Self.size - received.count), from: descriptor)
        }
        let status = try await child.waitForExit(timeout: .seconds(60))
        #expect(status == .exited(0), "\(child.standardError)")
        #expect(received == fixture.contents, "stdout differs from the served file")
        #expect(child.standardError.contains("Wrote 32.0 MiB to stdout"), "\(child.standardError)")
        #expect(!FileManager.default.fileExists(atPath: fixture.manifest.path), "the manifest outlived the download")
        #expect(!FileManager.default.fileExists(atPath: fixture.state + "/file.bin.part"))
        #expect(!FileManager.default.fileExists(atPath: fixture.state + "/file.bin"), "no file is kept")
    }

    /// The disk blocks `FILE.part` holds, in bytes (what a hole punched in it no longer counts).
    static func allocated(_ path: String) -> Int64 {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        return Int64(status.st_blocks) * 512
    }

    @Test("What the reader took is freed from FILE.part while it pauses: the disk holds about one window")
    func releasedBytesFreed() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let (child, descriptor) = try fixture.startBraid(["--stream-window", "4M"])
        defer {
            close(descriptor)
            child.stop(signal: SIGKILL)
        }
        var received = try Self.read(16 << 20, from: descriptor)
        try await Polling.until("the window to fill", timeout: .seconds(60)) {
            Self.fetchedUpTo(fixture.manifest) >= Int64(received.count + Self.window * 3 / 4) || child.status != nil
        }
        #expect(child.status == nil, "braid ended while the reader paused: \(child.standardError)")
        // 16 MiB and more were written to FILE.part; the 16 MiB read are freed once a checkpoint records them.
        let part = fixture.state + "/file.bin.part"
        let limit = Int64(Self.window + (4 << 20))
        try await Polling.until("the bytes read to be freed", timeout: .seconds(30)) {
            Self.allocated(part) <= limit || child.status != nil
        }
        let held = Self.allocated(part)
        #expect(held <= limit, "FILE.part holds \(held) bytes with 16 MiB read and a 4 MiB window")
        while received.count < Self.size {
            received += try Self.read(min(4 << 20, Self.size - received.count), from: descriptor)
        }
        #expect(try await child.waitForExit(timeout: .seconds(60)) == .exited(0), "\(child.standardError)")
        #expect(received == fixture.contents, "stdout differs from the served file")
    }

    @Test("A digest that does not match once every byte went out ends with exit 6 and says not to use them")
    func mismatchAfterOutput() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let wrong = "sha-256=" + String(repeating: "0", count: 64)
        let (child, descriptor) = try fixture.startBraid(["--checksum", wrong])
        defer {
            close(descriptor)
            child.stop(signal: SIGKILL)
        }
        let received = try Self.read(Self.size, from: descriptor)
        #expect(received == fixture.contents, "the bytes go out as they are, before the digest is known")
        let status = try await child.waitForExit(timeout: .seconds(60))
        #expect(status == .exited(6), "\(child.standardError)")
        #expect(child.standardError.contains("written out are not the file"), "\(child.standardError)")
        #expect(child.standardError.contains("do not use them"), "\(child.standardError)")
    }

    /// Closes the reader's end of the pipe, then expects what a reader that goes away gets: exit 3, a message saying
    /// to run the same command again, and the manifest kept for it.
    static func expectSavedOnClose(_ descriptor: Int32, of child: ChildProcess, manifest: URL) async throws {
        close(descriptor)
        let status = try await child.waitForExit(timeout: .seconds(60))
        #expect(status == .exited(3), "\(child.standardError)")
        #expect(child.standardError.contains("the reader of the output closed it after"), "\(child.standardError)")
        #expect(child.standardError.contains("run the same command again"), "\(child.standardError)")
        #expect(FileManager.default.fileExists(atPath: manifest.path), "the manifest was not kept")
    }

    @Test("A reader that closes the pipe ends the download with exit 3, a clear message and the manifest kept")
    func readerClosesPipe() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let (child, descriptor) = try fixture.startBraid()
        defer { child.stop(signal: SIGKILL) }
        _ = try Self.read(100_000, from: descriptor)
        try await Self.expectSavedOnClose(descriptor, of: child, manifest: fixture.manifest)
    }

    @Test("A reader that closes the pipe after the whole file arrived gets the same message and exit 3")
    func readerClosesPipeAfterTransfer() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let (child, descriptor) = try fixture.startBraid()
        defer { child.stop(signal: SIGKILL) }
        _ = try Self.read(100_000, from: descriptor)
        // Every byte is fetched within the window, while the reader still holds the pipe open and reads no more.
        try await Polling.until("the whole file to arrive", timeout: .seconds(60)) {
            Self.fetchedUpTo(fixture.manifest) >= Int64(Self.size) || child.status != nil
        }
        try await Self.expectSavedOnClose(descriptor, of: child, manifest: fixture.manifest)
    }
}
