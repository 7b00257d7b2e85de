import Foundation

/// What `braid --json` printed on stdout, parsed line by line as a consumer would.
struct JSONEvents {
    /// A line that is not a JSON object with a string `event` field.
    struct MalformedLine: Error, CustomStringConvertible {
        let number: Int
        let text: String
        var description: String { "stdout line \(number) is not a JSON event object: \(text)" }
    }

    /// Every line, in order.
    let lines: [[String: Any]]

    /// Parses `output`, which must end with a newline; every line must be one JSON object with an `event` string.
    init(_ output: String) throws {
        var lines: [[String: Any]] = []
        let rows = output.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, row) in rows.enumerated() {
            if index == rows.count - 1 && row.isEmpty { break }
            guard let object = try? JSONSerialization.jsonObject(with: Data(row.utf8)) as? [String: Any],
                object["event"] is String
            else { throw MalformedLine(number: index + 1, text: String(row)) }
            lines.append(object)
        }
        self.lines = lines
    }

    /// The `event` of every line, in order.
    var names: [String] { lines.map { $0["event"] as! String } }

    /// The lines whose `event` is `name`, optionally only those about download `id`.
    func named(_ name: String, id: Int? = nil) -> [[String: Any]] {
        lines.filter { $0["event"] as? String == name && (id == nil || Self.integer($0["id"]) == id.map(Int64.init)) }
    }

    /// The lines about download `id`, in order.
    func about(_ id: Int) -> [[String: Any]] {
        lines.filter { Self.integer($0["id"]) == Int64(id) }
    }

    /// A JSON integer as a Swift one (JSONSerialization hands numbers over as `NSNumber`).
    static func integer(_ value: Any?) -> Int64? {
        (value as? NSNumber)?.int64Value
    }

    /// A JSON number as a `Double`.
    static func number(_ value: Any?) -> Double? {
        (value as? NSNumber)?.doubleValue
    }
}
