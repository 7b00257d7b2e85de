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

        /// Runs `curl --silent --show-error` with `arguments` and waits for it.
        init(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["curl", "--silent", "--show-error"] + arguments
            let output = Pipe()
            let errorOutput = Pipe()
            process.standardOutput = output
            process.standardError = errorOutput
            try process.run()
            self.output = output.fileHandleForReading.readDataToEndOfFile()
            self.errorOutput = String(decoding: errorOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            exitCode = process.terminationStatus
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
