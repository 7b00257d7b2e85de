/// Rendezvous (highest-random-weight) hashing: which cache peer serves a slice of a resource. Every peer gets a
/// weight for (resource, slice); the heaviest serves it, the next one takes over while it is down. The weights
/// depend on nothing but the three strings, so every host of a fleet that lists the same peers (in any order)
/// asks the same peer for the same slice, and a peer that leaves moves only the slices it served.
///
/// The weight is the SplitMix64 finaliser of the 64-bit FNV-1a hash of the UTF-8 bytes of
/// `peer + "\n" + resource + "\n" + String(slice)`: small enough to write again in any language
/// (`docs/design/cache-peers.md#which-peer-serves-a-slice`).
enum Rendezvous {
    /// The weight of `peer` for slice `slice` of `resource`.
    static func weight(peer: String, resource: String, slice: Int64) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func add<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        add(peer.utf8)
        add(CollectionOfOne(0x0A))
        add(resource.utf8)
        add(CollectionOfOne(0x0A))
        add(String(slice).utf8)
        var z = hash
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The indices of `peers` from the heaviest to the lightest for slice `slice` of `resource`; equal weights
    /// (two peers named alike) in the order of their names, then of their indices.
    static func order(peers: [String], resource: String, slice: Int64) -> [Int] {
        let weights = peers.map { weight(peer: $0, resource: resource, slice: slice) }
        return peers.indices.sorted { left, right in
            if weights[left] != weights[right] { return weights[left] > weights[right] }
            if peers[left] != peers[right] { return peers[left] < peers[right] }
            return left < right
        }
    }
}
