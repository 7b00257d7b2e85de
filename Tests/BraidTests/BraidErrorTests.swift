import Foundation
import SystemPackage
import Testing

@testable import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// A library error says what happened in the library's terms; which input was refused, what would help and the
/// failure underneath travel beside the message, for a program to word in its own terms.
@Suite("BraidError")
final class BraidErrorTests {
    let directory: ScratchDirectory

    init() throws {
        directory = try ScratchDirectory()
    }

    static func options(_ change: (inout DownloadOptions) -> Void) -> DownloadOptions {
        var options = DownloadOptions()
        change(&options)
        return options
    }

    /// Whether `message` names something that looks like a command-line flag.
    static func namesAFlag(_ message: String) -> Bool {
        message.contains("--") || message.contains(" -o")
    }

    @Test(
        "Each refused option is named by the property it is, and the message names no flag",
        arguments: [
            (options { $0.connections = 0 }, BraidError.Option.connections),
            (options { $0.connections = 1025 }, .connections),
            (options { $0.piecesPerConnection = 0 }, .piecesPerConnection),
            (options { $0.maximumAttempts = 0 }, .maximumAttempts),
            (options { $0.byteLimit = 0 }, .byteLimit),
            (options { $0.stallTimeoutSeconds = 0 }, .stallTimeoutSeconds),
            (options { $0.connectTimeoutSeconds = 2_147_484 }, .connectTimeoutSeconds),
            (options { $0.durableCheckpointInterval = .nan }, .durableCheckpointInterval),
            (options { $0.headers = ["no colon"] }, .headers),
            (options { $0.redirectSchemes = ["https", "ftp"] }, .redirectSchemes),
            (options { $0.userAgent = "two\r\nlines" }, .userAgent),
        ] as [(DownloadOptions, BraidError.Option)]
    )
    func refusedOption(options: DownloadOptions, option: BraidError.Option) {
        let error = #expect(throws: BraidError.self) { try options.validate() }
        #expect(error?.code == .usage)
        #expect(error?.option == option)
        #expect(!Self.namesAFlag(error?.message ?? "--"), "\(error?.message ?? "")")
    }

    @Test("A CA certificate path longer than libcurl takes is refused as that option")
    func refusedCertificatePath() {
        let options = Self.options { $0.caCertificatePath = String(repeating: "x", count: 8_000_001) }
        let error = #expect(throws: BraidError.self) { try options.validate() }
        #expect(error?.option == .caCertificatePath)
        #expect(!Self.namesAFlag(error?.message ?? "--"), "\(error?.message ?? "")")
    }

    @Test(
        "A malformed checksum is a refused expected digest, in words without a flag",
        arguments: ["0123456789abcdef0123456789abcdef", "crc32=00000000", "sha-256=abc"]
    )
    func refusedChecksum(text: String) {
        let error = #expect(throws: BraidError.self) { try ExpectedDigest(checksumArgument: text) }
        #expect(error?.option == .expectedDigest)
        #expect(!Self.namesAFlag(error?.message ?? "--"), "\(error?.message ?? "")")
    }

    @Test("Opening a partial file in a missing directory keeps ENOENT as the cause")
    func missingDirectoryKeepsErrno() {
        let error = #expect(throws: BraidError.self) {
            try PartFile(lockingAt: FilePath(self.directory.file("missing/file.part")))
        }
        #expect(error?.code == .localIO)
        #expect(error?.cause == .errno(.noSuchFileOrDirectory))
        #expect(error?.cause?.errno == .noSuchFileOrDirectory)
        #expect(error?.cause?.curlCode == nil)
        #expect(error?.message.contains("no such file or directory") == true, "\(error?.message ?? "")")
    }

    @Test("A destination directory that cannot be created is refused with its errno")
    func uncreatableDestinationDirectory() throws {
        // A regular file where a directory would have to be created.
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory.file("plain")))
        let error = #expect(throws: BraidError.self) {
            let place = try DestinationPaths.resolve(
                .directory(self.directory.file("plain/sub")), suggestedFilename: nil, url: "http://h/f")
            _ = try DestinationPaths.open(place, creating: true)
        }
        #expect(error?.code == .localIO)
        #expect(error?.cause?.errno == .notDirectory)
    }

    @Test("A second lock on the same partial file says who holds it and keeps EWOULDBLOCK as the cause")
    func lockedPartFile() throws {
        let path = FilePath(directory.file("file.part"))
        let first = try PartFile(lockingAt: path)
        defer { first.close() }
        let error = #expect(throws: BraidError.self) { try PartFile(lockingAt: path) }
        #expect(error?.code == .localIO)
        #expect(error?.cause?.errno == .wouldBlock)
        #expect(error?.message.contains("another download of the same file in this process") == true)
    }

    @Test("A file that appeared at the final name is kept: exit-8 domain, EEXIST underneath, overwrite would help")
    func fileAppearedAtFinalName() throws {
        let paths = DestinationPaths(final: AnchoredPath(FilePath(directory.file("file.iso"))))
        try Data("downloaded".utf8).write(to: URL(fileURLWithPath: paths.part.path.string))
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: paths.final.path.string))

        let error = #expect(throws: BraidError.self) { try paths.moveIntoPlace(replacing: false) }

        #expect(error?.code == .fileExists)
        #expect(error?.remedies == [.overwrite])
        #expect(error?.cause?.errno == .fileExists)
        #expect(!Self.namesAFlag(error?.message ?? "--"), "\(error?.message ?? "")")
        #expect(try Data(contentsOf: URL(fileURLWithPath: paths.final.path.string)) == Data("someone else's".utf8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: paths.part.path.string)) == Data("downloaded".utf8))

        try paths.moveIntoPlace(replacing: true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: paths.final.path.string)) == Data("downloaded".utf8))
        #expect(try directory.contents() == ["file.iso"])
    }

    @Test("A cause says what it is")
    func causeDescription() {
        #expect(BraidError.Cause.errno(.noSpace).description == "errno \(ENOSPC) (\(Errno.noSpace))")
        #expect(BraidError.Cause.curl(code: 60).curlCode == 60)
        #expect(BraidError.Cause.curl(code: 60).errno == nil)
        #expect(BraidError.Option.maximumAttempts.description == "DownloadOptions.maximumAttempts")
        #expect(BraidError.Option.repeats.description == "BenchSchedule.repeats")
    }
}
