import BraidTestSupport
import Foundation
import SystemPackage
import Testing

@testable import Braid

/// The sidecar manifest: what it promises on resume, and every way a file on disk can fail to be one.
@Suite("Manifest")
struct ManifestTests {
    /// A valid manifest for a 300-byte file in three segments, partly written and partly synced.
    static let valid = Manifest(
        url: "https://example.com/file.iso",
        resolvedURL: "https://cdn.example.com/file.iso",
        length: 300,
        etag: "\"abc\"",
        lastModified: "Wed, 21 Oct 2015 07:28:00 GMT",
        digestAlgorithm: .sha256,
        digestHex: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        digestSource: .reprDigestHeader,
        bootID: "boot-1",
        segments: [
            .init(start: 0, end: 100, done: 100, durable: 60),
            .init(start: 100, end: 200, done: 40, durable: 0),
            .init(start: 200, end: 300, done: 0, durable: 0),
        ]
    )

    @Test("The valid example validates, and carries its expected digest")
    func validExample() {
        #expect(throws: Never.self) { try Self.valid.validate() }
        #expect(Self.valid.expectedDigest?.algorithm == .sha256)
        #expect(Self.valid.expectedDigest?.source == .reprDigestHeader)
        #expect(Self.valid.expectedDigest?.hex == Self.valid.digestHex)
    }

    @Test("An empty file with no segments is valid")
    func emptyFile() {
        var manifest = ManifestTests.valid
        manifest.length = 0
        manifest.segments = []
        #expect(throws: Never.self) { try manifest.validate() }
        #expect(manifest.trustedProgress(onBoot: "boot-1").isEmpty)
    }

    @Test("On the boot that wrote it, everything written is trusted; after a reboot only what was synced")
    func trustedProgress() {
        #expect(Self.valid.trustedProgress(onBoot: "boot-1") == [100, 40, 0])
        #expect(Self.valid.trustedProgress(onBoot: "boot-2") == [60, 0, 0])
    }

    struct Corruption: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let apply: @Sendable (inout Manifest) -> Void
    }

    @Test(
        "A manifest that breaks an invariant is rejected as a manifest error",
        arguments: [
            Corruption(testDescription: "wrong format") { $0.format = "aria2" },
            Corruption(testDescription: "future version") { $0.version = 2 },
            Corruption(testDescription: "version 0") { $0.version = 0 },
            Corruption(testDescription: "negative length") { $0.length = -300 },
            Corruption(testDescription: "a failed digest without data") {
                $0.segments = []
                $0.failedDigest = .init(
                    algorithm: .md5, expectedHex: String(repeating: "0", count: 32),
                    actualHex: String(repeating: "1", count: 32))
            },
            Corruption(testDescription: "a repair pass without data") {
                $0.segments = []
                $0.repair = .init(rewritten: [])
            },
            Corruption(testDescription: "a malformed digest without data") {
                $0.segments = []
                $0.digestHex = "ba7816bf"
            },
            Corruption(testDescription: "a digest without its source") {
                $0.digestSource = nil
            },
            Corruption(testDescription: "segments not starting at 0") {
                $0.segments[0].start = 1
            },
            Corruption(testDescription: "gap") {
                $0.segments[1].start = 101
            },
            Corruption(testDescription: "overlap") {
                $0.segments[1].start = 99
            },
            Corruption(testDescription: "empty segment") {
                $0.segments.insert(.init(start: 100, end: 100, done: 0, durable: 0), at: 1)
            },
            Corruption(testDescription: "inverted segment") {
                $0.segments = [
                    .init(start: 0, end: 300, done: 0, durable: 0), .init(start: 300, end: 200, done: 0, durable: 0),
                ]
            },
            Corruption(testDescription: "out of bounds") {
                $0.segments[2].end = 301
            },
            Corruption(testDescription: "not ending at the length") {
                $0.segments[2].end = 299
                $0.segments[2].done = 0
            },
            Corruption(testDescription: "done beyond the segment") {
                $0.segments[1].done = 101
            },
            Corruption(testDescription: "negative done") {
                $0.segments[1].done = -1
            },
            Corruption(testDescription: "durable beyond done") {
                $0.segments[1].durable = 41
            },
            Corruption(testDescription: "negative durable") {
                $0.segments[2].durable = -1
            },
            Corruption(testDescription: "segments for a 0-byte file") {
                $0.length = 0
            },
            Corruption(testDescription: "digest hex not hex") {
                $0.digestHex = String(repeating: "zz", count: 32)
            },
            Corruption(testDescription: "digest hex too short") {
                $0.digestHex = "ba7816bf"
            },
            Corruption(testDescription: "digest hex of another algorithm") {
                $0.digestAlgorithm = .md5
            },
            Corruption(testDescription: "digest algorithm without hex") {
                $0.digestHex = nil
            },
            Corruption(testDescription: "digest hex without algorithm") {
                $0.digestAlgorithm = nil
            },
            Corruption(testDescription: "too many segments") {
                $0.length = 200_001
                $0.segments = (0..<200_001).map { .init(start: Int64($0), end: Int64($0) + 1, done: 0, durable: 0) }
            },
        ]
    )
    func rejects(_ corruption: Corruption) {
        var manifest = ManifestTests.valid
        corruption.apply(&manifest)
        let error = #expect(throws: BraidError.self) { try manifest.validate() }
        #expect(error?.code == .manifest)
    }

    @Test("A manifest without segments keeps no data: it is the record of the digest the file is held to")
    func recordOnly() throws {
        let digest = try #require(Self.valid.expectedDigest)
        let record = Manifest(
            recordOf: digest, url: "https://user:secret@example.com/file.iso", resolvedURL: Self.valid.resolvedURL,
            length: 300)
        #expect(throws: Never.self) { try record.validate() }
        #expect(!record.keepsData && Self.valid.keepsData)
        #expect(record.expectedDigest == digest)
        #expect(record.url == "https://example.com/file.iso", "no credentials are stored")
    }

    @Test("A manifest with no digest at all is valid and expects none")
    func noDigest() {
        var manifest = ManifestTests.valid
        manifest.digestAlgorithm = nil
        manifest.digestHex = nil
        manifest.digestSource = nil
        #expect(throws: Never.self) { try manifest.validate() }
        #expect(manifest.expectedDigest == nil)
    }
}

