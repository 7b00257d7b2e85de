/// HTTP dates (RFC 9110 §5.6.7): `Last-Modified`, `Retry-After`, `If-Modified-Since`. Formatted as the
/// preferred IMF-fixdate; parsed in all three forms recipients must accept:
///
/// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
/// - obsolete RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`, its two-digit year within 50 years from now
/// - asctime: `Sun Nov  6 08:49:37 1994`
///
/// Times are whole seconds since 1970 UTC, on the proleptic Gregorian calendar, years 1970 to 9999. Hand-written
/// rather than `curl_getdate`, which reads many more forms (time zones, dates without a time) and places two-digit
/// years by a fixed pivot, not by the current date as RFC 9110 asks; `FuzzTests` feeds it mutated dates.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longWeekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let secondsPerDay: Int64 = 86_400
    /// 9999-12-31 23:59:59 UTC.
    private static let latest: Int64 = 253_402_300_799

    /// The IMF-fixdate of a time in whole seconds since 1970 UTC, as `If-Modified-Since` carries it; formatted by
    /// hand, since a formatter's output depends on the locale.
    static func format(secondsSince1970 seconds: Int64) -> String {
        let (days, second) = floorDivision(seconds, secondsPerDay)
        let date = civil(days: days)
        let weekday = Int(floorDivision(days + 4, 7).remainder)  // 1970-01-01 was a Thursday
        func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[weekday]), \(twoDigits(date.day)) \(months[Int(date.month) - 1]) \(date.year) "
            + "\(twoDigits(second / 3600)):\(twoDigits(second / 60 % 60)):\(twoDigits(second % 60)) GMT"
    }

    /// Seconds since 1970 UTC, or nil if `text` is none of the three forms. `wallClock` (seconds since 1970) places
    /// an RFC 850 date's two-digit year: one more than 50 years ahead of it is in the past century.
    static func parse(_ text: String, wallClock: Double) -> Double? {
        // Runs of spaces count as one: asctime pads a one-digit day (`Nov  6`).
        let fields = text.split(separator: " ")
        let date: (year: Int64, month: Int64, day: Int64, time: Substring)?
        switch fields.count {
        case 6:
            guard fields[0].hasSuffix(","), weekdays.contains(String(fields[0].dropLast())), fields[5] == "GMT",
                let day = number(fields[1], digits: 1...2), let month = month(fields[2]),
                let year = number(fields[3], digits: 4...4)
            else { return nil }
            date = (year, month, day, fields[4])
        case 4:
            let parts = fields[1].split(separator: "-", omittingEmptySubsequences: false)
            guard fields[0].hasSuffix(","), longWeekdays.contains(String(fields[0].dropLast())), fields[3] == "GMT",
                parts.count == 3, let day = number(parts[0], digits: 1...2), let month = month(parts[1]),
                let year = number(parts[2], digits: 2...2)
            else { return nil }
            date = (
                fullYear(year, month: month, day: day, time: fields[2], wallClock: wallClock), month, day, fields[2]
            )
        case 5:
            guard weekdays.contains(String(fields[0])), let month = month(fields[1]),
                let day = number(fields[2], digits: 1...2), let year = number(fields[4], digits: 4...4)
            else { return nil }
            date = (year, month, day, fields[3])
        default:
            date = nil
        }
        guard let date, (1970...9999).contains(date.year),
            (1...daysIn(month: date.month, of: date.year)).contains(date.day),
            let time = timeOfDay(date.time)
        else { return nil }
        let seconds = days(year: date.year, month: date.month, day: date.day) * secondsPerDay + time
        // A leap second at the very end of 9999 would be a time no HTTP date can carry.
        return seconds <= latest ? Double(seconds) : nil
    }

    /// Seconds since 1970 UTC of an S3 listing's `LastModified`, ISO 8601 in UTC as S3 writes it
    /// (`2024-05-01T12:00:00.000Z`, the fraction optional and dropped: HTTP dates have none), or nil for any other
    /// form.
    static func parse(listingTime text: String) -> Double? {
        guard text.hasSuffix("Z") else { return nil }
        let parts = text.dropLast().split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        let clock = parts[1].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard date.count == 3, let year = number(date[0], digits: 4...4), let month = number(date[1], digits: 2...2),
            let day = number(date[2], digits: 2...2), (1970...9999).contains(year), (1...12).contains(month),
            (1...daysIn(month: month, of: year)).contains(day), clock[0].utf8.count == 8,
            let time = timeOfDay(clock[0]), clock.count == 1 || number(clock[1], digits: 1...9) != nil
        else { return nil }
        let seconds = days(year: year, month: month, day: day) * secondsPerDay + time
        return seconds <= latest ? Double(seconds) : nil
    }

    /// The year of a two-digit `year`: in this century, unless that is more than 50 years after `wallClock`.
    private static func fullYear(_ year: Int64, month: Int64, day: Int64, time: Substring, wallClock: Double) -> Int64 {
        let now = Int64(max(0, min(wallClock, Double(latest))))
        let (today, second) = floorDivision(now, secondsPerDay)
        let current = civil(days: today)
        let candidate = current.year - current.year % 100 + year
        let limit = days(year: current.year + 50, month: current.month, day: current.day) * secondsPerDay + second
        let moment = days(year: candidate, month: month, day: day) * secondsPerDay + (timeOfDay(time) ?? 0)
        return moment > limit ? candidate - 100 : candidate
    }

    /// `HH:MM:SS` in seconds; a leap second (`:60`) counts into the next minute.
    private static func timeOfDay(_ text: Substring) -> Int64? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let hour = number(parts[0], digits: 1...2),
            let minute = number(parts[1], digits: 1...2),
            let second = number(parts[2], digits: 1...2), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    /// The month's number (1 for January) of its three-letter name, matched case-sensitively.
    private static func month(_ text: Substring) -> Int64? {
        months.firstIndex(of: String(text)).map { Int64($0) + 1 }
    }

    /// A decimal number of ASCII digits only, as many as `digits` allows.
    private static func number(_ text: Substring, digits: ClosedRange<Int>) -> Int64? {
        guard digits.contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return text.utf8.reduce(0) { $0 * 10 + Int64($1 - 0x30) }
    }

    private static func daysIn(month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a date (Howard Hinnant's `days_from_civil`); a day past its month's end runs on into
    /// the next month.
    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = floorDivision(year, 400).quotient
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDivision(shifted, 146_097).quotient
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Division rounding towards minus infinity, with a remainder that is never negative.
    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value / divisor - (value % divisor < 0 ? 1 : 0)
        return (quotient, value - quotient * divisor)
    }
}
