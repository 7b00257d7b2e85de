import Braid

extension TaskRequest {
    /// Why a request is refused: the aria2 option it came from, when there is one, and what is wrong.
    public struct Refusal: Error, Equatable, Sendable {
        /// aria2's name of the refused option (`dir`, `out`, `header` …); nil for the URIs.
        public let option: String?
        public let message: String
    }

    /// The most URIs (one file's mirrors) and the most headers a download may have.
    public static let maximumURIs = 64
    public static let maximumHeaders = 64
    /// Connections a download may ask for.
    public static let connectionRange = 1...64

    /// Only what the library fetches: plain http and https URLs, nothing that reads local files.
    public static func isFetchable(_ uri: String) -> Bool {
        let lower = uri.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return false }
        return uri.utf8.count <= 8192 && !uri.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
    }

    /// A header line: `Name: value`, at most 8 KiB, without line breaks (which would add headers of their own).
    public static func isHeader(_ header: String) -> Bool {
        header.contains(":") && header.utf8.count <= 8192
            && !header.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }

    /// The request as the daemon will run it, checked as every request is, whether a client just sent it or the
    /// session file brings it back: http(s) URIs only; a directory inside `root` (made if missing, links resolved);
    /// an output name that stays in it (its directories moved into `directory`) and whose files are none the daemon
    /// keeps for itself (`reservation` names what keeps one); a digest, headers, connections, rate and
    /// cache peers Braid accepts.
    public func checked(
        in root: DownloadDirectory,
        reservation: (String) -> String?
    ) throws(Refusal) -> TaskRequest {
        guard !uris.isEmpty, uris.count <= Self.maximumURIs else {
            throw Refusal(option: nil, message: "URI is not given.")
        }
        for uri in uris where !Self.isFetchable(uri) {
            throw Refusal(option: nil, message: "Invalid URI \(PrintableText.sanitised(String(uri.prefix(200))))")
        }
        var request = self
        do throws(DownloadDirectory.Refusal) {
            request.directory = try root.directory(for: directory)
        } catch {
            throw Refusal(option: "dir", message: error.message)
        }
        if let output {
            do throws(DownloadDirectory.Refusal) {
                try DownloadDirectory.checkOutput(output)
                // An `out` with directories in it: those are made inside the chosen directory.
                if let slash = output.lastIndex(of: "/") {
                    request.directory = try root.directory(for: request.directory + "/" + output[..<slash])
                    request.output = String(output[output.index(after: slash)...])
                }
            } catch {
                throw Refusal(option: "out", message: error.message)
            }
            let path = request.directory + "/" + (request.output ?? "")
            if let owner = reservation(path) {
                throw Refusal(option: "out", message: "the file name \(output) would replace \(owner)")
            }
        }
        if let checksum {
            do throws(BraidError) {
                _ = try ExpectedDigest(checksumArgument: checksum)
            } catch {
                throw Refusal(option: "checksum", message: error.message)
            }
        }
        guard headers.count <= Self.maximumHeaders, headers.allSatisfy(Self.isHeader) else {
            throw Refusal(option: "header", message: "a header is not one line of Name: value")
        }
        if let connections, !Self.connectionRange.contains(connections) {
            throw Refusal(option: "split", message: "connections must be 1 to 64")
        }
        if let rateLimit, rateLimit < 0 {
            throw Refusal(option: "max-download-limit", message: "a rate cannot be negative")
        }
        if let cachePeers {
            do throws(BraidError) {
                var options = DownloadOptions()
                options.cachePeers = try CachePeer.list(parsing: cachePeers)
                try options.validate()
            } catch {
                throw Refusal(option: "cache-peers", message: error.message)
            }
        }
        return request
    }
}
