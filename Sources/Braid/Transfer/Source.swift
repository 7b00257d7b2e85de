#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One server the engine fetches from: the URL the user gave, or one of its mirrors, with its own validators,
/// request headers and health.
struct Source {
    let resource: RemoteResource
    let host: String
    /// The user's headers (minus credentials when the host is not the one named), plus `If-Range`.
    let headers: [String]
    var alive = true
    /// Failures in a row on this source.
    var failures = 0
    var activeConnections = 0
    /// This source's place in a shared `ConnectionBudget`, when the download has one.
    var budgetTicket: Int?

    /// Consecutive failures after which a source is dropped, while another is still alive.
    static let maximumFailures = 3

    init(resource: RemoteResource, options: RequestOptions, usesRanges: Bool) {
        self.resource = resource
        let originalHost = URLComponents(string: resource.requestedURL)?.host
        let resolvedHost = URLComponents(string: resource.resolvedURL)?.host
        host = resolvedHost?.lowercased() ?? ""
        var headers = options.headers(forHost: resolvedHost, originalHost: originalHost)
        if usesRanges, let validator = resource.ifRangeValidator {
            headers.append("If-Range: \(validator)")
        }
        self.headers = headers
    }
}
