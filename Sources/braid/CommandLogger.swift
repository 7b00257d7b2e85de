import Logging

/// The logger the command binds for the library: silent by default, so that stderr carries only what the
/// command itself prints; `-v` shows debug messages, `-vv` every request.
enum CommandLogger {
    static func make(verbosity: Int) -> Logger {
        guard verbosity > 0 else {
            return Logger(label: "braid", factory: { _ in SwiftLogNoOpLogHandler() })
        }
        var logger = Logger(label: "braid", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = verbosity >= 2 ? .trace : .debug
        return logger
    }
}
