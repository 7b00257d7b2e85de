/// Number formatting for people, without Foundation's `String(format:)` (and the ICU data it would load).
public enum Formatting {
    /// `value` with exactly `digits` digits after the point, rounded half away from zero.
    public static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        var scale = 1.0
        for _ in 0..<max(0, digits) { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard scaled < 9e18 else { return sign + String(Int64(abs(value))) }
        let whole = Int64(scaled) / Int64(scale)
        guard digits > 0 else { return sign + String(whole) }
        let fraction = String(Int64(scaled) % Int64(scale))
        return sign + String(whole) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    /// `value` right-aligned in `width` columns.
    public static func padded(_ text: String, width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// Binary units: `512 B`, `1.5 KiB`, `190.7 MiB`.
    public static func bytes(_ count: Int64) -> String {
        let (value, unit) = scaled(Double(count))
        return unit == "B" ? "\(count) B" : fixed(value, digits: 1) + " " + unit
    }

    /// The binary unit that suits `value` bytes (`B` up to `PiB`) and `value` in that unit.
    public static func scaled(_ value: Double) -> (value: Double, unit: String) {
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
        var scaled = value
        var index = 0
        while abs(scaled) >= 1024 && index < units.count - 1 {
            scaled /= 1024
            index += 1
        }
        return (scaled, units[index])
    }

    /// `m:ss`, or `h:mm:ss` from an hour up.
    public static func duration(_ seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded())
        func two(_ number: Int) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return total >= 3600
            ? "\(total / 3600):\(two(total / 60 % 60)):\(two(total % 60))"
            : "\(total / 60):\(two(total % 60))"
    }
}
