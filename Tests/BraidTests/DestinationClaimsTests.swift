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

    @Test("A manager answers for the paths it keeps, spelled as its downloads' are")
    func manager() {
        let manager = DownloadManager()
        manager.reserve("/d/.braid-session", for: "the daemon's session file")
        #expect(manager.reservation(ofDestination: "/d/.braid-session") == "the daemon's session file")
        #expect(manager.reservation(ofDestination: "/d/./.braid-session") == "the daemon's session file")
        #expect(manager.reservation(ofDestination: "/d/file.bin") == nil)
    }
}