/// Saving and loading `FILE.braid` in a scratch directory.
@Suite("ManifestStore")
final class ManifestStoreTests {
    let directory: ScratchDirectory
    let store: ManifestStore

    init() throws {
        directory = try ScratchDirectory()
        store = ManifestStore(path: FilePath(directory.file("file.iso.braid")))
    }

    func write(_ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: store.path.path.string))
    }

    @Test("No manifest on disk loads as nil")
    func missing() throws {
        #expect(!store.exists)
        #expect(try store.load() == nil)
    }

    @Test(
        "Save then load gives back the same manifest, durable or not, and leaves no temporary file",
        arguments: [false, true])
    func roundTrip(durable: Bool) throws {
        try store.save(ManifestTests.valid, durable: durable)
        #expect(store.exists)
        #expect(try store.load() == ManifestTests.valid)
        #expect(try directory.contents() == ["file.iso.braid"])
    }

    @Test("A manifest as the previous release wrote it after a --checksum mismatch loads with its digest's source")
    func previousFormatAfterMismatch() throws {
        let expected = String(repeating: "ab", count: 32)
        try write(
            #"{"bootID":"b","digestAlgorithm":"sha-256","digestHex":"\#(expected)","digestSource":"--checksum","#
                + #""failedDigest":{"actualHex":"\#(String(repeating: "cd", count: 32))","algorithm":"sha-256","#
                + #""expectedHex":"\#(expected)"},"format":"braid-manifest","length":10,"resolvedURL":"http://h/f","#
                + #""segments":[{"done":10,"durable":10,"end":10,"start":0}],"url":"http://h/f","version":1}"#)

        let manifest = try #require(try store.load())

        #expect(manifest.expectedDigest?.source == .user && manifest.expectedDigest?.hex == expected)
        #expect(DigestAuthority.Rank(try #require(manifest.expectedDigest?.source)) == .user)
        #expect(manifest.keepsData && manifest.failedDigest?.expectedHex == expected)
    }

    @Test("A later save replaces the earlier one")
    func replace() throws {
        try store.save(ManifestTests.valid, durable: false)
        var later = ManifestTests.valid
        later.segments[1].done = 100
        later.segments[1].durable = 100
        try store.save(later, durable: true)
        #expect(try store.load() == later)
        #expect(try directory.contents() == ["file.iso.braid"])
    }

    @Test("remove deletes the manifest and any temporary file")
    func remove() throws {
        try store.save(ManifestTests.valid, durable: false)
        try Data("x".utf8).write(to: URL(fileURLWithPath: store.path.path.string + ".tmp"))
        store.remove()
        #expect(try directory.contents().isEmpty)
        #expect(try store.load() == nil)
    }

    @Test("The reserve is held by a file with no name: nothing appears beside the manifest, and a stale name goes")
    func reserveHasNoName() throws {
        try Data("left by a crash".utf8).write(to: URL(fileURLWithPath: store.reservePath.path.string))
        try store.save(ManifestTests.valid, durable: false)

        try store.createReserve()

        #expect(store.holdsReserve)
        #expect(try directory.contents() == ["file.iso.braid"])
        store.releaseReserve()
        #expect(!store.holdsReserve)
    }

    @Test("On a full disk a checkpoint fails, and succeeds once the reserve is given back")
    func reserveMakesRoomOnFullDisk() async throws {
        guard let filesystem = try SmallFilesystem.mount(megabytes: 1) else {
            print(SmallFilesystem.unavailable)
            return
        }
        defer { filesystem.unmount() }
        let store = ManifestStore(path: FilePath(filesystem.mountPoint + "/file.iso.braid"))
        try store.createReserve()
        #expect(store.holdsReserve)
        try filesystem.fill("filler")

        #expect(throws: BraidError.self) { try store.save(ManifestTests.valid, durable: false) }
        store.releaseReserve()
        // The blocks come back when the last copy of the reserve's descriptor closes: a child that another test
        // is starting right now holds one until it execs, for a moment.
        try await Polling.until("the reserve's space to come back", timeout: .seconds(10)) {
            (try? store.save(ManifestTests.valid, durable: false)) != nil
        }

        #expect(try store.load() == ManifestTests.valid)
        let names = try FileManager.default.contentsOfDirectory(atPath: filesystem.mountPoint).sorted()
        #expect(names == ["file.iso.braid", "filler"])
    }

    @Test(
        "A file that is not a manifest is rejected as a manifest error",
        arguments: [
            "",
            "not json",
            "{",
            "[]",
            "{}",
            "null",
            #"{"format":"braid-manifest","version":1}"#,
            #"{"format":"braid-manifest","version":"1","url":"u","resolvedURL":"u","length":1,"bootID":"b","segments":[]}"#,
            #"{"format":"braid-manifest","version":1,"url":"u","resolvedURL":"u","length":1.5,"bootID":"b","segments":[]}"#,
            #"{"format":"braid-manifest","version":1,"url":"u","resolvedURL":"u","length":1,"bootID":"b","segments":[],"digestAlgorithm":"crc32"}"#,
        ]
    )
    func rejectsNonManifest(text: String) throws {
        try write(text)
        let error = #expect(throws: BraidError.self) { try self.store.load() }
        #expect(error?.code == .manifest)
    }

    @Test("A truncated manifest is rejected, wherever it was cut")
    func rejectsTruncated() throws {
        try store.save(ManifestTests.valid, durable: false)
        let full = try Data(contentsOf: URL(fileURLWithPath: store.path.path.string))
        for length in stride(from: 0, to: full.count, by: 7) {
            try full.prefix(length).write(to: URL(fileURLWithPath: store.path.path.string))
            let error = #expect(throws: BraidError.self, "cut at \(length)") { try self.store.load() }
            #expect(error?.code == .manifest)
        }
    }

    @Test("A well-formed JSON manifest that fails validation is rejected on load, naming the problem")
    func rejectsInvalidOnLoad() throws {
        var manifest = ManifestTests.valid
        manifest.version = 99
        try store.save(manifest, durable: false)
        let error = #expect(throws: BraidError.self) { try self.store.load() }
        #expect(error?.code == .manifest)
        #expect(error?.message.contains("version 99") == true)
    }

    @Test("A huge file is refused before it is read")
    func rejectsHuge() throws {
        let handle = try FileDescriptor.open(
            store.path.path, .writeOnly, options: [.create], permissions: .ownerReadWrite)
        try handle.closeAfter { try handle.resize(to: 64 << 20) }
        let error = #expect(throws: BraidError.self) { try self.store.load() }
        #expect(error?.code == .manifest)
    }

    @Test(
        "URLs are stored without user:password@, and a manifest matches its URL whatever credentials either carries",
        arguments: [
            ("http://user:secret@host:8080/a/f.bin?x=1", "http://host:8080/a/f.bin?x=1"),
            ("https://token@host/f", "https://host/f"),
            ("https://u:p%40ss@host/f", "https://host/f"),
            ("https://host/f?mail=a@b", "https://host/f?mail=a@b"),
            ("https://host/a@b/f", "https://host/a@b/f"),
            ("https://host", "https://host"),
        ]
    )
    func withoutUserinfo(url: String, stored: String) {
        #expect(URLUserinfo.removed(from: url) == stored)
        var manifest = ManifestTests.valid
        manifest.url = url
        #expect(manifest.belongs(to: stored))
        manifest.url = stored
        #expect(manifest.belongs(to: url))
        #expect(!manifest.belongs(to: "https://other/f"))
    }
}
