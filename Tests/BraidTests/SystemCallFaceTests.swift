import Foundation
import SystemPackage
import Testing

@testable import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// The typed face of the system calls swift-system lacks: each throws the `Errno` the kernel gave, and an
/// interrupted call is run again in one place.
@Suite("System call face")
final class SystemCallFaceTests {
    let directory: ScratchDirectory

    init() throws {
        directory = try ScratchDirectory()
    }

    func path(_ name: String) -> AnchoredPath { AnchoredPath(FilePath(directory.file(name))) }

    func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory.file(name)))
    }

    func read(_ name: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: directory.file(name))), as: UTF8.self)
    }

    @Test("A call that fails with EINTR is run again until it gives an answer")
    func retriesInterruptedCalls() throws {
        var calls = 0
        let result = try Errno.check { () -> Int32 in
            calls += 1
            guard calls == 3 else {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7)
        #expect(calls == 3)
    }

    @Test("Without retryOnInterrupt, EINTR is thrown like any other errno")
    func throwsInterruptedWhenAsked() {
        var calls = 0
        #expect(throws: Errno.interrupted) {
            try Errno.check(retryOnInterrupt: false) { () -> Int32 in
                calls += 1
                errno = EINTR
                return -1
            }
        }
        #expect(calls == 1)
    }

    @Test("Renaming without replacing refuses an existing target with EEXIST and leaves both files as they were")
    func renameRefusesExistingTarget() throws {
        try write("new", to: "source")
        try write("old", to: "target")
        #expect(throws: Errno.fileExists) { try self.path("source").rename(to: self.path("target"), replacing: false) }
        #expect(try read("source") == "new")
        #expect(try read("target") == "old")
    }

    @Test("Renaming without replacing moves the file when nothing is at the target; replacing, over one")
    func renameMoves() throws {
        try write("first", to: "source")
        try path("source").rename(to: path("target"), replacing: false)
        try write("second", to: "source")
        try path("source").rename(to: path("target"), replacing: true)
        #expect(try directory.contents() == ["target"])
        #expect(try read("target") == "second")
    }

    @Test("A hard link never replaces a file at its name")
    func linkRefusesExistingTarget() throws {
        try write("new", to: "source")
        try write("old", to: "target")
        #expect(throws: Errno.fileExists) { try self.path("source").link(at: self.path("target")) }
        #expect(try read("target") == "old")
    }

    @Test("unlink removes a symbolic link itself, not what it points to, and says when nothing is there")
    func unlinkRemovesLinkItself() throws {
        try write("kept", to: "target")
        #expect(symlink(directory.file("target"), directory.file("link")) == 0)
        try path("link").unlink()
        #expect(try directory.contents() == ["target"])
        #expect(throws: Errno.noSuchFileOrDirectory) { try self.path("link").unlink() }
    }

    @Test("Braid's own files are never opened through a symbolic link, and are created private")
    func openWithoutFollowing() throws {
        #expect(symlink(directory.file("victim"), directory.file("link")) == 0)
        #expect(throws: Errno.tooManySymbolicLinkLevels) {
            try self.path("link").open(.readWrite, options: .create)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("victim")), "nothing was created through it")

        let file = try path("own").open(.readWrite, options: .create)
        defer { try? file.close() }
        #expect(try file.stat().permissions == .ownerReadWrite)
    }

    @Test("An exclusive lock refuses a second open file description with EWOULDBLOCK until the first is closed")
    func lockIsExclusive() throws {
        let first = try path("locked").open(.readWrite, options: .create)
        let second = try path("locked").open(.readWrite)
        defer { try? second.close() }
        try first.lockExclusively()
        #expect(throws: Errno.wouldBlock) { try second.lockExclusively() }
        try first.close()
        // A child process another test starts meanwhile keeps a copy of `first` until it execs, and with it the
        // lock (see `PartFile`): on a loaded machine that lasts a while, so the lock is waited for, within a bound.
        var waits = 0
        while (try? second.lockExclusively()) == nil, waits < 3_000 {
            waits += 1
            usleep(10_000)
        }
        try second.lockExclusively()
    }

    @Test("Permissions are set through the descriptor")
    func setPermissions() throws {
        let file = try path("file").open(.readWrite, options: .create)
        defer { try? file.close() }
        try file.setPermissions([.ownerReadWrite, .groupRead])
        #expect(try path("file").status().permissions == [.ownerReadWrite, .groupRead])
    }

    @Test("Allocation gives the file its length")
    func allocate() throws {
        let file = try path("file").open(.readWrite, options: .create)
        defer { try? file.close() }
        try file.allocate(length: 64 << 10)
        #expect(try file.stat().size == 64 << 10)
    }

    @Test("Syncing and write-back say what the kernel said: EBADF for no file, ESPIPE for a pipe")
    func syncErrorsAreTyped() throws {
        #expect(throws: Errno.badFileDescriptor) { try FileDescriptor(rawValue: -1).synchronize() }
        #expect(throws: Errno.badFileDescriptor) {
            try FileDescriptor(rawValue: -1).synchronize(includingMetadata: true)
        }
        let pipe = try FileDescriptor.pipe()
        defer {
            try? pipe.readEnd.close()
            try? pipe.writeEnd.close()
        }
        #expect(throws: Errno.illegalSeek) { try pipe.writeEnd.startWriteBack(of: 0..<4096) }
    }

    @Test("A directory Braid cannot write into is told apart by its errno")
    func accessIsChecked() throws {
        try FilePath(directory.file("")).checkWriteAndSearchAccess()
        #expect(throws: Errno.noSuchFileOrDirectory) {
            try FilePath(self.directory.file("missing")).checkWriteAndSearchAccess()
        }
    }
}
