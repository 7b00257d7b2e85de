import Glibc

/// Formats and reads IMF-fixdate strings (`Sun, 06 Nov 1994 08:49:37 GMT`) without `DateFormatter`, whose
/// output depends on locale and calendar settings.
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

    /// Seconds since 1970 UTC of an IMF-fixdate, or nil for any other text (which a server ignores in
    /// `If-Modified-Since`, RFC 9110 §13.1.3).
    static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT", let day = Int(parts[1]),
            let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3 else { return nil }
        var time = tm()
        time.tm_year = Int32(year - 1900)
        time.tm_mon = Int32(month)
        time.tm_mday = Int32(day)
        time.tm_hour = Int32(clock[0])
        time.tm_min = Int32(clock[1])
        time.tm_sec = Int32(clock[2])
        return Int(timegm(&time))
    }
}
