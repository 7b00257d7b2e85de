import BraidTestServer

/// The command line of `braid-test-server`, parsed by hand to keep the fixture free of dependencies.
struct ServerOptions {
    /// The one-screen help printed on `--help` and after a usage error.
    static let usage = """
        usage: braid-test-server --size BYTES [--seed N] [--port P] [--path /file] [--rate BPS] [--fault NAME[=ARG]]...
                                 [--log-requests]

        Serves SIZE deterministic bytes at PATH (default /file) on 127.0.0.1:P (default 0 = any free port),
        prints the URL on the first line of stdout, and runs until SIGINT or SIGTERM. With --log-requests,
        prints one line per finished response on stderr: connection, method, target, Range, status, body bytes,
        and `times` when the request was read, its first byte sent (- if never) and it ended (epoch seconds).

        faults (repeatable):
          throttle=BPS (per connection)  total-throttle=BPS (all connections together)  latency=SECONDS (per request)
          slow-connection=N:BPS  slow-connections=EVERY:BPS
          stall=BYTES  close-after=BYTES  short-body=MISSING  extra-bytes=COUNT
          ignore-range  shift-range=OFFSET  wrong-bytes
          corrupt=OFFSET:LENGTH (always)  corrupt-once=OFFSET:LENGTH (the first body carrying any of it)
          status=CODE[:RETRY_AFTER]  status-retry-after=CODE:RAW_VALUE  refuse-head
          limit-connections=N[:RETRY_AFTER]  close-delimited  chunked  head-length=BYTES
          claim-length=RAW_VALUE  change-content=AFTER_REQUESTS:SEED
          redirect=CODE:/path  redirect-other-host=CODE:/path  redirect-location=CODE:URL
          etag=VALUE  recently-modified  no-last-modified  ignore-conditionals  content-disposition=VALUE  content-md5=right|wrong  digest=right|wrong  repr-digest=right|wrong  content-digest=sha-256[,sha-512]
          goog-hash=right|wrong  amz-checksum=right|wrong|composite
          first=REQUESTS:FAULT   (apply FAULT to the first REQUESTS requests only)
          after=REQUESTS:FAULT   (apply FAULT from request REQUESTS+1 on)
        """

    /// The port to bind, 0 for a free one.
    var port = 0
    /// The path the content is served at.
    var path = "/file"
    /// The content's size in bytes.
    var size: UInt64 = 0
    /// The content's seed.
    var seed: UInt64 = 1
    /// The faults, in command-line order.
    var faults: [TestServer.Fault] = []
    /// Whether to print a line per finished response on stderr, for scripts that count requests.
    var logRequests = false

    /// Parses the arguments after the program name.
    init(arguments: [String]) throws(UsageError) {
        var remaining = arguments.makeIterator()
        var sizeGiven = false
        func value(for option: String) throws(UsageError) -> String {
            guard let value = remaining.next() else { throw UsageError("\(option) needs a value") }
            return value
        }
        while let argument = remaining.next() {
            switch argument {
            case "--port": port = try Self.number(try value(for: argument), for: argument)
            case "--path": path = try value(for: argument)
            case "--size":
                size = try Self.number(try value(for: argument), for: argument)
                sizeGiven = true
            case "--seed": seed = try Self.number(try value(for: argument), for: argument)
            case "--rate":
                faults.append(.throttle(bytesPerSecond: try Self.number(try value(for: argument), for: argument)))
            case "--fault": faults.append(try TestServer.Fault(argument: try value(for: argument)))
            case "--log-requests": logRequests = true
            case "--help", "-h": throw UsageError(nil)
            default: throw UsageError("unknown argument \(argument)")
            }
        }
        guard sizeGiven else { throw UsageError("--size is required") }
        guard path.hasPrefix("/") else { throw UsageError("--path must start with /") }
    }

    /// `text` as an integer, or a usage error naming `option`.
    static func number<Number: FixedWidthInteger>(_ text: some StringProtocol, for option: String) throws(UsageError)
        -> Number
    {
        guard let number = Number(text) else { throw UsageError("\(option): \(text) is not a valid number") }
        return number
    }
}
