import Testing

@testable import Braid

/// Rendezvous hashing is what lets a fleet agree without talking: every host must compute the same weights, a
/// peer that leaves must move only its own slices, and the slices must spread evenly.
@Suite("Rendezvous")
struct RendezvousTests {
    static let peers = (1...3).map { "http://cache-\($0):8080/{scheme}/{host}{path}" }
    static let resource = "https://example.org/model.bin"

    @Test("The weights are the documented FNV-1a + SplitMix64 of peer, resource and slice, on every host")
    func knownWeights() {
        // Computed in Python from the formula in docs/design/cache-peers.md.
        #expect(Rendezvous.weight(peer: Self.peers[0], resource: Self.resource, slice: 0) == 0x2BED_1DA9_D241_B55E)
        #expect(Rendezvous.weight(peer: Self.peers[1], resource: Self.resource, slice: 0) == 0x16EA_02AD_026B_6AFF)
        #expect(Rendezvous.weight(peer: Self.peers[2], resource: Self.resource, slice: 0) == 0x9BEE_93B3_C469_3119)
        #expect(Rendezvous.weight(peer: Self.peers[0], resource: Self.resource, slice: 3) == 0x5DD0_55B8_1BF2_79AB)
        #expect(Rendezvous.order(peers: Self.peers, resource: Self.resource, slice: 0) == [2, 0, 1])
        #expect(Rendezvous.order(peers: Self.peers, resource: Self.resource, slice: 1) == [0, 2, 1])
        #expect(Rendezvous.order(peers: Self.peers, resource: Self.resource, slice: 3) == [0, 1, 2])
    }

    @Test("The peer of a slice does not depend on the order the peers are listed in")
    func orderOfTheListDoesNotMatter() {
        let reversed = Array(Self.peers.reversed())
        for slice in Int64(0)..<200 {
            let first = Self.peers[Rendezvous.order(peers: Self.peers, resource: Self.resource, slice: slice)[0]]
            let again = reversed[Rendezvous.order(peers: reversed, resource: Self.resource, slice: slice)[0]]
            #expect(first == again, "slice \(slice)")
        }
    }

    @Test("A peer that leaves moves only its own slices, each to the peer that came next in its order")
    func leavingMovesOnlyItsOwnSlices() {
        let peers = (1...5).map { "http://10.0.0.\($0):8080/{scheme}/{host}{path}" }
        let remaining = peers.filter { $0 != peers[2] }
        var moved = 0
        for slice in Int64(0)..<10_000 {
            let before = Rendezvous.order(peers: peers, resource: Self.resource, slice: slice).map { peers[$0] }
            let after = remaining[Rendezvous.order(peers: remaining, resource: Self.resource, slice: slice)[0]]
            if before[0] == peers[2] {
                moved += 1
                #expect(after == before[1], "slice \(slice) goes to its second choice")
            } else {
                #expect(after == before[0], "slice \(slice) stays where it was")
            }
        }
        #expect((1600...2400).contains(moved), "about a fifth of the slices were the leaving peer's: \(moved)")
    }

    @Test(
        "Slices spread evenly: each of 5 peers serves within 10% of a fifth of 10,000 slices",
        arguments: [
            "https://example.org/model.bin", "http://127.0.0.1:8080/file.bin",
        ])
    func evenSpread(resource: String) {
        let peers = (1...5).map { "http://cache-\($0).example:8080/{scheme}/{host}{path}" }
        var counts = [Int](repeating: 0, count: peers.count)
        for slice in Int64(0)..<10_000 {
            counts[Rendezvous.order(peers: peers, resource: resource, slice: slice)[0]] += 1
        }
        for count in counts { #expect((1800...2200).contains(count), "\(counts)") }
    }

    @Test("Two files' slices go to different peers: the resource is part of the weight")
    func resourcesDiffer() {
        let first = (Int64(0)..<64).map {
            Rendezvous.order(peers: Self.peers, resource: "https://a.example/x", slice: $0)[0]
        }
        let second = (Int64(0)..<64).map {
            Rendezvous.order(peers: Self.peers, resource: "https://a.example/y", slice: $0)[0]
        }
        #expect(first != second)
    }
}
