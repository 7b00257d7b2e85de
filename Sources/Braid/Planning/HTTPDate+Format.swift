#if canImport(Glibc)
    import Glibc
#endif

extension HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// The IMF-fixdate of a time in whole seconds since 1970 UTC, as `If-Modified-Since` carries it; formatted by
    /// hand, since a formatter's output depends on the locale.
    static func format(secondsSince1970 seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(monthNames[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):"
            + "\(twoDigits(parts.tm_sec)) GMT"
    }
}
