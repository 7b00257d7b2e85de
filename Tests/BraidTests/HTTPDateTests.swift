import Testing

@testable import Braid

/// The three HTTP-date forms RFC 9110 §5.6.7 asks recipients to accept, the two-digit years of the obsolete one,
/// and the IMF-fixdate Braid sends. Unless a test says otherwise the wall clock reads 2023-11-14 22:13:20 UTC.
@Suite("HTTPDate")
struct HTTPDateTests {
    static let wallClock: Double = 1_700_000_000

    @Test(
        "Each of the three forms reads as the same instant",
        arguments: [
            ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
            ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
            ("Sun Nov  6 08:49:37 1994", 784_111_777),
            ("Sun Nov 6 08:49:37 1994", 784_111_777),
            ("Thu Nov 16 22:13:20 2023", 1_700_172_800),
            ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
            ("Tue, 29 Feb 2000 12:00:00 GMT", 951_825_600),
            ("Tuesday, 29-Feb-00 12:00:00 GMT", 951_825_600),
            ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
            ("Sat, 31 Dec 2016 23:59:60 GMT", 1_483_228_800),
        ] as [(String, Double)]
    )
    func threeForms(text: String, seconds: Double) {
        #expect(HTTPDate.parse(text, wallClock: Self.wallClock) == seconds)
    }

    @Test(
        "A two-digit year is in this century unless that is more than 50 years from now",
        arguments: [
            ("Thursday, 01-Jan-70 00:00:00 GMT", wallClock, 3_155_760_000.0),
            ("Friday, 01-Jan-99 00:00:00 GMT", wallClock, 915_148_800),
            ("Tuesday, 14-Nov-73 22:13:20 GMT", wallClock, 3_277_923_200),
            ("Wednesday, 14-Nov-73 22:13:21 GMT", wallClock, 122_163_201),
            ("Tuesday, 14-Nov-23 22:13:20 GMT", wallClock, 1_700_000_000),
            // In 1994, 94 is this year, not 2094.
            ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777, 784_111_777),
        ] as [(String, Double, Double)]
    )
    func twoDigitYears(text: String, wallClock: Double, seconds: Double) {
        #expect(HTTPDate.parse(text, wallClock: wallClock) == seconds)
    }

    @Test(
        "Anything else is no HTTP date",
        arguments: [
            "", "GMT", "soon", "1994-11-06T08:49:37Z", "784111777",
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 nov 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT", "Sun, +6 Nov 1994 08:49:37 GMT", "Sun, 006 Nov 1994 08:49:37 GMT",
            "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 31 Nov 1994 08:49:37 GMT", "Mon, 29 Feb 2100 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:37 GMT", "Sun, 06 Nov 1994 08:49:61 GMT",
            "Sun, 06 Nov 1994 08:49:37:00 GMT", "Sun, 06 Nov 1969 23:59:59 GMT", "Sun, 06 Nov 10000 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sunday, 06 Nov 94 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 UTC", "Sunday, 06--94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 94", "Sunday Nov  6 08:49:37 1994", "Sun, Nov  6 08:49:37 1994",
            "Sun Nov  6 08:49:37 1994 GMT",
        ]
    )
    func invalid(text: String) {
        #expect(HTTPDate.parse(text, wallClock: Self.wallClock) == nil)
    }

    @Test(
        "An S3 listing's LastModified reads to the second, its fraction dropped; other forms are refused",
        arguments: [
            ("1994-11-06T08:49:37.000Z", 784_111_777.0),
            ("1994-11-06T08:49:37.999Z", 784_111_777),
            ("1994-11-06T08:49:37Z", 784_111_777),
            ("2000-02-29T12:00:00.5Z", 951_825_600),
            ("1970-01-01T00:00:00.000Z", 0),
            ("9999-12-31T23:59:59.000Z", 253_402_300_799),
            ("1994-11-06T08:49:37.000", nil),
            ("1994-11-06T08:49:37+00:00", nil),
            ("1994-11-06 08:49:37Z", nil),
            ("94-11-06T08:49:37Z", nil),
            ("1994-11-6T08:49:37Z", nil),
            ("1994-11-06T8:49:37Z", nil),
            ("1994-13-06T08:49:37Z", nil),
            ("2100-02-29T08:49:37Z", nil),
            ("1994-11-06T24:00:00Z", nil),
            ("1994-11-06T08:49:37.Z", nil),
            ("1994-11-06T08:49:37.x1Z", nil),
            ("1969-12-31T23:59:59Z", nil),
            ("Sun, 06 Nov 1994 08:49:37 GMT", nil),
            ("", nil),
        ] as [(String, Double?)]
    )
    func listingTime(text: String, seconds: Double?) {
        #expect(HTTPDate.parse(listingTime: text) == seconds)
    }

    @Test(
        "Times are sent as IMF-fixdates",
        arguments: [
            (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
            (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
            (951_825_600, "Tue, 29 Feb 2000 12:00:00 GMT"),
            (1_700_000_000, "Tue, 14 Nov 2023 22:13:20 GMT"),
            (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
            (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
        ] as [(Int64, String)]
    )
    func format(seconds: Int64, text: String) {
        #expect(HTTPDate.format(secondsSince1970: seconds) == text)
    }

    @Test("What is sent reads back as the same time, on a day of every month from 1970 to 9999")
    func roundTrip() {
        // A step of a month and 53 minutes walks through the days of the month and the hours of the day.
        let misread = stride(from: Int64(0), through: 253_402_300_799, by: 2_632_923).filter { seconds in
            HTTPDate.parse(HTTPDate.format(secondsSince1970: seconds), wallClock: 0) != Double(seconds)
        }
        #expect(misread.isEmpty)
    }
}
