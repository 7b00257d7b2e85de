import Foundation

extension TestServerTests {
    /// One finished run of the system `curl`: an independent client to check the server against, whose exit
    /// codes name the failures the faults must cause (18 partial file, 28 timeout, 47 too many redirects).
    struct CurlRun {
        /// curl's exit code.
        let exitCode: Int32
        /// Everything curl wrote to stdout (headers from `-D -`, `--write-out` text), as bytes.
        let output: Data
        /// curl's error messages.
        let errorOutput: String

        /// Runs `curl --silent --show-error` with `arguments` and waits for it, on a thread of its own: a blocking
        /// wait on one of the two cooperative threads of this machine would hold every other test back for as long
        /// as curl runs (seconds, for the fault tests that expect a timeout).
        init(_ arguments: [String]) async throws {
            let result = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: Result { try Self.run(arguments) }) }.start()
            }
            (exitCode, output, errorOutput) = try result.get()
        }

        private static func run(_ arguments: [String]) throws -> (Int32, Data, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["curl", "--silent", "--show-error"] + arguments
            let output = Pipe()
            let errorOutput = Pipe()
            process.standardOutput = output
            process.standardError = errorOutput
            try process.run()
            let outputData = output.fileHandleForReading.readDataToEndOfFile()
            let errorText = String(decoding: errorOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, outputData, errorText)
        }

        /// The header blocks of every response curl printed with `-D -` or `-I`, in order.
        var responses: [[(name: String, value: String)]] {
            String(decoding: output, as: UTF8.self)
                .components(separatedBy: "\r\n\r\n")
                .filter { $0.hasPrefix("HTTP/") }
                .map { block in
                    block.components(separatedBy: "\r\n").map { line in
                        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
                        return (
                            String(line[..<colon]),
                            line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                        )
                    }
                }
        }

        /// The status code of the last response.
        var status: Int? {
            responses.last?.first.flatMap { Int($0.name.split(separator: " ")[1]) }
        }

        /// The value of header `name` (case-insensitive) in the last response.
        func header(_ name: String) -> String? {
            responses.last?.dropFirst().first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The text after the last header block, where `--write-out` output lands.
        var writtenOut: String {
            String(decoding: output, as: UTF8.self).components(separatedBy: "\r\n\r\n").last ?? ""
        }
    }
}
