// list_floor: the least a list downloader of braid's shape spends on libcurl and the kernel, with none of braid's
// own code: a reference row for `many_files.py` (its `floor` tool), not a downloader.
//
// Like braid on a list: THREADS threads (braid's lanes), each with its own multi handle and connections, PER-THREAD
// transfers at a time on each, HTTP/2 over TLS where the server offers it (streams multiplexed, `CURLOPT_PIPEWAIT`),
// HTTP/1.1 otherwise, libcurl's receive buffer 128 KiB as braid's; each body held in memory and written at its end into
// a file made without a name (`O_TMPFILE`) and then linked to its name (`linkat`), as braid's small files are; a body
// past 1 MiB goes to its file as it comes, its blocks allocated first (`posix_fallocate`) as braid's partial files are.
// Unlike braid: a large file is one GET on one connection, never split into ranges; no probe of any kind, no options,
// headers, retries, resume, digests, events or progress; a response is checked only for its status (200) and its length
// (Content-Length); the first failure ends the program (exit 1).
// `named` instead of `unnamed` creates each file at its name (`O_CREAT | O_EXCL`), as curl and wget2 do.
//
// Usage: list_floor LIST DIRECTORY THREADS PER-THREAD unnamed|named [CA-FILE]
// LIST: a URL a line, each followed by an indented `out=NAME` line (braid's and aria2c's list format).
// Built by `many_files.py`: cc -O2 -o list_floor list_floor.c -lcurl -lpthread
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SPILL = 1 << 20, MAX_THREADS = 64 };

static char **urls, **names;
static int count, directory, perThread, unnamed;
static const char *caFile;
static atomic_int nextEntry;

typedef struct {
    int entry;
    CURL *easy;
    char *data;
    size_t length, capacity;
    int fd;  // -1 until the body is placed in its file
    curl_off_t written;
} Body;

static void fail(const char *what, const char *name) {
    fprintf(stderr, "list_floor: %s %s: %s\n", what, name, strerror(errno));
    exit(1);
}

static int createFile(const Body *body) {
    int fd = unnamed ? openat(directory, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666)
                     : openat(directory, names[body->entry], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0) fail("cannot create", names[body->entry]);
    return fd;
}

static void writeAt(Body *body, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t done = pwrite(body->fd, bytes, length, body->written);
        if (done < 0) {
            if (errno == EINTR) continue;
            fail("cannot write", names[body->entry]);
        }
        bytes += done;
        length -= (size_t)done;
        body->written += done;
    }
}

static size_t onWrite(char *bytes, size_t size, size_t count, void *context) {
    Body *body = context;
    size_t length = size * count;
    if (body->fd < 0 && body->length + length <= SPILL) {
        if (body->length + length > body->capacity) {
            body->capacity = (body->length + length) * 2;
            body->data = realloc(body->data, body->capacity);
            if (!body->data) fail("out of memory for", names[body->entry]);
        }
        memcpy(body->data + body->length, bytes, length);
        body->length += length;
        return length;
    }
    if (body->fd < 0) {
        body->fd = createFile(body);
        // A large file's blocks allocated at once, as braid allocates a partial file's.
        curl_off_t announced = -1;
        curl_easy_getinfo(body->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
        if (announced > 0 && (errno = posix_fallocate(body->fd, 0, announced)) != 0)
            fail("cannot allocate", names[body->entry]);
        writeAt(body, body->data, body->length);
    }
    writeAt(body, bytes, length);
    return length;
}

static void name(Body *body) {
    if (!unnamed) return;
    if (linkat(body->fd, "", directory, names[body->entry], AT_EMPTY_PATH) == 0) return;
    // Without CAP_DAC_READ_SEARCH (before Linux 6.10), as braid does: through /proc.
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", body->fd);
    if (errno != ENOENT || linkat(AT_FDCWD, path, directory, names[body->entry], AT_SYMLINK_FOLLOW) != 0)
        fail("cannot name", names[body->entry]);
}

static int addNext(CURLM *multi) {
    int entry = atomic_fetch_add(&nextEntry, 1);
    if (entry >= count) return 0;
    Body *body = calloc(1, sizeof *body);
    CURL *easy = curl_easy_init();
    if (!body || !easy) fail("out of memory for", urls[entry]);
    body->entry = entry;
    body->easy = easy;
    body->fd = -1;
    curl_easy_setopt(easy, CURLOPT_URL, urls[entry]);
    if (caFile) curl_easy_setopt(easy, CURLOPT_CAINFO, caFile);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, onWrite);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, body);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 128L << 10);  // braid's receive buffer (RequestOptions)
    curl_multi_add_handle(multi, easy);
    return 1;
}

