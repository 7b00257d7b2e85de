import SystemPackage

extension BraidError {
    /// The failure underneath a `BraidError`, kept so that a program can act on it without parsing the message.
    public struct Cause: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: Hashable, Sendable {
            case errno(Errno)
            case curl(Int)
        }
        fileprivate let base: Base

        /// A system call failed with this error number.
        public static func errno(_ errno: Errno) -> Cause { Cause(base: .errno(errno)) }
        /// libcurl failed with this result code (a `CURLcode`).
        public static func curl(code: Int) -> Cause { Cause(base: .curl(code)) }

        /// The error number, when a system call failed.
        public var errno: Errno? {
            if case let .errno(errno) = base { return errno }
            return nil
        }

        /// libcurl's result code, when libcurl failed.
        public var curlCode: Int? {
            if case let .curl(code) = base { return code }
            return nil
        }

        public var description: String {
            switch base {
            case let .errno(errno): "errno \(errno.rawValue) (\(errno))"
            case let .curl(code): "libcurl error \(code)"
            }
        }
    }

    /// `what` failed on a local file; the message adds why, and an `Errno` among the errors is kept as the cause.
    static func localIO(_ what: String, _ error: any Error) -> BraidError {
        BraidError(.localIO, "\(what): \(explain(error))", cause: (error as? Errno).map(Cause.errno))
    }

    /// Reading the manifest failed; the message adds why, and an `Errno` among the errors is kept as the cause.
    static func manifest(_ what: String, _ error: any Error) -> BraidError {
        BraidError(.manifest, "\(what): \(explain(error))", cause: (error as? Errno).map(Cause.errno))
    }

    /// A failure in words, with what to do for the ones a user can fix.
    static func explain(_ error: any Error) -> String {
        guard let errno = error as? Errno else { return String(describing: error) }
        switch errno {
        case .noSpace: return "no space left on device (free some space and run the same command again)"
        case .permissionDenied: return "permission denied"
        case .noSuchFileOrDirectory: return "no such file or directory"
        case .readOnlyFileSystem: return "read-only file system"
        default: return String(describing: errno)
        }
    }
}
