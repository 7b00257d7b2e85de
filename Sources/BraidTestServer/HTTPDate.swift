import Glibc

/// Formats IMF-fixdate strings (`Sun, 06 Nov 1994 08:49:37 GMT`) without `DateFormatter`, whose output
/// depends on locale and calendar settings.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The IMF-fixdate for a point in time given in seconds since 1970 UTC.
    static func format(secondsSinceEpoch: Int) -> String {
        var time = time_t(secondsSinceEpoch)
        var parts = tm()
        gmtime_r(&time, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):"
            + "\(twoDigits(parts.tm_sec)) GMT"
    }

    /// The IMF-fixdate for the current time, for the `Date` header.
    static func now() -> String {
        format(secondsSinceEpoch: Int(time(nil)))
    }
}