static void finish(CURL *easy, CURLcode result) {
    Body *body;
    long status = 0;
    curl_off_t announced = -1;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&body);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
    curl_off_t received = body->fd < 0 ? (curl_off_t)body->length : body->written;
    if (result != CURLE_OK || status != 200 || announced != received) {
        fprintf(stderr, "list_floor: %s: %s, status %ld, %lld of %lld bytes\n", urls[body->entry],
                curl_easy_strerror(result), status, (long long)received, (long long)announced);
        exit(1);
    }
    if (body->fd < 0) {
        body->fd = createFile(body);
        writeAt(body, body->data, body->length);
    }
    name(body);
    close(body->fd);
    free(body->data);
    free(body);
}

static void *lane(void *unused) {
    (void)unused;
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    int added = 0;
    for (int slot = 0; slot < perThread; slot++) added += addNext(multi);
    while (added > 0) {
        int running;
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        int left;
        while ((message = curl_multi_info_read(multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            CURLcode result = message->data.result;
            curl_multi_remove_handle(multi, easy);
            finish(easy, result);
            curl_easy_cleanup(easy);
            added += addNext(multi) - 1;
        }
        if (added > 0) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    curl_multi_cleanup(multi);
    return NULL;
}

static void readList(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) fail("cannot read", path);
    int capacity = 1024;
    urls = malloc(capacity * sizeof *urls);
    names = malloc(capacity * sizeof *names);
    char line[8192];
    while (fgets(line, sizeof line, file)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        if (!strncmp(line, "  out=", 6)) {
            if (count > 0) names[count - 1] = strdup(line + 6);
            continue;
        }
        if (count == capacity) {
            capacity *= 2;
            urls = realloc(urls, capacity * sizeof *urls);
            names = realloc(names, capacity * sizeof *names);
        }
        urls[count] = strdup(line);
        names[count++] = NULL;
    }
    fclose(file);
    for (int entry = 0; entry < count; entry++) {
        if (!names[entry]) {
            fprintf(stderr, "list_floor: %s has no out= line\n", urls[entry]);
            exit(2);
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 6 || argc > 7 || (strcmp(argv[5], "unnamed") && strcmp(argv[5], "named"))) {
        fprintf(stderr, "usage: list_floor LIST DIRECTORY THREADS PER-THREAD unnamed|named [CA-FILE]\n");
        return 2;
    }
    readList(argv[1]);
    directory = open(argv[2], O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    if (directory < 0) fail("cannot open", argv[2]);
    int threads = atoi(argv[3]);
    perThread = atoi(argv[4]);
    unnamed = !strcmp(argv[5], "unnamed");
    caFile = argc == 7 && argv[6][0] ? argv[6] : NULL;
    if (threads < 1 || threads > MAX_THREADS || perThread < 1) {
        fprintf(stderr, "list_floor: THREADS is 1 to %d, PER-THREAD at least 1\n", MAX_THREADS);
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    pthread_t lanes[MAX_THREADS];
    for (int index = 0; index < threads; index++) pthread_create(&lanes[index], NULL, lane, NULL);
    for (int index = 0; index < threads; index++) pthread_join(lanes[index], NULL);
    curl_global_cleanup();
    return 0;
}
