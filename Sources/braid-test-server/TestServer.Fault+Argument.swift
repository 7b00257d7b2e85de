import BraidTestServer

extension TestServer.Fault {
    /// Parses a `--fault NAME[=ARG]` value; the names are listed in ``ServerOptions/usage``.
    init(argument: String) throws(UsageError) {
        let name = String(argument.prefix { $0 != "=" })
        let value = argument.dropFirst(name.count + 1)
        let fields = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let option = "--fault \(name)"
        func field(_ index: Int) throws(UsageError) -> Substring {
            guard index < fields.count, !fields[index].isEmpty else {
                throw UsageError("\(option) needs a value; see --help")
            }
            return fields[index]
        }
        func number<Number: FixedWidthInteger>(_ index: Int) throws(UsageError) -> Number {
            try ServerOptions.number(try field(index), for: option)
        }
        func optionalNumber(_ index: Int) throws(UsageError) -> Int? {
            index < fields.count ? try number(index) : nil
        }
        func correct() throws(UsageError) -> Bool {
            switch value {
            case "right": return true
            case "wrong": return false
            default: throw UsageError("\(option) takes right or wrong")
            }
        }
        switch name {
        case "throttle": self = .throttle(bytesPerSecond: try number(0))
        case "total-throttle": self = .totalThrottle(bytesPerSecond: try number(0))
        case "latency":
            guard let seconds = Double(value) else { throw UsageError("\(option) takes seconds") }
            self = .latency(.seconds(seconds))
        case "slow-connection": self = .slowConnection(number: try number(0), bytesPerSecond: try number(1))
        case "slow-connections": self = .slowConnections(every: try number(0), bytesPerSecond: try number(1))
        case "stall": self = .stall(afterBytes: try number(0))
        case "close-after": self = .closeAfter(bytes: try number(0))
        case "short-body": self = .shortBody(missingBytes: try number(0))
        case "extra-bytes": self = .extraBytes(count: try number(0))
        case "ignore-range": self = .ignoreRange
        case "shift-range": self = .shiftRange(offsetBy: try number(0))
        case "wrong-bytes": self = .wrongBytes
        case "corrupt", "corrupt-once":
            let offset: UInt64 = try number(0)
            let (end, overflow) = offset.addingReportingOverflow(try number(1))
            guard !overflow else { throw UsageError("\(option) range ends past 2^64") }
            self = .corrupt(bytes: offset..<end, once: name == "corrupt-once")
        case "status": self = .status(try number(0), retryAfter: try optionalNumber(1))
        case "status-retry-after":
            self = .statusRawRetryAfter(try number(0), retryAfter: String(try field(1)))
        case "refuse-head": self = .refuseHead
        case "limit-connections": self = .limitConnections(perClient: try number(0), retryAfter: try optionalNumber(1))
        case "close-delimited": self = .closeDelimited
        case "chunked": self = .chunked
        case "head-length": self = .headContentLength(try number(0))
        case "claim-length": self = .claimLength(String(try field(0)))
        case "change-content": self = .changeContent(afterRequests: try number(0), seed: try number(1))
        case "redirect": self = .redirect(status: try number(0), to: .path(String(try field(1))))
        case "redirect-other-host": self = .redirect(status: try number(0), to: .otherHost(path: String(try field(1))))
        case "redirect-location": self = .redirect(status: try number(0), to: .location(String(try field(1))))
        case "content-disposition": self = .contentDisposition(String(value))
        case "etag": self = .entityTag(String(value))
        case "recently-modified": self = .recentlyModified
        case "no-last-modified": self = .noLastModified
        case "ignore-conditionals": self = .ignoreConditionals
        case "content-md5": self = .contentMD5(correct: try correct())
        case "digest": self = .digest([.md5, .sha256], correct: try correct())
        case "repr-digest": self = .reprDigest([.sha256, .sha512], correct: try correct())
        case "goog-hash": self = .googHash(correct: try correct())
        case "amz-checksum":
            if value == "composite" {
                self = .amzChecksum(correct: true, composite: true)
            } else {
                self = .amzChecksum(correct: try correct(), composite: false)
            }
        case "first": self = .onlyFirst(requests: try number(0), try Self(argument: String(try field(1))))
        case "after": self = .afterFirst(requests: try number(0), try Self(argument: String(try field(1))))
        default: throw UsageError("unknown fault \(name); see --help")
        }
    }
}
