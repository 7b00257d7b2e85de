import BraidTestSupport
import Foundation
import Logging
import Testing

@testable import Braid

/// The look at a download's destination before its first request (`DownloadJob.lookBeforeProbe`), which decides
/// whether that request may be a GET of the whole file, and the claim after it (`claimDestination`), which uses
/// what the look opened.
@Suite("the look before the probe")
struct LookBeforeProbeTests {
    /// A manager's download (with its claims and directories) of a file `name` in `subdirectory` of `directory`.
    static func job(in directory: TemporaryDirectory, subdirectory: String, name: String) -> DownloadJob {
        var options = DownloadOptions()
        options.destination = .below(directory.url.path, subdirectory: subdirectory, name: name)
        let url = "http://127.0.0.1:9/\(name)"
        return DownloadJob(
            url: url, options: options, interrupter: Interrupter(), budget: nil, limiter: nil,
            claims: DestinationClaims(), directories: OpenDirectories(), pool: TransferPool(), label: "line 1",
            logger: Logger(label: "test"), parsedURL: URLComponents(string: url), nameFromURL: nil,
            credentials: DownloadJob.scope(of: url, options: options), emit: { _ in })
    }

    static func resource(_ job: DownloadJob) -> RemoteResource {
        RemoteResource(
            requestedURL: job.url, resolvedURL: job.url, length: 4, acceptsRanges: true, etag: nil,
            lastModified: nil, suggestedFilename: nil, digests: [])
    }

    @Test("subdirectories not made yet: it starts afresh, makes nothing, and the claim makes them as the look's place")
    func missingSubdirectories() throws {
        let directory = try TemporaryDirectory(prefix: "braid-look")
        defer { directory.remove() }
        let job = Self.job(in: directory, subdirectory: "a/b", name: "f.bin")

        let (afresh, opened) = job.lookBeforeProbe()

        #expect(afresh)
        let looked = try #require(opened, "the look keeps its place, for a list's small file to be placed from")
        #expect(looked.paths == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
        let (paths, lookedAt) = try job.claimDestination(for: Self.resource(job), opened: looked)
        #expect(lookedAt, "nothing was there, so nothing needs looking up again")
        #expect(paths.final.lastComponent == "f.bin")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: directory.appending("a/b").path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
    }

    @Test("a subdirectory there with a manifest in it: not afresh, and the directory as opened is kept")
    func manifestInSubdirectory() throws {
        let directory = try TemporaryDirectory(prefix: "braid-look")
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.appending("a"), withIntermediateDirectories: false)
        try Data("x".utf8).write(to: directory.appending("a/f.bin.braid"))
        let job = Self.job(in: directory, subdirectory: "a", name: "f.bin")

        let (afresh, opened) = job.lookBeforeProbe()

        #expect(!afresh)
        #expect(opened?.paths != nil)
    }

    @Test("a file where a subdirectory should be: afresh, but nothing opened, so the download's own steps report it")
    func fileInPlaceOfSubdirectory() throws {
        let directory = try TemporaryDirectory(prefix: "braid-look")
        defer { directory.remove() }
        try Data("x".utf8).write(to: directory.appending("a"))
        let job = Self.job(in: directory, subdirectory: "a", name: "f.bin")

        let (afresh, opened) = job.lookBeforeProbe()

        #expect(afresh)
        #expect(opened == nil)
        #expect(throws: BraidError.self) { try job.claimDestination(for: Self.resource(job), opened: opened) }
    }
}
