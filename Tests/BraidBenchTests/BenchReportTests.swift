import Foundation
import Testing

@testable import BraidBench

/// How a report groups runs and what its JSON, CSV and table say, checked against the runs themselves.
@Suite("BenchReport")
struct BenchReportTests {
    static let mib: Double = 1_048_576
    static let medians: [Int: Double] = [1: 25 * mib, 4: 100 * mib, 16: 390 * mib]

    @Test("Runs are grouped by count in the order performed, with median, min, max and speed-up over 1")
    func statistics() throws {
        let report = try BenchTestRuns.report(medians: Self.medians)
        #expect(report.results.map(\.connections) == [1, 4, 16])
        #expect(report.baselineConnections == 1)
        for result in report.results {
            let median = try #require(Self.medians[result.connections])
            #expect(result.runs.count == 3)
            #expect(result.runs.allSatisfy { $0.connections == result.connections })
            #expect(result.runs.map(\.round) == [1, 2, 3])
            #expect(abs(result.medianBytesPerSecond - median) < 1e-6 * median)
            #expect(abs(result.minBytesPerSecond - 0.9 * median) < 1e-6 * median)
            #expect(abs(result.maxBytesPerSecond - 1.1 * median) < 1e-6 * median)
            #expect(abs(result.speedUp - median / (25 * Self.mib)) < 1e-9)
        }
        #expect(report.results.last?.retries == 3)
        #expect(report.runs.map(\.sequence) == Array(1...9))
        #expect(report.recommendedConnections == 16)
    }

    @Test("The median of an even number of runs is the mean of the middle two")
    func evenMedian() {
        #expect(BenchResult.median([4, 1, 3, 2]) == 2.5)
        #expect(BenchResult.median([7]) == 7)
        #expect(BenchResult.median([]) == 0)
    }

    @Test("Without a run at 1 connection, speed-ups are over the smallest count measured")
    func baseline() throws {
        let report = try BenchTestRuns.report(medians: [4: 100, 8: 150], rounds: 1)
        #expect(report.baselineConnections == 4)
        #expect(report.results.map(\.speedUp) == [1, 1.5])
        #expect(report.caption().contains("speed-up over 4 connections"))
    }

    @Test("The JSON document has results and recommendedConnections, and every statistic matches its runs")
    func jsonMatchesRuns() throws {
        let report = try BenchTestRuns.report(medians: Self.medians)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        #expect(object["recommendedConnections"] as? Int == 16)
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(results.map { $0["connections"] as? Int } == [1, 4, 16])
        var sequences: [Int] = []
        for result in results {
            let runs = try #require(result["runs"] as? [[String: Any]])
            #expect(runs.count == 3)
            let throughputs = try runs.map { run -> Double in
                let bytes = try #require((run["bytes"] as? NSNumber)?.doubleValue)
                let seconds = try #require((run["seconds"] as? NSNumber)?.doubleValue)
                #expect(run["connections"] as? Int == result["connections"] as? Int)
                sequences.append(try #require(run["sequence"] as? Int))
                return bytes / seconds
            }
            let median = try #require((result["medianBytesPerSecond"] as? NSNumber)?.doubleValue)
            #expect(abs(median - BenchResult.median(throughputs)) < 1e-9 * median)
            // JSONSerialization may read the last digit differently from JSONDecoder: compare to a part per 10⁹.
            let minimum = try #require((result["minBytesPerSecond"] as? NSNumber)?.doubleValue)
            let maximum = try #require((result["maxBytesPerSecond"] as? NSNumber)?.doubleValue)
            #expect(abs(minimum - (throughputs.min() ?? 0)) < 1e-9 * minimum)
            #expect(abs(maximum - (throughputs.max() ?? 0)) < 1e-9 * maximum)
        }
        #expect(sequences.sorted() == Array(1...9))
        #expect(try BenchReport(json: report.json()) == report)
    }

    @Test("CSV: a header and one row per run, in the order performed, that parses back to the runs")
    func csv() throws {
        let report = try BenchTestRuns.report(medians: Self.medians)
        let lines = report.csv().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == BenchReport.csvHeader)
        #expect(lines.last == "", "the document ends with a newline")
        let rows = lines.dropFirst().dropLast().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(rows.count == report.runs.count)
        for (row, run) in zip(rows, report.runs) {
            #expect(row.count == BenchReport.csvHeader.split(separator: ",").count)
            #expect(Int(row[0]) == run.sequence)
            #expect(Int(row[2]) == run.connections)
            #expect(Int64(row[3]) == run.bytes)
            #expect(Double(row[5]) == run.bytesPerSecond)
        }
        #expect(rows.map { Int($0[2]) } == [1, 4, 16, 1, 4, 16, 1, 4, 16])
    }

    @Test("An unknown time to first byte is an empty CSV field")
    func csvEmptyField() {
        var run = BenchTestRuns.run(1, 100)
        run.timeToFirstByte = nil
        #expect(BenchReport.csvRow(run).split(separator: ",", omittingEmptySubsequences: false)[6] == "")
    }

    @Test("The table has a header and one row per count, and marks the recommended row only")
    func table() throws {
        let report = try BenchTestRuns.report(medians: Self.medians)
        let lines = report.table().split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0].contains("connections") && lines[0].contains("median") && lines[0].contains("speed-up"))
        #expect(lines.filter { $0.contains("recommended") }.count == 1)
        #expect(lines[3].hasSuffix("← recommended"))
        #expect(lines[3].contains("390.0 MiB/s") && lines[3].contains("15.60×"))
        #expect(Set(lines.dropLast().map(\.count)).count == 1, "columns are aligned")
    }

    @Test("A benchmark cut short reports the counts it measured and no others")
    func partial() throws {
        let schedule = try BenchSchedule(connectionCounts: [1, 2, 4], repeats: 2)
        let runs = schedule.slots.prefix(4).map { BenchTestRuns.run($0.connections, 100, sequence: $0.sequence) }
        let report = BenchReport(
            url: "http://127.0.0.1/f", byteLimit: nil, discardsData: true, schedule: schedule, runs: runs)
        #expect(report.results.map(\.connections) == [1, 2, 4])
        #expect(report.results.map(\.runs.count) == [2, 1, 1])
        #expect(report.connectionCounts == [1, 2, 4])
        #expect(!report.table(marksRecommendation: false).contains("recommended"))
    }
}
