/// How the engine makes a request to a cache peer: at the URL its template gives for the origin's current URL
/// (renewed with it when a signed URL expires), and with none of the user's credentials.
///
/// A peer is not an origin the user named: it is sent none of the user's headers, cookies, netrc logins, URL
/// logins or AWS signatures, only the login written in its own template. The origin URL's query goes to it as
/// part of the path it is asked for, since the cache must fetch that URL (docs/SECURITY.md).
struct CachePeerRequests {
    /// The peers, in the order of the router's indices.
    var peers: [CachePeer] = []
    /// The options of every request to a peer: the download's, without the user's credentials.
    var options: RequestOptions?

    init() {}

    init(peers: [CachePeer], downloadOptions: RequestOptions) {
        self.peers = peers
        options = downloadOptions.forCachePeers(peers)
    }

    /// Where a request to `source` goes and with which options: a peer's URL for the origin's file, else the
    /// source's own URL with `options`.
    func target(of source: Source, origin: Source, options: RequestOptions) -> (url: String, options: RequestOptions) {
        guard let peer = source.peer, let peerOptions = self.options,
            let url = peers[peer].url(for: origin.resource.resolvedURL)
        else { return (source.resource.resolvedURL, options) }
        return (url, peerOptions)
    }
}

extension RequestOptions {
    /// These options for requests to `peers`: none of the user's headers, cookie jar, netrc file or AWS signature,
    /// and a credential scope that holds only the peers' own templates, so that a login written in a peer's
    /// template is the one it gets.
    func forCachePeers(_ peers: [CachePeer]) -> RequestOptions {
        var options = self
        options.headers = []
        options.cookieFilePath = nil
        options.netrcPath = nil
        options.awsSignature = nil
        options.credentials = CredentialScope(userNamed: peers.map(\.base))
        return options
    }
}
