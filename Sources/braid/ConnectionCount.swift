import ArgumentParser

/// What `-n` takes: a number of connections, or `auto`.
enum ConnectionCount: ExpressibleByArgument, Equatable {
    case fixed(Int)
    /// The download chooses while it runs.
    case automatic

    init?(argument: String) {
        if argument.lowercased() == "auto" {
            self = .automatic
        } else if let count = Int(argument) {
            self = .fixed(count)
        } else {
            return nil
        }
    }

    var defaultValueDescription: String {
        switch self {
        case let .fixed(count): "\(count)"
        case .automatic: "auto"
        }
    }
}
