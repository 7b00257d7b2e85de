import Testing

@testable import BraidBench

/// When `braid bench` warns before it starts: load on someone else's server, and counts it cannot really test.
@Suite("BenchAdvisory")
struct BenchAdvisoryTests {
    @Test(
        "Loopback names and addresses are recognised",
        arguments: [
            "localhost", "LOCALHOST", "api.localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1",
        ]
    )
    func loopback(host: String) {
        #expect(BenchAdvisory.isLoopback(host: host))
    }

    @Test(
        "Everything else is someone else's server",
        arguments: [
            "example.org", "10.0.0.1", "128.0.0.1", "127.0.0.1.example.org", "localhost.example.org", "::2",
            "1270.0.0.1",
        ]
    )
    func remote(host: String) {
        #expect(!BenchAdvisory.isLoopback(host: host))
    }

    @Test("More than 16 connections to a remote server earn a warning naming it; loopback never does")
    func connections() throws {
        #expect(BenchAdvisory.connectionWarning(url: "https://example.org/f", maximumConnections: 16) == nil)
        let warning = try #require(
            BenchAdvisory.connectionWarning(url: "https://example.org/f", maximumConnections: 17))
        #expect(warning.contains("example.org") && warning.contains("17"))
        #expect(BenchAdvisory.connectionWarning(url: "http://127.0.0.1:8080/f", maximumConnections: 1024) == nil)
        #expect(BenchAdvisory.connectionWarning(url: "http://localhost/f", maximumConnections: 64) == nil)
    }

    @Test("More than 4 GiB in total from a remote server earns a warning; loopback never does")
    func volume() throws {
        #expect(BenchAdvisory.volumeWarning(url: "https://example.org/f", totalBytes: 4 << 30) == nil)
        let warning = try #require(BenchAdvisory.volumeWarning(url: "https://example.org/f", totalBytes: 5 << 30))
        #expect(warning.contains("5.0 GiB") && warning.contains("--bytes"))
        #expect(BenchAdvisory.volumeWarning(url: "http://[::1]:8080/f", totalBytes: 1 << 40) == nil)
    }

    @Test("The total is the smaller of length and limit, times the runs, when either is known")
    func totals() {
        #expect(BenchAdvisory.totalBytes(length: 100, byteLimit: 10, runs: 3) == 30)
        #expect(BenchAdvisory.totalBytes(length: 10, byteLimit: 100, runs: 3) == 30)
        #expect(BenchAdvisory.totalBytes(length: nil, byteLimit: 7, runs: 2) == 14)
        #expect(BenchAdvisory.totalBytes(length: 7, byteLimit: nil, runs: 2) == 14)
        #expect(BenchAdvisory.totalBytes(length: nil, byteLimit: nil, runs: 2) == nil)
        #expect(BenchAdvisory.totalBytes(length: nil, byteLimit: Int64.max, runs: 15) == Int64.max)
    }

    @Test("Too few bytes per run to give every connection a range of its own is said, naming the counts")
    func ranges() throws {
        let warning = try #require(BenchAdvisory.rangeWarning(bytesPerRun: 8 << 20, connectionCounts: [1, 4, 16, 32]))
        #expect(warning.contains("at most 8 ranges") && warning.contains("16, 32 connections"))
        #expect(BenchAdvisory.rangeWarning(bytesPerRun: 64 << 20, connectionCounts: [1, 16, 32]) == nil)
    }
}
