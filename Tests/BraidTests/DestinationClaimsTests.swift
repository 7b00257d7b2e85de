import SystemPackage
import Testing

@testable import Braid

/// The paths a manager keeps from its downloads (a daemon's session file): no download may write one, as its final
/// name or as any of its own companions.
@Suite("destination claims")
struct DestinationClaimsTests {
    @Test("A reserved path is refused as a final name, and as the partial file, manifest or its temporaries of one")
    func reserved() {
        let claims = DestinationClaims()
        claims.reserve("/d/session", for: "the session")
        claims.reserve("/d/other.part", for: "another file")
        #expect(claims.reservation(of: "/d/session") == "the session")
        #expect(claims.reservation(of: "/d/sub/../session") == "the session")
        #expect(claims.reservation(of: "/d/other") == "another file")
        #expect(claims.reservation(of: "/d/sessions") == nil)
        #expect(claims.claim("/d/session", for: "http://x/session", by: "line 1") == "the session")
        #expect(claims.claim("/d/free", for: "http://x/free", by: "line 2") == nil)
    }

    @Test(
        "A download's own files are claimed with it: no other download's final path may be one, in either order",
        arguments: [".part", ".braid", ".braid.tmp", ".braid.reserve"])
    func ownFiles(suffix: String) {
        let claims = DestinationClaims()
        #expect(claims.claim("/d/big.iso", for: "http://x/big.iso", by: "line 1") == nil)
        #expect(
            claims.claim(FilePath("/d/big.iso" + suffix), for: "http://evil/a", by: "line 2")
                == "line 1, as its \(suffix) file")
        #expect(
            claims.claim(FilePath("/d/./big.iso" + suffix), for: "http://evil/b", by: "line 3")?.hasPrefix("line 1")
                == true)

        let reversed = DestinationClaims()
        #expect(reversed.claim(FilePath("/d/big.iso" + suffix), for: "http://evil/a", by: "line 1") == nil)
        #expect(
            reversed.claim("/d/big.iso", for: "http://x/big.iso", by: "line 2")
                == "line 1, whose file would be this one's \(suffix) file")
        #expect(reversed.claim("/d/big", for: "http://x/big", by: "line 3") == nil)
        #expect(reversed.claim("/d/other/big.iso", for: "http://x/big.iso", by: "line 4") == nil)
    }

    @Test("A released claim frees its path, and only the claims of that URL and label")
    func release() {
        let claims = DestinationClaims()
        #expect(claims.claim("/d/a.bin", for: "http://x/a", by: "gid1") == nil)
        #expect(claims.claim("/d/b.bin.part", for: "http://x/b", by: "gid2") == nil)
        claims.release(for: "http://x/a", by: "gid1")
        #expect(claims.claim("/d/a.bin", for: "http://y/a", by: "gid3") == nil)
        #expect(claims.claim("/d/b.bin", for: "http://y/b", by: "gid4")?.hasPrefix("gid2") == true)
        claims.release(for: "http://x/b", by: "gid2")
        #expect(claims.claim("/d/b.bin", for: "http://y/b", by: "gid4") == nil)
        #expect(!claims.isClaimed("/d/b.bin.part"))
    }

    @Test("Names that only look alike are not each other's files")
    func lookAlikes() {
        let claims = DestinationClaims()
        #expect(claims.claim("/d/a.bin", for: "http://x/1", by: "line 1") == nil)
        #expect(claims.claim("/d/a.bin.parts", for: "http://x/2", by: "line 2") == nil)
        #expect(claims.claim("/d/a.bin.brai", for: "http://x/3", by: "line 3") == nil)
        #expect(claims.claim("/d/a.bi", for: "http://x/4", by: "line 4") == nil)
        #expect(claims.claim("/d/.part", for: "http://x/5", by: "line 5") == nil)
        // The same URL claims its path again, as a retry does.
        #expect(claims.claim("/d/a.bin", for: "http://x/1", by: "line 1") == nil)
    }

    @Test("A manager answers for the paths it keeps, spelled as its downloads' are")
    func manager() {
        let manager = DownloadManager()
        manager.reserve("/d/.braid-session", for: "the daemon's session file")
        #expect(manager.reservation(ofDestination: "/d/.braid-session") == "the daemon's session file")
        #expect(manager.reservation(ofDestination: "/d/./.braid-session") == "the daemon's session file")
        #expect(manager.reservation(ofDestination: "/d/file.bin") == nil)
    }
}
