import Braid

/// How `braid bench` writes sizes, rates and durations for people: binary units, one decimal.
public enum BenchFormat {
    /// `count` bytes with a binary unit: `512 B`, `64.0 MiB`, `1.5 GiB`.
    public static func bytes(_ count: Int64) -> String {
        Formatting.bytes(count)
    }

    /// A throughput with a binary unit: `25.0 MiB/s`.
    public static func rate(_ bytesPerSecond: Double) -> String {
        let (value, unit) = Formatting.scaled(bytesPerSecond)
        return Formatting.fixed(value, digits: unit == "B" ? 0 : 1) + " " + unit + "/s"
    }

    /// A duration: milliseconds below a second (`12 ms`), else seconds with two decimals (`3.25 s`).
    public static func seconds(_ seconds: Double) -> String {
        seconds < 1 ? Formatting.fixed(seconds * 1000, digits: 0) + " ms" : Formatting.fixed(seconds, digits: 2) + " s"
    }

    /// A speed-up factor: `3.95×`.
    public static func speedUp(_ factor: Double) -> String {
        Formatting.fixed(factor, digits: 2) + "×"
    }

    /// A fraction as a percentage, without decimals when it has none: `5 %`, `2.5 %`.
    public static func percent(_ fraction: Double) -> String {
        let value = fraction * 100
        return Formatting.fixed(value, digits: value == value.rounded() ? 0 : 1) + " %"
    }

    /// `1 connection`, `8 connections`.
    public static func connections(_ count: Int) -> String {
        count == 1 ? "1 connection" : "\(count) connections"
    }
}
