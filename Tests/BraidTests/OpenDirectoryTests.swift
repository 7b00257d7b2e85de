import Foundation
import SystemPackage
import Testing

@testable import Braid

/// Directories a server, a document or a client named are opened below the user's without following links, and a
/// download's files are named in the directory held open: a link planted on the way, before or after the check,
/// never leads a write outside.
@Suite("OpenDirectory")
final class OpenDirectoryTests {
    /// The download directory, and a directory beside it that nothing may be written into.
    let root: ScratchDirectory
    let outside: ScratchDirectory

    init() throws {
        root = try ScratchDirectory()
        outside = try ScratchDirectory()
    }

    func name(_ text: String) throws -> SafeName { try SafeName(validating: text) }

    func link(_ name: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: root.file(name), withDestinationPath: target)
    }

    func read(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    func write(_ text: String, to file: AnchoredPath) throws {
        let descriptor = try file.open(.writeOnly, options: [.create, .exclusiveCreate])
        try descriptor.closeAfter { _ = try descriptor.writeAll(Array(text.utf8)) }
    }

    @Test("Missing directories are made one by one below the root; existing ones are opened")
    func makesMissing() throws {
        let top = try OpenDirectory(opening: FilePath(root.path))
        let made = try top.descend(into: [try name("a"), try name("b")], creating: true)
        #expect(made.path == FilePath(root.path).appending("a/b"))
        try write("x", to: AnchoredPath("f", in: made))
        #expect(try read(root.file("a/b/f")) == "x")
        let again = try top.descend(into: [try name("a"), try name("b")], creating: false)
        #expect(AnchoredPath("f", in: again).exists)
        #expect(throws: Errno.noSuchFileOrDirectory) { try top.descend(into: self.name("missing"), creating: false) }
    }

    @Test("A link where a directory is to be is refused, not followed, and nothing is made where it points")
    func refusesLink() throws {
        try link("sub", to: outside.path)
        let top = try OpenDirectory(opening: FilePath(root.path))
        for creating in [false, true] {
            #expect(throws: Errno.tooManySymbolicLinkLevels) {
                try top.descend(into: [self.name("sub"), self.name("deeper")], creating: creating)
            }
        }
        try link("dangling", to: outside.file("not-yet"))
        #expect(throws: Errno.tooManySymbolicLinkLevels) {
            try top.descend(into: self.name("dangling"), creating: true)
        }
        #expect(try outside.contents().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: outside.file("not-yet")))
    }

    @Test("A directory made for a flushed file is made durable in the one above as it is made; one found is not")
    func madeDurable() throws {
        let top = try OpenDirectory(opening: FilePath(root.path))
        let a = try top.descend(into: name("a"), creating: true, synchronizing: true)
        let b = try a.descend(into: name("b"), creating: true, synchronizing: true)
        #expect(top.synchronizations == 1, "a's name in the top")
        #expect(a.synchronizations == 1, "b's name in a")
        #expect(b.synchronizations == 0, "nothing was made in b")
        let again = try top.descend(into: [try name("a"), try name("b")], creating: true, synchronizing: true)
        #expect(top.synchronizations == 1, "found, not made: nothing to sync")
        #expect(again.synchronizations == 0)
        _ = try top.descend(into: name("c"), creating: true)
        #expect(top.synchronizations == 1, "made for a file not flushed")
        #expect(FileManager.default.fileExists(atPath: root.file("a/b")))
        #expect(FileManager.default.fileExists(atPath: root.file("c")))
    }

    @Test("A file where a directory is to be is not a directory")
    func refusesFile() throws {
        try Data("x".utf8).write(to: URL(fileURLWithPath: root.file("plain")))
        let top = try OpenDirectory(opening: FilePath(root.path))
        #expect(throws: Errno.notDirectory) { try top.descend(into: self.name("plain"), creating: true) }
    }

    @Test("The user's own directory is reached through a link, as any program reaches it")
    func followsUsersLink() throws {
        try link("mine", to: outside.path)
        let top = try OpenDirectory(opening: FilePath(root.file("mine")))
        try write("x", to: AnchoredPath("f", in: top))
        #expect(try read(outside.file("f")) == "x")
    }

    @Test("A directory swapped for a link after it was opened: the files stay in the directory held open")
    func swappedAfterOpening() throws {
        let top = try OpenDirectory(opening: FilePath(root.path))
        let sub = try top.descend(into: name("sub"), creating: true)
        // What a hostile local user does between Braid's check and its writes.
        try FileManager.default.moveItem(atPath: root.file("sub"), toPath: root.file("moved"))
        try link("sub", to: outside.path)

        let part = AnchoredPath("f.part", in: sub)
        try write("data", to: part)
        try part.rename(to: AnchoredPath("f", in: sub), replacing: false)
        sub.synchronize()

        #expect(try read(root.file("moved/f")) == "data")
        #expect(try outside.contents().isEmpty)
    }

    @Test("A component swapped for a link in the middle of a walk is refused at that component")
    func swappedMidWalk() throws {
        let top = try OpenDirectory(opening: FilePath(root.path))
        let a = try top.descend(into: name("a"), creating: true)
        _ = try a.descend(into: name("b"), creating: true)
        // Between one step of the walk and the next, b becomes a link out.
        try FileManager.default.removeItem(atPath: root.file("a/b"))
        try link("a/b", to: outside.path)
        #expect(throws: Errno.tooManySymbolicLinkLevels) {
            try a.descend(into: [self.name("b"), self.name("c")], creating: true)
        }
        // And a itself moved away: the walk goes on in the directory held open, not in whatever is at a now.
        try FileManager.default.moveItem(atPath: root.file("a"), toPath: root.file("a-moved"))
        try link("a", to: outside.path)
        let c = try a.descend(into: name("c"), creating: true)
        try write("x", to: AnchoredPath("f", in: c))
        #expect(try read(root.file("a-moved/c/f")) == "x")
        #expect(try outside.contents().isEmpty)
    }

    @Test("A download's place below a directory with a link in it is refused with a clear error, before any write")
    func destinationRefusesLink() throws {
        try link("sub", to: outside.path)
        let place = try DestinationPaths.resolve(
            .below(root.path, subdirectory: "sub/deeper", name: "f.bin"), suggestedFilename: nil, url: "http://h/f")
        let error = #expect(throws: BraidError.self) { try DestinationPaths.open(place, creating: true) }
        #expect(error?.code == .localIO)
        #expect(error?.message.contains("\(root.file("sub")) is a symbolic link") == true, "\(error?.message ?? "")")
        #expect(try outside.contents().isEmpty)
    }
}
