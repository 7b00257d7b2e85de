import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// Listing an `s3://BUCKET/PREFIX/` that stalls: the listing is bounded in time as any request is, and its failure
/// says it was the listing.
@Suite("braid s3:// listings and reruns", .serialized)
struct ObjectStoreRerunTests {
    @Test(
        "a listing that stalls fails as a download does, within the stall timeout and tries, saying it was the listing")
    func stalledListing() async throws {
        // Accepts the connection and reads the request, then says nothing for an hour.
        let server = TestServer(routes: ["/stalled/": .init(size: 10, faults: [.latency(.seconds(3600))])])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-s3-stalled")
        defer { directory.remove() }
        let clock = ContinuousClock()
        let started = clock.now

        let run = try await BraidCLI.run(
            ["s3://stalled/p/", "-d", directory.appending("out").path, "--stall-timeout", "1", "--max-tries", "2"],
            environment: [
                "AWS_ENDPOINT_URL": server.baseURL, "AWS_ENDPOINT_URL_S3": "", "AWS_REGION": "us-east-1",
                "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
            ])

        let elapsed = clock.now - started
        #expect(run.status == .exited(4), "\(run.standardError)")
        #expect(run.standardError.contains("listing s3://stalled/p/: "), "\(run.standardError)")
        // Two attempts of one second each and a backoff, not the default 30 s a try.
        #expect(elapsed < .seconds(15), "\(elapsed)")
        #expect(server.connectionsAccepted >= 1, "the listing went to the stalled server")
    }
}
