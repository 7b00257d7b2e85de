import BraidTestSupport
import Foundation
import Testing

@testable import Braid

/// `--checksum-file`: `SHA256SUMS`/`MD5SUMS` in the GNU and BSD forms, and the line chosen by the saved file's name.
@Suite("ChecksumFile")
struct ChecksumFileTests {
    static let md5 = "900150983cd24fb0d6963f7d28e17f72"
    static let sha1 = "a9993e364706816aba3e25717850c26c9cd0d89d"
    static let sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    static let otherSHA256 = String(repeating: "ab", count: 32)

    func sums(_ contents: String) throws -> ChecksumFile {
        try ChecksumFile(path: "SUMS", contents: contents)
    }

    @Test("GNU lines: text and binary mode, the algorithm told by the length")
    func gnuLines() throws {
        let file = try sums("\(Self.sha256)  abc.iso\n\(Self.md5) *abc.tar\n\(Self.sha1)  abc.txt\n")
        let iso = try file.digest(for: "abc.iso")
        #expect(iso.algorithm == .sha256 && iso.hex == Self.sha256 && iso.source == .checksumFile)
        #expect(try file.digest(for: "abc.tar").algorithm == .md5)
        #expect(try file.digest(for: "abc.txt").algorithm == .sha1)
    }

    @Test("BSD tagged lines, as `shasum --tag` and `openssl dgst` write them")
    func bsdLines() throws {
        let file = try sums("SHA256 (abc.iso) = \(Self.sha256)\nMD5 (a (1).bin) = \(Self.md5)\r\n")
        #expect(try file.digest(for: "abc.iso").hex == Self.sha256)
        #expect(try file.digest(for: "a (1).bin").algorithm == .md5)
    }

    @Test("Names with spaces, GNU-escaped names, and ./ or dir/ prefixes")
    func names() throws {
        let file = try sums("\(Self.sha256)  my file.iso\n\\\(Self.md5)  back\\\\slash\n\(Self.sha1)  ./dist/x.bin\n")
        #expect(try file.digest(for: "my file.iso").algorithm == .sha256)
        #expect(try file.digest(for: "back\\slash").algorithm == .md5)
        #expect(try file.digest(for: "x.bin").algorithm == .sha1)
    }

    @Test("An exact name wins over a path ending in it; the strongest of several algorithms is used")
    func choice() throws {
        let file = try sums(
            "\(Self.otherSHA256)  old/x.bin\n\(Self.md5)  x.bin\n\(Self.sha256)  x.bin\n\(Self.sha1)  x.bin\n")
        let digest = try file.digest(for: "x.bin")
        #expect(digest.algorithm == .sha256 && digest.hex == Self.sha256)
    }

    @Test("A path below the directory: its own line, one ending in it, else the name alone; never another directory's")
    func paths() throws {
        let file = try sums(
            "\(Self.sha256)  ./onnx/model.bin\n\(Self.md5)  repo/text/config.json\n\(Self.otherSHA256)  vision/config.json\n"
                + "\(Self.sha1)  tokenizer.json\n")
        #expect(try file.digest(for: "onnx/model.bin").hex == Self.sha256)
        #expect(try file.digest(for: "text/config.json").algorithm == .md5)
        #expect(try file.digest(for: "vision/config.json").hex == Self.otherSHA256)
        // A checksum file made in the subdirectory names the file alone.
        #expect(try file.digest(for: "sub/tokenizer.json").algorithm == .sha1)
        // config.json of a third directory is none of the two lines'; the name alone is two of them, refused.
        let other = #expect(throws: BraidError.self) { try file.digest(for: "audio/config.json") }
        #expect(other?.message.contains("no line for audio/config.json") == true, "\(other?.message ?? "")")
        let ambiguous = try sums("\(Self.sha256)  text/config.json\n\(Self.otherSHA256)  vision/config.json\n")
        #expect(throws: BraidError.self) { try ambiguous.digest(for: "config.json") }
    }

    @Test("A manager's downloads read a checksum file once: later ones do not see it change")
    func readOnce() throws {
        let directory = try TemporaryDirectory(prefix: "braid-sums")
        defer { directory.remove() }
        let path = directory.appending("SHA256SUMS").path
        try "\(Self.sha256)  x.bin\n".write(toFile: path, atomically: true, encoding: .utf8)
        let files = ChecksumFiles()
        #expect(try files.file(at: path).digest(for: "x.bin").hex == Self.sha256)
        try FileManager.default.removeItem(atPath: path)
        #expect(try files.file(at: path).digest(for: "x.bin").hex == Self.sha256)
        #expect(throws: BraidError.self) { try ChecksumFiles().file(at: path) }
    }

    @Test("No line for the name is a usage error naming the file and the name")
    func missingName() throws {
        let file = try sums("\(Self.sha256)  other.iso\n")
        let error = #expect(throws: BraidError.self) { try file.digest(for: "abc.iso") }
        #expect(error?.code == .usage && error?.option == .checksumFile)
        #expect(error?.message.contains("abc.iso") == true && error?.message.contains("SUMS") == true)
    }

    @Test("Two different digests of one algorithm for a name are ambiguous; the same one twice is not")
    func ambiguous() throws {
        let conflicting = try sums("\(Self.sha256)  x.bin\n\(Self.otherSHA256)  x.bin\n")
        let error = #expect(throws: BraidError.self) { try conflicting.digest(for: "x.bin") }
        #expect(error?.code == .usage && error?.message.contains("different") == true)
        let repeated = try sums("\(Self.sha256)  x.bin\n\(Self.sha256) *x.bin\n")
        #expect(try repeated.digest(for: "x.bin").hex == Self.sha256)
    }

    @Test(
        "Lines that are not checksum lines are skipped; a file of none is a usage error",
        arguments: [
            "", "# comment\n", "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n", "\(md5)\n",
            "\(md5)x  name\n", "\(md5) name\n", "\(String(sha256.dropLast(2)))  name\n", "SHA384 (x) = \(sha256)\n",
            "SHA256 (x) = \(md5)\n",
        ])
    func noChecksumLines(contents: String) {
        let error = #expect(throws: BraidError.self) { try ChecksumFile(path: "SUMS", contents: contents) }
        #expect(error?.code == .usage && error?.option == .checksumFile)
    }

    @Test("A file that cannot be read is a usage error")
    func unreadable() {
        let error = #expect(throws: BraidError.self) { try ChecksumFile(readingAt: "/nonexistent/SHA256SUMS") }
        #expect(error?.code == .usage && error?.option == .checksumFile)
    }

    @Test("DownloadOptions.validate reads the file and, given the output name, checks that it has a line for it")
    func validation() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("braid-sums-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("SHA256SUMS").path
        try "\(Self.sha256)  abc.iso\n".write(toFile: path, atomically: true, encoding: .utf8)
        var options = DownloadOptions()
        options.checksumFile = path
        try options.validate()
        options.destination = .file(directory.appendingPathComponent("abc.iso").path)
        try options.validate()
        options.destination = .file(directory.appendingPathComponent("other.iso").path)
        let error = #expect(throws: BraidError.self) { try options.validate() }
        #expect(error?.code == .usage && error?.option == .checksumFile)
    }
}
