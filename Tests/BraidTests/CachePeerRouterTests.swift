import Testing

@testable import Braid

/// The router is a pure value: which peer serves a slice at a given time, and how failures and refusals change
/// that. Three peers; slice 0's order is [2, 0, 1] (`RendezvousTests.knownWeights`).
@Suite("CachePeerRouter")
struct CachePeerRouterTests {
    static func router(sliceSize: Int64 = 100) -> CachePeerRouter {
        CachePeerRouter(
            resource: RendezvousTests.resource, sliceSize: sliceSize,
            peers: RendezvousTests.peers.enumerated().map { ($1, "http://cache-\($0 + 1):8080") })
    }

    @Test("A byte's slice is its offset divided by the slice size; the last slice ends with the file")
    func slices() {
        let router = Self.router()
        #expect(router.slice(containing: 0) == 0)
        #expect(router.slice(containing: 99) == 0)
        #expect(router.slice(containing: 100) == 1)
        #expect(router.sliceRange(containing: 250, totalLength: 260) == 200..<260)
        #expect(router.sliceRange(containing: 150, totalLength: 260) == 100..<200)
    }

    @Test(
        "A slice goes to the first peer of its order; a peer that is down gives it to the next until its wait is over")
    func downPeerGivesItsSlicesToTheNext() {
        var router = Self.router()
        #expect(router.route(offset: 0, now: 0) == 2)
        let result4932 = router.failed(2, now: 10)
        #expect(result4932 == 1)
        #expect(router.route(offset: 0, now: 10) == 0)
        #expect(router.route(offset: 0, now: 10.999) == 0)
        #expect(router.route(offset: 0, now: 11) == 2, "back on trial once its second is over")
    }

    @Test("Each failure in a row doubles the wait, up to a minute; a slice served forgets them")
    func backoffDoublesAndResets() {
        var router = Self.router()
        var now = 0.0
        var waits: [Double] = []
        for _ in 0..<9 {
            let wait = router.failed(1, now: now)
            waits.append(wait ?? -1)
            now += 100
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60, 60])
        router.served(by: 1)
        let result6570 = router.failed(1, now: now)
        #expect(result6570 == 1)
    }

    @Test("A failure of a request sent before the peer went down does not count again")
    func failuresWhileDownDoNotStack() {
        var router = Self.router()
        let result1352 = router.failed(0, now: 0)
        #expect(result1352 == 1)
        let result288 = router.failed(0, now: 0.5)
        #expect(result288 == nil)
        #expect(router.peers[0].failures == 1)
        let result4660 = router.failed(0, now: 1)
        #expect(result4660 == 2, "a failure once back on trial doubles the wait")
    }

    @Test("A skipped peer is final: never asked again, however much time passes or what it serves")
    func skippedIsFinal() {
        var router = Self.router()
        let result461 = router.skip(2, because: "another version")
        #expect(result461)
        let result8811 = router.skip(2, because: "again")
        #expect(!result8811)
        router.served(by: 2)
        let result9916 = router.failed(2, now: 0)
        #expect(result9916 == nil)
        #expect(router.route(offset: 0, now: 1_000_000) == 0)
        #expect(router.peers[2].state == .skipped(reason: "another version"))
    }

    @Test("With every peer down or skipped, the origin serves (nil)")
    func originWhenNoPeerIsLeft() {
        var router = Self.router()
        _ = router.skip(0, because: "another version")
        _ = router.failed(1, now: 0)
        _ = router.failed(2, now: 0)
        #expect(router.route(offset: 0, now: 0.5) == nil)
        #expect(router.route(offset: 0, now: 1) != nil)
    }
}
