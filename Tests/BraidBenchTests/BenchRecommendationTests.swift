import Testing

@testable import BraidBench

/// The recommendation rule on synthetic results: the smallest count whose median is within 5 % of the best.
@Suite("BenchRecommendation")
struct BenchRecommendationTests {
    private func recommend(_ medians: [Int: Double], tolerance: Double = 0.05) throws -> BenchRecommendation? {
        BenchRecommendation(results: try BenchTestRuns.report(medians: medians).results, tolerance: tolerance)
    }

    @Test("Linear to 16 then flat: 16 is within 5 % of the best at 32, so 16 it is")
    func flattensAfterSixteen() throws {
        let recommendation = try #require(
            try recommend([1: 25, 2: 50, 4: 100, 8: 200, 16: 390, 32: 400]))
        #expect(recommendation.connections == 16)
        #expect(recommendation.bestConnections == 32)
        #expect(recommendation.bestMedianBytesPerSecond == 400)
        #expect(recommendation.reason.contains("smallest count"))
        #expect(recommendation.reason.contains("within 5 %"))
        #expect(recommendation.reason.contains("with 32 connections"))
    }

    @Test("A plateau with noise on top recommends where the plateau starts, not the noisy peak")
    func plateau() throws {
        let recommendation = try #require(try recommend([1: 100, 2: 180, 4: 300, 8: 310, 16: 305]))
        #expect(recommendation.connections == 4)
        #expect(recommendation.bestConnections == 8)
    }

    @Test(
        "The 5 % line: 96 % of the best qualifies, 94 % does not",
        arguments: [(96.0, 1), (94.0, 2)]
    )
    func boundary(smaller: Double, expected: Int) throws {
        #expect(try recommend([1: smaller, 2: 100])?.connections == expected)
    }

    @Test("A wider tolerance settles for fewer connections")
    func tolerance() throws {
        let medians: [Int: Double] = [1: 50, 2: 85, 4: 100]
        #expect(try recommend(medians)?.connections == 4)
        #expect(try recommend(medians, tolerance: 0.2)?.connections == 2)
    }

    @Test("Still rising at the largest count: recommend it, and say more might be faster")
    func stillRising() throws {
        let recommendation = try #require(try recommend([1: 10, 2: 20, 4: 40]))
        #expect(recommendation.connections == 4)
        #expect(recommendation.reason.contains("largest count measured"))
    }

    @Test("A tie for the best goes to the smaller count")
    func tie() throws {
        #expect(try recommend([4: 200, 8: 200])?.connections == 4)
    }

    @Test("A server that punishes parallelism gets one connection")
    func decreasing() throws {
        let recommendation = try #require(try recommend([1: 100, 2: 80, 4: 50]))
        #expect(recommendation.connections == 1)
        #expect(recommendation.reason.contains("no smaller count"))
        #expect(!recommendation.reason.contains("largest count"))
    }

    @Test("One count measured: that count, said plainly; nothing measured: no recommendation")
    func degenerate() throws {
        #expect(try recommend([8: 100])?.reason.hasPrefix("8 connections is the only count measured") == true)
        #expect(BenchRecommendation(results: []) == nil)
    }
}
