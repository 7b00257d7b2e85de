import Foundation
import SystemPackage
import Testing

@testable import Braid

/// A manager's downloads check and open their user's directory once for all of them; what is particular to each
/// download is still checked for each.
@Suite("open directories")
struct OpenDirectoriesTests {
    @Test("the first directory opened is the one every later download uses")
    func keepsTheFirst() throws {
        let scratch = try ScratchDirectory()
        let directories = OpenDirectories()
        let path = FilePath(scratch.path)
        #expect(directories.opened(path) == nil)
        let first = try OpenDirectory(opening: path)
        let second = try OpenDirectory(opening: path)
        #expect(directories.keep(first, at: path) === first)
        #expect(directories.keep(second, at: path) === first, "opened at once by two: the first kept wins")
        let place = DestinationPaths.Place(directory: path, name: "f.bin")
        #expect(try DestinationPaths.open(place, creating: true, known: directories).final.directory === first)
    }

    @Test("a directory that fails its check is checked again, and a file destination is checked every time")
    func failedCheckAgain() throws {
        let scratch = try ScratchDirectory()
        let directories = OpenDirectories()
        // A regular file where the directory's parent should be: the directory cannot be made.
        let blocker = scratch.path + "/blocker"
        FileManager.default.createFile(atPath: blocker, contents: Data())
        let destination = DownloadOptions.Destination.directory(blocker + "/sub")
        #expect(throws: BraidError.self) { try directories.check(destination) }
        try FileManager.default.removeItem(atPath: blocker)
        try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: false)
        try directories.check(destination)
        // A directory given as the output file is refused although its directory was checked.
        try directories.check(.file(blocker + "/out.bin"))
        #expect(throws: BraidError.self) { try directories.check(.file(blocker)) }
    }
}
