/// Signs every request with AWS Signature Version 4, as Amazon S3 and the stores that speak its protocol require:
/// libcurl computes the signature (`CURLOPT_AWS_SIGV4`) from the access key, the secret and the request itself.
///
/// A signature is a credential: it goes only to the origins the user named (`CredentialScope`, kind
/// `.awsSignature`), so a redirect to another origin is followed unsigned. The secret and the session token appear
/// in no description and no message.
public struct AWSSignature: Sendable, Equatable, CustomStringConvertible {
    /// The access key ID (`AWS_ACCESS_KEY_ID`).
    public var accessKeyID: String
    /// The secret access key (`AWS_SECRET_ACCESS_KEY`).
    public var secretAccessKey: String
    /// The session token of temporary credentials (`AWS_SESSION_TOKEN`), sent as `x-amz-security-token`.
    public var sessionToken: String?
    /// The region the requests are signed for, such as `us-east-1`.
    public var region: String
    /// The service the requests are signed for: `s3`.
    public var service: String

    public init(
        accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String,
        service: String = "s3"
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
        self.service = service
    }

    public var description: String { "AWS SigV4 for \(service) in \(region)" }

    /// The SHA-256 of an empty body, which every request Braid signs has (GET and HEAD): S3 refuses a signed
    /// request without its `x-amz-content-sha256`, which libcurl 7.88 does not add by itself.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// libcurl's `CURLOPT_AWS_SIGV4` argument.
    var provider: String { "aws:amz:\(region):\(service)" }

    /// libcurl's `CURLOPT_USERPWD`: the key signs, it is never sent.
    var login: String { "\(accessKeyID):\(secretAccessKey)" }

    /// The header lines a signed request carries besides the signature; libcurl signs them with the others.
    var headerLines: [String] {
        ["x-amz-content-sha256: \(Self.emptyPayloadHash)"]
            + (sessionToken.map { ["x-amz-security-token: \($0)"] } ?? [])
    }

    /// Refuses what libcurl could not sign, or would read as something else: an empty or `:`-holding key ID (the
    /// login is split at its first `:`), a region or service outside `a-z0-9-` (the provider string is split at
    /// `:`), and a control character anywhere (a line break would split a header).
    func validate() throws(BraidError) {
        func refuse(_ message: String) -> BraidError { .usage(message, option: .awsSignature) }
        guard !accessKeyID.isEmpty, !accessKeyID.contains(":") else {
            throw refuse("the AWS access key ID must be non-empty and have no ':'")
        }
        guard !secretAccessKey.isEmpty else { throw refuse("the AWS secret access key is empty") }
        for (text, name) in [(accessKeyID, "access key ID"), (secretAccessKey, "secret access key")]
        where !Self.isPrintable(text) {
            throw refuse("the AWS \(name) has a control character or a blank")
        }
        if let sessionToken, sessionToken.isEmpty || !Self.isPrintable(sessionToken) {
            throw refuse("the AWS session token is empty or has a control character or a blank")
        }
        try Self.checkName(region, "region")
        try Self.checkName(service, "service")
    }

    /// Refuses a region or service outside `a-z0-9-`, which could not be put in the provider string (split at
    /// `:`), nor in a host name.
    static func checkName(_ text: String, _ name: String) throws(BraidError) {
        guard !isName(text) else { return }
        throw .usage(
            "the AWS \(name) '\(text)' must be lower-case letters, digits and '-', such as us-east-1",
            option: .awsSignature)
    }

    /// Visible ASCII only: what keys, secrets and tokens are made of.
    private static func isPrintable(_ text: String) -> Bool {
        text.utf8.count <= 8192 && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    private static func isName(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }
}
