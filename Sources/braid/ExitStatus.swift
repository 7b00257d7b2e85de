import Braid

/// The `braid` command's exit statuses, as documented in `docs/manual/exit-codes.md`.
enum ExitStatus: Int32 {
    case success = 0
    case failure = 1
    case usage = 2
    case localIO = 3
    case network = 4
    case protocolViolation = 5
    case integrity = 6
    case manifest = 7
    case fileExists = 8
    case interrupted = 130

    init(_ code: BraidError.Code) {
        switch code {
        case .usage: self = .usage
        case .localIO: self = .localIO
        case .network: self = .network
        case .protocolViolation: self = .protocolViolation
        case .integrity: self = .integrity
        case .manifest: self = .manifest
        case .fileExists: self = .fileExists
        case .interrupted, .cancelled: self = .interrupted
        default: self = .failure
        }
    }

    /// A list's status: success when every download succeeded, else the status of the first that failed, in
    /// list order.
    init(_ outcomes: [DownloadOutcome.Summary]) {
        self = outcomes.lazy.compactMap(\.error).first.map { ExitStatus($0.code) } ?? .success
    }
}
