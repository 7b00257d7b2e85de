#ifndef BRAID_CCURL_H
#define BRAID_CCURL_H

#include <curl/curl.h>

#pragma clang assume_nonnull begin

/// Typed, non-variadic faces of libcurl's variadic entry points, which Swift cannot call.
/// One wrapper per argument kind, as swift-corelibs-foundation's _CFURLSessionInterface does.

typedef size_t (*braid_curl_data_callback)(char *_Nonnull data, size_t size, size_t count, void *_Nullable userdata);

CURLcode braid_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode braid_easy_setopt_int64(CURL *handle, CURLoption option, curl_off_t value);
CURLcode braid_easy_setopt_string(CURL *handle, CURLoption option, const char *_Nullable value);
CURLcode braid_easy_setopt_ptr(CURL *handle, CURLoption option, void *_Nullable value);
CURLcode braid_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *_Nullable value);
CURLcode braid_easy_setopt_data_callback(CURL *handle, CURLoption option, braid_curl_data_callback _Nullable cb);

CURLcode braid_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
/// The returned string is owned by the handle and valid until the next call on it.
CURLcode braid_easy_getinfo_string(CURL *handle, CURLINFO info, const char *_Nullable *_Nonnull value);
CURLcode braid_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);

CURLMcode braid_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// A libcurl share handle for DNS look-ups and TLS sessions, with a mutex per kind of shared data, so that easy
/// handles used on different threads may share it (libcurl calls the locks; it never shares connections here).
typedef struct braid_share braid_share;

/// A new share of DNS and TLS sessions; NULL when out of memory.
braid_share *_Nullable braid_share_create(void);
/// The libcurl handle, for `CURLOPT_SHARE`.
CURLSH *braid_share_handle(braid_share *share);
/// Frees the share; no easy handle may use it any more.
void braid_share_destroy(braid_share *share);

/// Reads one finished-transfer message; returns 1 and fills `easy`/`result` when there was one, 0 otherwise.
int braid_multi_next_done(CURLM *multi, CURL *_Nullable *_Nonnull easy, CURLcode *result);

/// libcurl's run-time version information in the layout these headers describe (`CURLVERSION_NOW`, a macro
/// Swift cannot pass). Owned by libcurl; valid for the life of the process.
const curl_version_info_data *braid_curl_version_info(void);

/// `CURLOPT_HTTPAUTH` values (macros with casts, which Swift cannot import): libcurl's default, and AWS SigV4.
static const unsigned long braid_curlauth_basic = CURLAUTH_BASIC;
static const unsigned long braid_curlauth_aws_sigv4 = CURLAUTH_AWS_SIGV4;

/// Writing fewer bytes than offered makes libcurl abort the transfer with CURLE_WRITE_ERROR.
static const size_t braid_curl_abort_write = 0;

/// Returned by a write callback: libcurl keeps the chunk and stops reading the connection until
/// `braid_easy_resume_receiving`, which hands the chunk to the callback again.
static const size_t braid_curl_pause_write = CURL_WRITEFUNC_PAUSE;

/// Lifts a pause (`curl_easy_pause` with `CURLPAUSE_CONT`, a macro Swift cannot see). The write callback may be
/// called before this returns, with the chunk kept at the pause.
static inline CURLcode braid_easy_resume_receiving(CURL *handle) { return curl_easy_pause(handle, CURLPAUSE_CONT); }

/// Pauses receiving and lifts the pause at once, which makes libcurl read the transfer's connection again: for data
/// already read off the socket and left in the stream's buffer, which libcurl 7.88's HTTP/2 code does not always hand
/// over. A transfer its write callback had paused is handed its kept chunk, and pauses again if the callback says so.
static inline void braid_easy_wake_receiving(CURL *handle) {
    curl_easy_pause(handle, CURLPAUSE_RECV);
    curl_easy_pause(handle, CURLPAUSE_CONT);
}

#pragma clang assume_nonnull end

#endif
