import Foundation
import Synchronization
import SystemPackage
import Testing

@testable import Braid

/// A manager's flushed files read whole are flushed and named in batches (`NamingQueue`): every file is named with
/// its bytes, each told only once its name is there, and a name taken meanwhile fails that file alone and is left
/// as it was. Both ways of flushing a batch are run: its file system once, and each file on its own.
@Suite("naming queue")
struct NamingQueueTests {
    /// What the files' `done` closures were told, by name, and a wait for all of them.
    final class Told: Sendable {
        private let outcomes = Mutex<[String: Result<Void, NamingQueue.Failure>]>([:])
        /// Names that were not there, or not with their bytes, when their file was told it was named.
        let unnamedWhenTold = Mutex<[String]>([])

        func record(_ name: String, _ outcome: Result<Void, NamingQueue.Failure>) {
            outcomes.withLock { $0[name] = outcome }
        }

        /// Waits until `count` files were told (a poll bounded at 30 s, which a passing run never nears).
        func wait(for count: Int) -> [String: Result<Void, NamingQueue.Failure>] {
            let deadline = ContinuousClock.now + .seconds(30)
            while outcomes.withLock({ $0.count }) < count, ContinuousClock.now < deadline { usleep(1_000) }
            return outcomes.withLock { $0 }
        }
    }

    /// The bytes of file `index`, different for each.
    static func bytes(_ index: Int) -> [UInt8] {
        (0..<(1_000 + index * 37)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
    }

    /// Writes file `index` without a name in `directory` and adds it to `queue` as `name`.
    static func add(
        _ index: Int, named name: String, in directory: OpenDirectory, to queue: NamingQueue, told: Told,
        checking path: String
    ) throws {
        let file = try #require(try UnnamedFile.create(in: directory), "the file system makes unnamed files")
        let bytes = bytes(index)
        try bytes.withUnsafeBytes { try file.write($0) }
        queue.add(file, length: Int64(bytes.count), as: AnchoredPath(name, in: directory)) { outcome in
            if case .success = outcome, (try? Data(contentsOf: URL(fileURLWithPath: path))) != Data(bytes) {
                told.unnamedWhenTold.withLock { $0.append(name) }
            }
            told.record(name, outcome)
        }
    }

    @Test(
        "every file is named with its bytes, in two directories, each told once its name is there",
        arguments: [true, false])
    func namesEvery(flushingFileSystems: Bool) throws {
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.file("sub"), withIntermediateDirectories: false)
        let top = try OpenDirectory(opening: FilePath(scratch.path))
        // A small queue, so that adding waits for room and batches are several.
        let queue = NamingQueue(capacity: 8, drainers: 2, flushingFileSystems: flushingFileSystems)
        let told = Told()
        let count = 150
        for index in 0..<count {
            let inSub = index % 3 == 0
            let name = "f\(index)"
            // Each file below the top opens its directory afresh, as a list's files descend to theirs.
            let directory = inSub ? try top.descend(into: SafeName(validating: "sub"), creating: false) : top
            try Self.add(
                index, named: name, in: directory, to: queue, told: told,
                checking: scratch.file(inSub ? "sub/\(name)" : name))
        }
        let outcomes = told.wait(for: count)
        #expect(outcomes.count == count)
        let failed = outcomes.filter { (try? $0.value.get()) == nil }
        #expect(failed.isEmpty, "\(failed)")
        #expect(told.unnamedWhenTold.withLock { $0 }.isEmpty)
        for index in 0..<count {
            let path = scratch.file(index % 3 == 0 ? "sub/f\(index)" : "f\(index)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(Self.bytes(index)), "f\(index)")
        }
        #expect(try scratch.contents().count == count - count / 3 + 1, "the names and sub, nothing else")
    }

    @Test("a name taken meanwhile is left as it was, and only its file fails", arguments: [true, false])
    func nameTaken(flushingFileSystems: Bool) throws {
        let scratch = try ScratchDirectory()
        try Data("kept".utf8).write(to: URL(fileURLWithPath: scratch.file("f3")))
        let top = try OpenDirectory(opening: FilePath(scratch.path))
        let queue = NamingQueue(flushingFileSystems: flushingFileSystems)
        let told = Told()
        for index in 0..<6 {
            try Self.add(index, named: "f\(index)", in: top, to: queue, told: told, checking: scratch.file("f\(index)"))
        }
        let outcomes = told.wait(for: 6)
        if case let .failure(failure)? = outcomes["f3"] {
            #expect(failure == .name(.fileExists))
        } else {
            Issue.record("f3 was named over a file: \(String(describing: outcomes["f3"]))")
        }
        #expect(try String(contentsOfFile: scratch.file("f3"), encoding: .utf8) == "kept")
        for index in [0, 1, 2, 4, 5] {
            #expect((try? outcomes["f\(index)"]?.get()) != nil, "f\(index)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.file("f\(index)"))) == Data(Self.bytes(index)))
        }
        #expect(try scratch.contents() == ["f0", "f1", "f2", "f3", "f4", "f5"])
    }

    @Test("the error of a file that failed in the queue names the file, and a name taken says it was left alone")
    func errors() {
        let paths = DestinationPaths(final: AnchoredPath(FilePath("out/x.bin")))
        let taken = ReadWhole.error(of: .name(.fileExists), at: paths)
        #expect(taken.code == .fileExists)
        #expect(taken.message.contains("out/x.bin appeared while downloading and was left alone"))
        let flush = ReadWhole.error(of: .flush(.ioError), at: paths)
        #expect(flush.code == .localIO)
        #expect(flush.message.hasPrefix("syncing out/x.bin"))
        let named = ReadWhole.error(of: .name(.noSpace), at: paths)
        #expect(named.code == .localIO)
        #expect(named.message.hasPrefix("naming out/x.bin"))
    }
}
