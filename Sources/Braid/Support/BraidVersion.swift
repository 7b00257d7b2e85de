import CCurl
import COpenSSL

/// Braid's version, and those of the libcurl and OpenSSL it runs on, as `braid --version` prints them. The
/// libraries' versions are the ones loaded at run time, which may be newer than the headers Braid was built with.
public enum BraidVersion {
    /// Braid's own version, also sent in the User-Agent (`braid/0.1.0`).
    public static let current = "0.1.0"

    /// The libcurl that makes Braid's requests, e.g. `7.88.1`.
    public static var libcurl: String {
        String(cString: curlInfo.pointee.version)
    }

    /// The TLS library that libcurl was built with, e.g. `OpenSSL/3.0.15`; nil for a libcurl without TLS.
    public static var libcurlTLS: String? {
        curlInfo.pointee.ssl_version.map { String(cString: $0) }
    }

    /// The OpenSSL (libcrypto) that computes Braid's digests, e.g. `OpenSSL 3.0.15 3 Sep 2024`.
    public static var openSSL: String {
        String(cString: OpenSSL_version(OPENSSL_VERSION))
    }

    private static var curlInfo: UnsafePointer<curl_version_info_data> {
        Curl.ensureInitialised()
        return braid_curl_version_info()
    }
}
