import Testing

@testable import Braid

/// Where an archive entry goes below the extraction directory, and which links stay inside it.
@Suite("ArchiveMember")
struct ArchiveMemberTests {
    static func path(_ name: String) -> String? {
        (try? ArchiveMember.path(name)).map(SafeName.joined)
    }

    @Test("tar's ./ and empty components are dropped; the directory itself is an empty path")
    func normalises() {
        #expect(Self.path("./a//b/") == "a/b")
        #expect(Self.path("./") == "")
        #expect(Self.path("a/./b") == "a/b")
    }

    @Test("Absolute names and .. components are refused; other names are made safe as every name from outside")
    func refusesOrSanitises() {
        #expect(Self.path("/etc/passwd") == nil)
        #expect(Self.path("../x") == nil)
        #expect(Self.path("a/../../x") == nil)
        #expect(Self.path("a/b\u{202E}c") == "a/bc")
        #expect(Self.path("-rf") == "_-rf")
    }

    @Test("A link stays inside when its .. climb no higher than its own directory, all before any name")
    func linkContainment() throws {
        let deep = try ArchiveMember.path("a/b/link")
        #expect(ArchiveMember.linkStaysInside(at: deep, target: "../../x"))
        #expect(ArchiveMember.linkStaysInside(at: deep, target: "./c/d"))
        #expect(!ArchiveMember.linkStaysInside(at: deep, target: "../../../x"))
        #expect(!ArchiveMember.linkStaysInside(at: deep, target: "c/../../../../x"), "a .. after a name")
        #expect(!ArchiveMember.linkStaysInside(at: deep, target: "c/.."), "a .. after a name, even inside")
        #expect(!ArchiveMember.linkStaysInside(at: deep, target: "/etc"))
        #expect(!ArchiveMember.linkStaysInside(at: deep, target: ""))
        #expect(!ArchiveMember.linkStaysInside(at: try ArchiveMember.path("top"), target: ".."))
    }
}
