import BraidJSON

extension JSON {
    /// A decimal string, as aria2 writes every number.
    static func decimal<Number: BinaryInteger>(_ value: Number) -> JSON { .string(String(value)) }
}
