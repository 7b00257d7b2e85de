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

    @Test("a kept directory looked at often enough is listed once, and the listing says which names are there")
    func listing() throws {
        let scratch = try ScratchDirectory()
        FileManager.default.createFile(atPath: scratch.path + "/here.bin", contents: Data())
        FileManager.default.createFile(atPath: scratch.path + "/half.bin.part", contents: Data())
        let directories = OpenDirectories()
        let path = FilePath(scratch.path)
        let directory = directories.keep(try OpenDirectory(opening: path), at: path)
        // Too few looks to be worth a listing: each name is looked up.
        for _ in 1..<OpenDirectories.looksBeforeListing {
            #expect(directories.lacksAll(["new.bin"], in: directory) == nil)
        }
        #expect(directories.lacksAll(["new.bin", "new.bin.part"], in: directory) == true)
        #expect(directories.lacksAll(["here.bin.braid", "here.bin"], in: directory) == false)
        #expect(directories.lacksAll(["half.bin", "half.bin.part"], in: directory) == false)
        // A directory that is not the one kept (a subdirectory a document named) has no listing.
        let other = try OpenDirectory(opening: path)
        #expect(directories.lacksAll(["new.bin"], in: other) == nil)
    }

    @Test("a name made after the listing goes unseen while the listing lasts, and is seen by the next listing")
    func listingAgain() throws {
        let scratch = try ScratchDirectory()
        let path = FilePath(scratch.path)
        let lasting = OpenDirectories(listingLifetime: .seconds(3600))
        let kept = lasting.keep(try OpenDirectory(opening: path), at: path)
        let stale = OpenDirectories(listingLifetime: .zero)
        let keptStale = stale.keep(try OpenDirectory(opening: path), at: path)
        for _ in 1..<OpenDirectories.looksBeforeListing {
            _ = lasting.lacksAll(["late.bin"], in: kept)
            _ = stale.lacksAll(["late.bin"], in: keptStale)
        }
        #expect(lasting.lacksAll(["late.bin"], in: kept) == true)
        #expect(stale.lacksAll(["late.bin"], in: keptStale) == true)
        // Made by another program after both listings.
        FileManager.default.createFile(atPath: scratch.path + "/late.bin", contents: Data())
        #expect(lasting.lacksAll(["late.bin"], in: kept) == true, "the listing still answers")
        // A listing gone stale answers no more: the name is looked up until the directory is listed again.
        let answers = (1...OpenDirectories.looksBeforeListing).map { _ in stale.lacksAll(["late.bin"], in: keptStale) }
        #expect(answers.dropLast().allSatisfy { $0 == nil } && answers.last == false, "\(answers)")
    }

    @Test("a directory that holds more names than a listing keeps is not listed")
    func tooManyToList() throws {
        let scratch = try ScratchDirectory()
        for index in 0..<5 { FileManager.default.createFile(atPath: scratch.path + "/f\(index)", contents: Data()) }
        let directory = try OpenDirectory(opening: FilePath(scratch.path))
        #expect(DirectoryListing.read(directory, limit: 4) == nil)
        #expect(DirectoryListing.read(directory, limit: 5)?.names == Set((0..<5).map { "f\($0)" }))
    }
}
