/// One server a transfer fetches from: the URL the user gave, or one of its mirrors, with its own validators,
/// request headers and health.
struct Source: Equatable, Sendable {
    let resource: RemoteResource
    let host: String
    /// The user's headers (when this source is on an origin the user named), plus `If-Range`.
    let headers: [String]
    var alive = true
    /// Failures in a row on this source.
    var failures = 0
    var activeConnections = 0

    /// Consecutive failures after which a source is dropped, while another is still alive.
    static let maximumFailures = 3

    init(resource: RemoteResource, options: RequestOptions, usesRanges: Bool) {
        self.resource = resource
        host = Origin(url: resource.resolvedURL)?.host ?? ""
        var headers = options.headers(for: resource.resolvedURL)
        if usesRanges, let validator = resource.ifRangeValidator {
            headers.append("If-Range: \(validator)")
        }
        self.headers = headers
    }
}
