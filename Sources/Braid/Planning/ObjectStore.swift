/// Amazon S3, or a store that speaks its protocol (MinIO, Ceph, R2, moto…): where its buckets are reached, the
/// region requests are signed for, and the credentials that sign them.
///
/// ```swift
/// let store = try ObjectStore(environment: ProcessInfo.processInfo.environment)
/// let plan = try await store.downloads(of: ObjectStoreLocation(parsing: "s3://bucket/data/"), options: options)
/// ```
///
/// Without an endpoint, buckets are AWS's, addressed virtual-hosted style (`https://BUCKET.s3.REGION.amazonaws.com/`;
/// path style for a bucket name with a dot or a capital, which no certificate covers). With one, as S3-compatible
/// stores expect, path style (`ENDPOINT/BUCKET/KEY`). Without credentials, requests go unsigned, as a public bucket
/// allows. Every request is signed only for the store's origin: the signature is a credential
/// (`CredentialScope.Credential.awsSignature`).
public struct ObjectStore: Sendable, Equatable {
    /// The access key that signs requests, as the AWS environment variables give it.
    public struct Credentials: Sendable, Equatable, CustomStringConvertible {
        public var accessKeyID: String
        public var secretAccessKey: String
        /// The session token of temporary credentials (from STS, SSO, an instance role).
        public var sessionToken: String?

        public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }

        /// The key ID only: the secret and the token are never shown.
        public var description: String { "access key \(accessKeyID)" }
    }

    /// An S3-compatible service's URL (`http://127.0.0.1:9000`), its buckets addressed path style; nil for AWS.
    public var endpoint: String?
    /// The region requests are signed for (and, for AWS, sent to).
    public var region: String
    /// The key that signs requests; nil sends them unsigned.
    public var credentials: Credentials?

    public init(endpoint: String? = nil, region: String = "us-east-1", credentials: Credentials? = nil) {
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
    }

    /// The store the AWS environment variables describe, as the AWS CLI and SDKs read them: the endpoint from
    /// `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`; the region from `AWS_REGION`, else `AWS_DEFAULT_REGION`,
    /// else `us-east-1`; the credentials from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`.
    /// An empty variable counts as unset. Refused when only one of the key ID and the secret is set, or a value is
    /// not one libcurl can use (see `validate()`).
    public init(environment: [String: String]) throws(BraidError) {
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        self.init(
            endpoint: value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL"),
            region: value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1")
        switch (value("AWS_ACCESS_KEY_ID"), value("AWS_SECRET_ACCESS_KEY")) {
        case let (key?, secret?):
            credentials = Credentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
        case (nil, nil):
            credentials = nil
        case (nil, _?):
            throw .usage("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not", option: .objectStore)
        case (_?, nil):
            throw .usage("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not", option: .objectStore)
        }
        try validate()
    }

    /// Checks what can be checked before any request: an endpoint is an `http` or `https` URL with a host and
    /// nothing after its path (no query, no login), and the region and credentials can sign.
    public func validate() throws(BraidError) {
        if let endpoint {
            let scheme = endpoint.prefix { $0 != ":" }.lowercased()
            guard scheme == "http" || scheme == "https", endpoint.dropFirst(scheme.count).hasPrefix("://"),
                let origin = Origin(url: endpoint), !origin.host.isEmpty,
                !endpoint.contains("?"), !endpoint.contains("#"), URLUserinfo.range(in: endpoint[...]) == nil,
                endpoint.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
            else {
                throw .usage(
                    "the S3 endpoint '\(endpoint)' is not an http:// or https:// URL of a host", option: .objectStore)
            }
        }
        // The region names a host of AWS's as well as the signature's scope: checked signed or not.
        try AWSSignature.checkName(region, "region")
        try signature?.validate()
    }

    /// The signature of every request to the store; nil when it has no credentials.
    public var signature: AWSSignature? {
        credentials.map {
            AWSSignature(
                accessKeyID: $0.accessKeyID, secretAccessKey: $0.secretAccessKey, sessionToken: $0.sessionToken,
                region: region)
        }
    }

    // MARK: - URLs

    /// The URL of the object `key` in `bucket`, its key percent-encoded as S3 signs it (every byte but
    /// `A–Z a–z 0–9 - . _ ~` and `/`).
    public func url(bucket: String, key: String) -> String {
        bucketBase(bucket) + "/" + Self.percentEncoded(key, keepingSlashes: true)
    }

    /// The bucket's URL without a trailing slash: `ENDPOINT/BUCKET` path style, `https://BUCKET.s3.REGION.…` else.
    func bucketBase(_ bucket: String) -> String {
        if let endpoint {
            let trimmed = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
            return trimmed + "/" + bucket
        }
        let domain = region.hasPrefix("cn-") ? "amazonaws.com.cn" : "amazonaws.com"
        let isHostLabel = bucket.utf8.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D
        }
        return isHostLabel
            ? "https://\(bucket).s3.\(region).\(domain)" : "https://s3.\(region).\(domain)/\(bucket)"
    }

    /// The origin every request to `bucket` goes to, the one its signature is scoped to.
    func origin(of bucket: String) -> String {
        bucketBase(bucket) + "/"
    }

    /// `text` with every byte outside `A–Z a–z 0–9 - . _ ~` (and `/`, when kept) written `%XX`: SigV4's encoding,
    /// which libcurl 7.88 signs the path and query in as they are written.
    static func percentEncoded(_ text: String, keepingSlashes: Bool) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            let unreserved =
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            if unreserved || (keepingSlashes && byte == 0x2F) {
                out.append(byte)
            } else {
                out += [0x25, digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
