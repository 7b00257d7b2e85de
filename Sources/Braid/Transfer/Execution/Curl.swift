import CCurl

/// libcurl's process-wide state, initialised once before any handle exists (curl_global_init is not
/// thread-safe, so every handle constructor goes through `ensureInitialised()`).
enum Curl {
    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    static func ensureInitialised() {
        precondition(initialised, "libcurl failed to initialise")
    }

    /// libcurl's one-line description of a result code.
    static func describe(_ code: CURLcode) -> String {
        String(cString: curl_easy_strerror(code))
    }
}
