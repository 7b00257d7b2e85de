import ArgumentParser

/// What `-n` and `-j` take: a number, or `auto`.
enum CountArgument: ExpressibleByArgument, Equatable {
    case fixed(Int)
    /// Braid chooses, and goes on choosing while it runs.
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
