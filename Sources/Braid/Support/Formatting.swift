/// Number formatting for people, without Foundation's `String(format:)` (and the ICU data it would load).
public enum Formatting {
    /// `value` with exactly `digits` digits after the point, rounded half away from zero.
    public static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        // More digits than a Double carries would overflow the Int64 arithmetic below.
        let digits = min(max(0, digits), 15)
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard scaled < 9e18 else { return sign + "\(abs(value).rounded())" }
        let whole = Int64(scaled) / Int64(scale)
        guard digits > 0 else { return sign + String(whole) }
        let fraction = String(Int64(scaled) % Int64(scale))
        return sign + String(whole) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    /// `value` rounded to the nearest integer, clamped to `Int64`'s range, 0 for NaN: a rate or an estimate of any
    /// size (an instant transfer, an unknown length) converts without trapping.
    public static func integer(_ value: Double) -> Int64 {
        guard !value.isNaN else { return 0 }
        if value >= 0x1p63 { return .max }
        if value <= -0x1p63 { return .min }
        return Int64(value.rounded())
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

    /// `m:ss`, or `h:mm:ss` from an hour up; `--:--` for a duration that cannot be told (infinite or NaN).
    public static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite || seconds == -.infinity else { return "--:--" }
        // Beyond 10^12 hours the digits mean nothing; the bound keeps the conversion to Int exact.
        let total = Int(min(max(0, seconds), 3.6e15).rounded())
        func two(_ number: Int) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return total >= 3600
            ? "\(total / 3600):\(two(total / 60 % 60)):\(two(total % 60))"
            : "\(total / 60):\(two(total % 60))"
    }
}
