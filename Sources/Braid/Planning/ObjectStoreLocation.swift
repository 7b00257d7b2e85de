/// An object, or a prefix of keys, in an S3 bucket, as `s3://BUCKET/KEY` names it (the form `aws s3`, `s5cmd` and
/// `rclone` take): one object when the key is given and does not end in `/`, else every object whose key starts
/// with it (`s3://BUCKET/PREFIX/`, and `s3://BUCKET` or `s3://BUCKET/` for the whole bucket).
///
/// The key is written as it is, not percent-encoded (`s3://photos/2024/my trip.jpg`); the bucket names the bucket,
/// not a host. Where the bucket lives is the `ObjectStore`'s business.
public struct ObjectStoreLocation: Sendable, Hashable, CustomStringConvertible {
    public let bucket: String
    /// The key, or the prefix of the keys: everything after the bucket's `/`, possibly empty.
    public let key: String

    /// `s3://`, in any case.
    public static let scheme = "s3"
    /// The longest key S3 accepts, in bytes of UTF-8.
    public static let maximumKeyLength = 1024

    /// Whether `text` is written as an `s3://` URL (it may still be a malformed one).
    public static func isObjectStoreURL(_ text: String) -> Bool {
        text.prefix(5).lowercased() == "s3://"
    }

    /// Parses `s3://BUCKET/KEY`. Refused, as a usage error, when the scheme is not `s3`, the bucket is not a name
    /// S3 gives buckets (letters, digits, `.`, `-` and `_`, at most 255 characters), or the key is longer than S3
    /// allows or has a control character.
    public init(parsing text: String) throws(BraidError) {
        guard Self.isObjectStoreURL(text) else {
            throw .usage("'\(text)' is not an s3:// URL", option: .objectStore)
        }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        let key = String(rest.dropFirst(bucket.count + 1))
        guard !bucket.isEmpty else { throw .usage("'\(text)' names no bucket", option: .objectStore) }
        guard bucket.utf8.count <= 255, bucket.utf8.allSatisfy(Self.isBucketByte) else {
            throw .usage(
                "'\(bucket)' is not a bucket name (letters, digits, '.', '-' and '_' only)", option: .objectStore)
        }
        guard key.utf8.count <= Self.maximumKeyLength else {
            throw .usage("the key is longer than \(Self.maximumKeyLength) bytes", option: .objectStore)
        }
        guard !key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .usage("the key '\(key)' has a control character", option: .objectStore)
        }
        self.init(bucket: bucket, key: key)
    }

    /// A location from its parts, as they are; `ObjectStore` checks them before any request.
    public init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// Whether this names every object below a prefix rather than one object.
    public var isPrefix: Bool { key.isEmpty || key.hasSuffix("/") }

    public var description: String { "s3://\(bucket)/\(key)" }

    private static func isBucketByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
