import BraidTestSupport
import Foundation
import SystemPackage
import Testing

@testable import Braid

/// The file where `-n auto` remembers what it learned of each server.
@Suite("ServerStats")
struct ServerStatsTests {
    static let origin = Origin(url: "http://127.0.0.1:8080/a/file.iso")!
    static let other = Origin(url: "https://mirror.example/file.iso")!

    static func withStats(_ body: (ServerStats, TemporaryDirectory) throws -> Void) throws {
        let directory = try TemporaryDirectory(prefix: "braid-stats")
        defer { directory.remove() }
        try body(ServerStats(path: FilePath(directory.appending("state/braid/server-stats.json").path)), directory)
    }

    @Test("what is recorded for an origin is found again, one entry per origin, in a private file and directory")
    func recordsAndFinds() throws {
        try Self.withStats { stats, _ in
            #expect(stats.entry(for: Self.origin, now: 1000) == nil, "no file yet")
            try stats.record(.init(connections: 24, refused: false), for: Self.origin, now: 1000)
            try stats.record(.init(connections: 6, refused: true), for: Self.other, now: 1001)
            try stats.record(.init(connections: 32, refused: false), for: Self.origin, now: 1002)
            let entry = try #require(stats.entry(for: Self.origin, now: 1003))
            #expect(entry == .init(origin: "http://127.0.0.1:8080", connections: 32, refused: false, time: 1002))
            #expect(stats.entry(for: Self.other, now: 1003)?.refused == true)
            let text = try String(contentsOfFile: stats.path.string, encoding: .utf8)
            #expect(text.components(separatedBy: "127.0.0.1").count == 2, "one entry per origin: \(text)")
            let attributes = try FileManager.default.attributesOfItem(atPath: stats.path.string)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let directory = try FileManager.default.attributesOfItem(atPath: stats.path.removingLastComponent().string)
            #expect((directory[.posixPermissions] as? Int) == 0o700)
        }
    }

    @Test("an entry is forgotten after a week, and at most 256 entries (the newest) are kept")
    func forgets() throws {
        try Self.withStats { stats, _ in
            try stats.record(.init(connections: 24, refused: false), for: Self.origin, now: 0)
            #expect(stats.entry(for: Self.origin, now: 6 * 86_400) != nil)
            #expect(stats.entry(for: Self.origin, now: 8 * 86_400) == nil)
            for port in 1...300 {
                let origin = try #require(Origin(url: "http://127.0.0.1:\(port)/f"))
                try stats.record(.init(connections: 2, refused: false), for: origin, now: Double(100 + port))
            }
            #expect(stats.entry(for: try #require(Origin(url: "http://127.0.0.1:300/f")), now: 500) != nil)
            #expect(stats.entry(for: try #require(Origin(url: "http://127.0.0.1:44/f")), now: 500) == nil)
            #expect(stats.entry(for: try #require(Origin(url: "http://127.0.0.1:45/f")), now: 500) != nil)
        }
    }

    @Test(
        "a file that is not one of these, or holds absurd numbers, counts as empty and is replaced",
        arguments: [
            "not json", "{\"version\":2,\"servers\":[]}",
            "{\"version\":1,\"servers\":[{\"origin\":\"http://127.0.0.1:8080\",\"connections\":100000,"
                + "\"refused\":false,\"time\":1000}]}",
            "{\"version\":1,\"servers\":[{\"origin\":\"http://127.0.0.1:8080\",\"connections\":8,"
                + "\"refused\":false,\"time\":1e300}]}",
        ])
    func foreignFile(text: String) throws {
        try Self.withStats { stats, _ in
            try FileManager.default.createDirectory(
                atPath: stats.path.removingLastComponent().string, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: stats.path.string))
            #expect(stats.entry(for: Self.origin, now: 1001) == nil)
            try stats.record(.init(connections: 4, refused: false), for: Self.origin, now: 1001)
            #expect(stats.entry(for: Self.origin, now: 1002)?.connections == 4)
        }
    }

    @Test("a link at the file's name is neither followed to read nor written through")
    func link() throws {
        try Self.withStats { stats, directory in
            let target = directory.appending("elsewhere.json").path
            let valid =
                "{\"version\":1,\"servers\":[{\"origin\":\"http://127.0.0.1:8080\",\"connections\":8,"
                + "\"refused\":false,\"time\":1000}]}"
            try Data(valid.utf8).write(to: URL(fileURLWithPath: target))
            try FileManager.default.createDirectory(
                atPath: stats.path.removingLastComponent().string, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: stats.path.string, withDestinationPath: target)
            #expect(stats.entry(for: Self.origin, now: 1001) == nil)
            try stats.record(.init(connections: 4, refused: false), for: Self.origin, now: 1001)
            #expect(try String(contentsOfFile: target, encoding: .utf8) == valid, "the link's target is untouched")
            #expect(stats.entry(for: Self.origin, now: 1002)?.connections == 4, "the link was replaced by a file")
        }
    }
}
