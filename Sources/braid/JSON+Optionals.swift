import BraidJSON

/// What `--json` does not know (a length the server did not give, a digest not checked) is `null`.
extension JSON {
    /// A string, or `null` for nil.
    static func string(_ value: String?) -> JSON { value.map { .string($0) } ?? .null }

    /// An integer, or `null` for nil.
    static func integer(_ value: Int64?) -> JSON { value.map { .integer($0) } ?? .null }

    /// A number, or `null` for nil.
    static func number(_ value: Double?) -> JSON { value.map { .number($0) } ?? .null }
}
