import Braid
import SystemPackage

/// aria2's error codes (its exit statuses, which its RPC reports as a download's `errorCode`), for Braid's
/// failures, so that a client shows the same reason it would for aria2.
enum Aria2ErrorCode {
    static let unknown = 1
    static let resourceNotFound = 3
    static let networkProblem = 6
    static let notEnoughDiskSpace = 9
    static let fileAlreadyExisted = 13
    static let fileIOError = 17
    static let badHTTPResponse = 22
    static let authorizationFailed = 24
    static let badOption = 28
    static let serverOverloaded = 29
    /// Not a failure: the `errorCode` aria2 gives a download removed while it ran.
    static let removed = 31
    static let checksumMismatch = 32

    /// The code a client would see from aria2 for the same failure.
    static func of(_ error: BraidError) -> Int {
        switch error.code {
        case .usage: return badOption
        case .localIO: return error.cause?.errno == .noSpace ? notEnoughDiskSpace : fileIOError
        case .network: return networkProblem
        case .integrity: return checksumMismatch
        case .fileExists: return fileAlreadyExisted
        case .protocolViolation:
            switch error.httpStatus {
            case 404, 410: return resourceNotFound
            case 401, 403, 407: return authorizationFailed
            case 429, 503: return serverOverloaded
            default: return badHTTPResponse
            }
        default: return unknown
        }
    }
}
