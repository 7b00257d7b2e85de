extension TestContent {
    /// A strong entity tag derived from seed and size, so that changing either is visible to `If-Range`.
    public var entityTag: String {
        "\"braid-\(String(seed, radix: 16))-\(String(size, radix: 16))\""
    }

    /// The `Last-Modified` date as an IMF-fixdate; derived from the seed (not the clock) so that runs are
    /// reproducible and a new seed gives a new date.
    public var lastModified: String {
        HTTPDate.format(secondsSinceEpoch: lastModifiedSecondsSince1970)
    }

    /// The `Last-Modified` date in seconds since 1970 UTC, to compare with a file's modification time.
    public var lastModifiedSecondsSince1970: Int {
        1_500_000_000 + Int(seed % 100_000_000)
    }
}
