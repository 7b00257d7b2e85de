import CCurl

extension EasyHandle {
    /// Sets the request's URL and header lines, with the user's credentials that `options.credentials` permits
    /// to `url`'s origin and none other: the one place a request is given a login, a netrc file, cookies, the
    /// user's headers or an AWS signature. Every credential is set or cleared each time, so that nothing an earlier request on this
    /// handle carried (to an origin the user named) stays for this one.
    func setCredentials(for url: String, options: RequestOptions, headers: [String]) {
        // One parse of `url` decides every credential (`CredentialScope.grant(for:)`).
        let grant = options.credentials.grant(for: url)
        // The userinfo: the user's own for this origin, or none (`CredentialScope.requestURL(for:)`).
        set(CURLOPT_URL, grant.requestURL)
        // libcurl matches a netrc entry by host alone, whatever the port, scheme or who named the URL.
        let netrc = grant.permits(.netrc) ? options.netrcPath : nil
        set(
            CURLOPT_NETRC,
            netrc == nil ? Int(CURL_NETRC_IGNORED.rawValue) : Int(CURL_NETRC_OPTIONAL.rawValue))
        set(CURLOPT_NETRC_FILE, netrc)
        // A handle keeps its cookies from one request to the next (even through curl_easy_reset), and a jar
        // scopes them by domain alone: the cookies in memory are dropped and the engine switched off, then on
        // again, reading the jar afresh, only for an origin the user named.
        set(CURLOPT_COOKIELIST, "ALL")
        set(CURLOPT_COOKIEFILE, nil as String?)
        if let jar = options.cookieFilePath, grant.permits(.cookie) {
            set(CURLOPT_COOKIEFILE, jar)
        }
        // Setting CURLOPT_AWS_SIGV4 switches the handle's authentication to SigV4 and clearing it does not switch
        // it back: both are set each time.
        let signature = grant.permits(.awsSignature) ? options.awsSignature : nil
        set(CURLOPT_AWS_SIGV4, signature?.provider)
        set(CURLOPT_USERPWD, signature?.login)
        set(CURLOPT_HTTPAUTH, Int(signature == nil ? braid_curlauth_basic : braid_curlauth_aws_sigv4))
        setHeaders(
            (grant.permits(.header) ? options.headers : []) + (signature?.headerLines ?? []) + headers)
    }
}
