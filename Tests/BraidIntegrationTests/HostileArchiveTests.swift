import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Archives built to write outside the directory they are unpacked into, or to fill the disk: every such entry is
/// refused (the run ends with exit 1 and says which), or the archive is (exit 6), and nothing is written outside.
@Suite("hostile archives", .serialized)
struct HostileArchiveTests {
    /// Writes a tar at `path` with Python's tarfile, which writes any name, link or type it is given.
    static func makeHostileTar(at path: String, absoluteTarget: String) async throws {
        let script = """
            import io, sys, tarfile
            out = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
            def add(name, data=b"evil\\n", mode=0o644, **fields):
                info = tarfile.TarInfo(name)
                info.mode = mode
                for key, value in fields.items(): setattr(info, key, value)
                if info.type == tarfile.REGTYPE:
                    info.size = len(data)
                    out.addfile(info, io.BytesIO(data))
                else:
                    out.addfile(info)
            add("good.txt", b"good\\n")
            add("sub/", type=tarfile.DIRTYPE, mode=0o755)
            add("../dotdot.txt")
            add("sub/../../dotdot-inner.txt")
            add(sys.argv[2])
            add("escape", type=tarfile.SYMTYPE, linkname="../outside")
            add("absolute-link", type=tarfile.SYMTYPE, linkname="/etc")
            add("sub/climb", type=tarfile.SYMTYPE, linkname="../..")
            add("inside", type=tarfile.SYMTYPE, linkname="sub")
            add("inside/through-link.txt")
            add("planted/through-planted.txt")
            add("hard-out", type=tarfile.LNKTYPE, linkname="../outside/secret.txt")
            add("hard-etc", type=tarfile.LNKTYPE, linkname="/etc/passwd")
            add("hard-good", type=tarfile.LNKTYPE, linkname="good.txt")
            add("device", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
            add("fifo", type=tarfile.FIFOTYPE)
            add("setuid", b"#!/bin/sh\\n", mode=0o6755)
            out.close()
            """
        let done = try await ChildProcess.run("/usr/bin/python3", ["-c", script, path, absoluteTarget])
        #expect(done.status == .exited(0), "\(done.standardError)")
    }

    @Test("Names out, links out, files through links, hard links out, devices: refused; nothing written outside")
    func refusedEntries() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-hostile")
        defer { directory.remove() }
        let root = directory.url.path
        let www = root + "/www"
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/outside", withIntermediateDirectories: true)
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: root + "/outside/secret.txt"))
        // A link planted in the directory before the run, leading out of it.
        try FileManager.default.createDirectory(atPath: root + "/out", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/out/planted", withDestinationPath: "../outside")
        let absolute = root + "/absolute/evil.txt"
        try await Self.makeHostileTar(at: www + "/hostile.tar", absoluteTarget: absolute)
        let outsideBefore = TreeSnapshot(of: root + "/outside")
        let nginx = try await NginxFixture.start(.init(documentRoot: URL(fileURLWithPath: www)))
        defer { nginx.shutdown() }

        let run = try await BraidCLI.run([
            nginx.url("/hostile.tar"), "--extract", root + "/out", "-d", root + "/state",
        ])
        #expect(run.status == .exited(1), "\(run.standardError)")
        #expect(run.standardError.contains("entries of the archive were refused"), "\(run.standardError)")
        for name in [
            "../dotdot.txt", "sub/../../dotdot-inner.txt", absolute, "escape", "absolute-link", "sub/climb",
            "inside/through-link.txt", "planted/through-planted.txt", "hard-out", "hard-etc", "device", "fifo",
        ] {
            #expect(run.standardError.contains("refused '\(name)'"), "no refusal of \(name): \(run.standardError)")
        }
        // Nothing outside the directory, nothing through the planted link.
        #expect(TreeSnapshot(of: root + "/outside") == outsideBefore)
        #expect(!FileManager.default.fileExists(atPath: root + "/absolute"))
        #expect(!FileManager.default.fileExists(atPath: root + "/dotdot.txt"))
        #expect(!FileManager.default.fileExists(atPath: directory.url.deletingLastPathComponent().path + "/dotdot.txt"))
        let top = try FileManager.default.contentsOfDirectory(atPath: root).sorted()
        #expect(top == ["out", "outside", "state", "www"], "\(top)")
        // What was allowed: plain files, an inside link, a hard link to an entry, setuid and setgid dropped.
        let tree = TreeSnapshot(of: root + "/out")
        #expect(tree.nodes["good.txt"] == .file(mode: 0o644, contents: Data("good\n".utf8)))
        #expect(tree.nodes["hard-good"] == .file(mode: 0o644, contents: Data("good\n".utf8)))
        #expect(tree.nodes["inside"] == .link(target: "sub"))
        #expect(tree.nodes["setuid"] == .file(mode: 0o755, contents: Data("#!/bin/sh\n".utf8)))
        #expect(tree.nodes["planted"] == .link(target: "../outside"), "the planted link is left alone")
        let names = Set(tree.nodes.keys)
        #expect(names == ["good.txt", "sub", "hard-good", "inside", "setuid", "planted"], "\(tree)")
    }

    @Test("A 10 GB sparse file declared in an archive of a few kilobytes is refused before it is written")
    func sparseBomb() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-bomb")
        defer { directory.remove() }
        let root = directory.url.path
        try FileManager.default.createDirectory(atPath: root + "/www", withIntermediateDirectories: true)
        try await ExtractTests.shell(
            "cd '\(root)' && truncate -s 10G big && printf data >> big && tar --sparse -cf www/bomb.tar big && rm big")
        let archive = try FileManager.default.attributesOfItem(atPath: root + "/www/bomb.tar")[.size] as! Int
        #expect(archive < 1 << 20, "the bomb is \(archive) bytes")
        let nginx = try await NginxFixture.start(.init(documentRoot: URL(fileURLWithPath: root + "/www")))
        defer { nginx.shutdown() }

        let run = try await BraidCLI.run([nginx.url("/bomb.tar"), "--extract", root + "/out", "-d", root + "/state"])
        #expect(run.status == .exited(6), "\(run.standardError)")
        #expect(run.standardError.contains("decompression bomb"), "\(run.standardError)")
        #expect(run.standardError.contains("--max-unpacked"), "\(run.standardError)")
        let unpacked = (try? FileManager.default.contentsOfDirectory(atPath: root + "/out")) ?? []
        #expect(unpacked.isEmpty, "written: \(unpacked)")
    }
}
