import ArgumentParser
import Braid

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The cache peers a fleet shares, for `braid get` and `braid daemon`: given here, or once for every command of a
/// machine in `BRAID_CACHE_PEERS` and `BRAID_SLICE_SIZE`.
struct CachePeerArguments: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Ask these caches for the file's slices, each from the one rendezvous hashing picks: URL templates "
                + "such as http://cache-1:8080/{scheme}/{host}{path}, comma-separated (default $BRAID_CACHE_PEERS; "
                + "'' for none). What they serve is checked against a digest; they get none of your credentials.",
            valueName: "LIST")
    )
    var cachePeers: String?

    @Option(
        help: ArgumentHelp(
            "With --cache-peers: bytes per slice, the caches' own slice size or a multiple of it (default "
                + "$BRAID_SLICE_SIZE, else 16M).",
            valueName: "SIZE")
    )
    var sliceSize: String?

    @Flag(help: "With --cache-peers: use them even when no digest can check what they serve.")
    var trustCachePeers = false

    static let peersVariable = "BRAID_CACHE_PEERS"
    static let sliceSizeVariable = "BRAID_SLICE_SIZE"

    func validate() throws {
        var options = DownloadOptions()
        do throws(BraidError) {
            try apply(to: &options)
            try options.validate()
        } catch {
            throw error.validationError
        }
    }

    /// Sets the peers, the slice size and the trust, from the flags or else the environment; a value from the
    /// environment that cannot be used is refused naming its variable.
    func apply(
        to options: inout DownloadOptions, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(BraidError) {
        do {
            options.cachePeers = try CachePeer.list(parsing: cachePeers ?? environment[Self.peersVariable] ?? "")
        } catch {
            throw cachePeers == nil ? BraidError(.usage, "\(Self.peersVariable): \(error.message)") : error
        }
        if let size = sliceSize ?? environment[Self.sliceSizeVariable] {
            do {
                options.sliceSize = try ByteCount.parse(size, examples: "16M or 1G")
            } catch {
                throw sliceSize == nil
                    ? BraidError(.usage, "\(Self.sliceSizeVariable): \(error.message)")
                    : BraidError(.usage, error.message, option: .sliceSize)
            }
        }
        options.trustsCachePeers = trustCachePeers
    }
}
