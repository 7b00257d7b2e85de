import NIOHTTP1

/// Where an HTTP request goes, decided from its method and target alone: a pure value, so the server's routing can
/// be read and tested without a socket.
enum HTTPRoute: Equatable {
    /// `GET /` or `GET /index.html`: the page.
    case page
    /// `POST /jsonrpc`: a JSON-RPC request or batch in the body.
    case rpcPost
    /// `GET /jsonrpc?method=…&id=…&params=…`: aria2's GET form, with the query after `?` (possibly empty).
    case rpcGet(query: Substring)
    /// `OPTIONS /jsonrpc`: a browser's CORS preflight.
    case rpcPreflight
    /// A known path asked with a method it does not serve; `allow` is the `Allow` header's value.
    case methodNotAllowed(allow: String)
    /// Any other path.
    case notFound

    /// Whether the route reaches the JSON-RPC endpoint (the preflight does not: it only answers headers).
    var isRPC: Bool {
        switch self {
        case .rpcPost, .rpcGet: true
        default: false
        }
    }

    /// The path of the JSON-RPC endpoint, for plain HTTP and for the WebSocket upgrade alike.
    static let rpcPath = "/jsonrpc"

    init(method: HTTPMethod, target: String) {
        let (path, query) = Self.split(target)
        switch path {
        case "/", "/index.html":
            self = method == .GET ? .page : .methodNotAllowed(allow: "GET")
        case Self.rpcPath[...]:
            switch method {
            case .POST: self = .rpcPost
            case .GET: self = .rpcGet(query: query)
            case .OPTIONS: self = .rpcPreflight
            default: self = .methodNotAllowed(allow: "POST, GET, OPTIONS")
            }
        default:
            self = .notFound
        }
    }

    /// The path of a request target (what comes before `?` or `#`) and its query (between `?` and `#`).
    static func split(_ target: String) -> (path: Substring, query: Substring) {
        let withoutFragment = target.prefix { $0 != "#" }
        guard let mark = withoutFragment.firstIndex(of: "?") else { return (withoutFragment, "") }
        return (withoutFragment[..<mark], withoutFragment[withoutFragment.index(after: mark)...])
    }
}
