import BraidTestSupport
import Foundation

/// One HTTP response as the `curl` command saw it, for tests that want a real, independent client.
struct CurlResponse {
    /// The final status code (an interim `100 Continue` is skipped).
    let status: Int
    /// Header fields with lowercased names.
    let headers: [String: String]
    let body: String
    /// curl's `-v` trace, where connection reuse shows.
    let trace: String

    /// Runs `curl -sS -i -v` with `arguments` and parses the last response it printed.
    static func fetch(_ arguments: [String]) async throws -> CurlResponse {
        let result = try await ChildProcess.run("curl", ["-sS", "-i", "-v", "--max-time", "20"] + arguments)
        guard result.status.isSuccess else {
            throw TestSupportError.commandFailed(
                "curl \(arguments.joined(separator: " "))",
                status: result.status,
                stderr: result.standardError
            )
        }
        return parse(result.standardOutput, trace: result.standardError)
    }

    /// Every response in curl's `-i` output (several when one command fetched several URLs), interim ones skipped.
    static func parseAll(_ output: String, trace: String = "") -> [CurlResponse] {
        var responses: [CurlResponse] = []
        var rest = Substring(output)
        while let headEnd = rest.range(of: "\r\n\r\n") {
            let headLines = rest[..<headEnd.lowerBound].components(separatedBy: "\r\n")
            rest = rest[headEnd.upperBound...]
            let statusParts = headLines.first?.split(separator: " ") ?? []
            let status = statusParts.count > 1 ? Int(statusParts[1]) ?? 0 : 0
            if status == 100 { continue }
            var headers: [String: String] = [:]
            for line in headLines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers[line[..<colon].lowercased()] = value
            }
            let length = headers["content-length"].flatMap { Int($0) } ?? rest.utf8.count
            let bodyEnd = rest.utf8.index(rest.utf8.startIndex, offsetBy: min(length, rest.utf8.count))
            let body = String(rest[..<bodyEnd])
            rest = rest[bodyEnd...]
            responses.append(CurlResponse(status: status, headers: headers, body: body, trace: trace))
        }
        return responses
    }

    private static func parse(_ output: String, trace: String) -> CurlResponse {
        parseAll(output, trace: trace).last ?? CurlResponse(status: 0, headers: [:], body: output, trace: trace)
    }
}
