#include "CCurl.h"

#include <pthread.h>
#include <stdlib.h>

CURLcode braid_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode braid_easy_setopt_int64(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode braid_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode braid_easy_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode braid_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode braid_easy_setopt_data_callback(CURL *handle, CURLoption option, braid_curl_data_callback cb) {
    return curl_easy_setopt(handle, option, cb);
}

CURLcode braid_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode braid_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode braid_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLMcode braid_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

struct braid_share {
    CURLSH *handle;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

static void braid_share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *userdata) {
    (void)handle;
    (void)access;
    pthread_mutex_lock(&((braid_share *)userdata)->locks[data]);
}

static void braid_share_unlock(CURL *handle, curl_lock_data data, void *userdata) {
    (void)handle;
    pthread_mutex_unlock(&((braid_share *)userdata)->locks[data]);
}

braid_share *braid_share_create(void) {
    braid_share *share = calloc(1, sizeof(braid_share));
    if (share == NULL) return NULL;
    share->handle = curl_share_init();
    if (share->handle == NULL) {
        free(share);
        return NULL;
    }
    for (int index = 0; index < CURL_LOCK_DATA_LAST; index++) pthread_mutex_init(&share->locks[index], NULL);
    curl_share_setopt(share->handle, CURLSHOPT_LOCKFUNC, braid_share_lock);
    curl_share_setopt(share->handle, CURLSHOPT_UNLOCKFUNC, braid_share_unlock);
    curl_share_setopt(share->handle, CURLSHOPT_USERDATA, share);
    curl_share_setopt(share->handle, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share->handle, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    return share;
}

CURLSH *braid_share_handle(braid_share *share) { return share->handle; }

void braid_share_destroy(braid_share *share) {
    curl_share_cleanup(share->handle);
    for (int index = 0; index < CURL_LOCK_DATA_LAST; index++) pthread_mutex_destroy(&share->locks[index]);
    free(share);
}

int braid_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result) {
    int queued = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

const curl_version_info_data *braid_curl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}
