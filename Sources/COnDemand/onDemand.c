#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <archive.h>
#include <archive_entry.h>
#include <libxml/xmlreader.h>

// libxml2's own declarations, not COnDemand.h's copy of them (which Braid's Swift sees): the definitions below are
// checked against the library's headers. The copy's values are checked here too.
#define BRAID_CONDEMAND_IMPLEMENTATION
#include "COnDemand.h"

_Static_assert(XML_PARSE_NOENT == 1 << 1 && XML_PARSE_DTDLOAD == 1 << 2 && XML_PARSE_NOERROR == 1 << 5
                   && XML_PARSE_NOWARNING == 1 << 6 && XML_PARSE_NOBLANKS == 1 << 8 && XML_PARSE_NONET == 1 << 11,
               "COnDemand.h's parser options are libxml2's");
_Static_assert(XML_READER_TYPE_ELEMENT == 1 && XML_READER_TYPE_TEXT == 3 && XML_READER_TYPE_CDATA == 4
                   && XML_READER_TYPE_DOCUMENT_TYPE == 10 && XML_READER_TYPE_WHITESPACE == 13
                   && XML_READER_TYPE_SIGNIFICANT_WHITESPACE == 14 && XML_READER_TYPE_END_ELEMENT == 15,
               "COnDemand.h's node types are libxml2's");

/// A shared library loaded on first use, by its soname.
struct library {
    const char *soname;
    pthread_mutex_t lock;
    void *_Atomic handle;
    char reason[256];
};

static struct library xml2 = {"libxml2.so.2", PTHREAD_MUTEX_INITIALIZER, NULL, ""};
static struct library archive = {"libarchive.so.13", PTHREAD_MUTEX_INITIALIZER, NULL, ""};

static int load(struct library *library, char *reason, size_t size) {
    if (atomic_load_explicit(&library->handle, memory_order_acquire) != NULL) return 1;
    pthread_mutex_lock(&library->lock);
    if (atomic_load_explicit(&library->handle, memory_order_relaxed) == NULL) {
        void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
        if (handle != NULL) {
            atomic_store_explicit(&library->handle, handle, memory_order_release);
        } else {
            const char *error = dlerror();
            snprintf(library->reason, sizeof library->reason, "%s", error != NULL ? error : library->soname);
        }
    }
    int loaded = atomic_load_explicit(&library->handle, memory_order_relaxed) != NULL;
    if (!loaded && size > 0) snprintf(reason, size, "%s", library->reason);
    pthread_mutex_unlock(&library->lock);
    return loaded;
}

int braid_load_xml2(char *reason, size_t size) { return load(&xml2, reason, size); }

int braid_load_archive(char *reason, size_t size) { return load(&archive, reason, size); }

/// The address of `name` in `library`. Braid loads a library (and says why it cannot) before it calls any of its
/// functions, so a library that is not loaded here, or lacks the function, is a broken installation: stop.
static void *symbol(struct library *library, const char *name) {
    char reason[256];
    if (!load(library, reason, sizeof reason)) {
        fprintf(stderr, "braid: cannot load %s: %s\n", library->soname, reason);
        abort();
    }
    void *address = dlsym(atomic_load_explicit(&library->handle, memory_order_acquire), name);
    if (address == NULL) {
        fprintf(stderr, "braid: %s has no %s\n", library->soname, name);
        abort();
    }
    return address;
}

/// The library's function `name`, looked up on the first call and kept.
#define REAL(library, name)                                                                                        \
    ({                                                                                                             \
        static __typeof__(&name) _Atomic cached;                                                                   \
        __typeof__(&name) real = atomic_load_explicit(&cached, memory_order_acquire);                              \
        if (real == NULL) {                                                                                        \
            real = (__typeof__(&name))symbol(&library, #name);                                                     \
            atomic_store_explicit(&cached, real, memory_order_release);                                            \
        }                                                                                                          \
        real;                                                                                                      \
    })

/// Defines `name` as the library's function of that name.
#define FORWARD(library, result, name, parameters, arguments)                                                      \
    result name parameters { return REAL(library, name) arguments; }

/// `FORWARD` for a function that returns nothing.
#define FORWARD_VOID(library, name, parameters, arguments)                                                         \
    void name parameters { REAL(library, name) arguments; }

// libxml2's pull reader (Planning/XMLPullReader.swift).
FORWARD(xml2, xmlTextReaderPtr, xmlReaderForMemory,
        (const char *buffer, int size, const char *URL, const char *encoding, int options),
        (buffer, size, URL, encoding, options))
FORWARD_VOID(xml2, xmlFreeTextReader, (xmlTextReaderPtr reader), (reader))
FORWARD(xml2, int, xmlTextReaderRead, (xmlTextReaderPtr reader), (reader))
FORWARD(xml2, int, xmlTextReaderNodeType, (xmlTextReaderPtr reader), (reader))
FORWARD(xml2, int, xmlTextReaderIsEmptyElement, (xmlTextReaderPtr reader), (reader))
FORWARD(xml2, int, xmlTextReaderGetParserLineNumber, (xmlTextReaderPtr reader), (reader))
FORWARD(xml2, xmlChar *, xmlTextReaderGetAttribute, (xmlTextReaderPtr reader, const xmlChar *name), (reader, name))
FORWARD(xml2, const xmlChar *, xmlTextReaderConstValue, (xmlTextReaderPtr reader), (reader))
FORWARD(xml2, const xmlChar *, xmlTextReaderConstNamespaceUri, (xmlTextReaderPtr reader), (reader))
FORWARD(xml2, const xmlChar *, xmlTextReaderConstLocalName, (xmlTextReaderPtr reader), (reader))
FORWARD(xml2, const xmlChar *, xmlTextReaderConstEncoding, (xmlTextReaderPtr reader), (reader))
FORWARD_VOID(xml2, xmlTextReaderSetStructuredErrorHandler,
        (xmlTextReaderPtr reader, xmlStructuredErrorFunc handler, void *argument), (reader, handler, argument))

void braid_xml_free(void *pointer) {
    // libxml2's `xmlFree` is a variable holding its free function (a per-thread one only where it is built with
    // LIBXML_THREAD_ALLOC_ENABLED, which Debian's is not).
    xmlFreeFunc *freeFunction = (xmlFreeFunc *)symbol(&xml2, "xmlFree");
    (*freeFunction)(pointer);
}

// libarchive's streaming reader (Extraction/ArchiveExtractor*.swift).
FORWARD(archive, struct archive *, archive_read_new, (void), ())
FORWARD(archive, int, archive_read_support_filter_bzip2, (struct archive *a), (a))
FORWARD(archive, int, archive_read_support_filter_gzip, (struct archive *a), (a))
FORWARD(archive, int, archive_read_support_filter_lzma, (struct archive *a), (a))
FORWARD(archive, int, archive_read_support_filter_none, (struct archive *a), (a))
FORWARD(archive, int, archive_read_support_filter_xz, (struct archive *a), (a))
FORWARD(archive, int, archive_read_support_filter_zstd, (struct archive *a), (a))
FORWARD(archive, int, archive_read_support_format_gnutar, (struct archive *a), (a))
FORWARD(archive, int, archive_read_support_format_tar, (struct archive *a), (a))
FORWARD(archive, int, archive_read_support_format_zip_streamable, (struct archive *a), (a))
FORWARD(archive, int, archive_read_open,
        (struct archive *a, void *client, archive_open_callback *opener, archive_read_callback *reader,
         archive_close_callback *closer),
        (a, client, opener, reader, closer))
FORWARD(archive, int, archive_read_next_header, (struct archive *a, struct archive_entry **entry), (a, entry))
FORWARD(archive, la_int64_t, archive_read_header_position, (struct archive *a), (a))
FORWARD(archive, int, archive_read_data_block,
        (struct archive *a, const void **buffer, size_t *size, la_int64_t *offset), (a, buffer, size, offset))
FORWARD(archive, int, archive_read_data_skip, (struct archive *a), (a))
FORWARD(archive, int, archive_read_free, (struct archive *a), (a))
FORWARD(archive, int, archive_filter_count, (struct archive *a), (a))
FORWARD(archive, const char *, archive_error_string, (struct archive *a), (a))
FORWARD(archive, int, archive_format, (struct archive *a), (a))
FORWARD(archive, __LA_MODE_T, archive_entry_filetype, (struct archive_entry *entry), (entry))
FORWARD(archive, const char *, archive_entry_hardlink, (struct archive_entry *entry), (entry))
FORWARD(archive, const char *, archive_entry_hardlink_utf8, (struct archive_entry *entry), (entry))
FORWARD(archive, time_t, archive_entry_mtime, (struct archive_entry *entry), (entry))
FORWARD(archive, long, archive_entry_mtime_nsec, (struct archive_entry *entry), (entry))
FORWARD(archive, int, archive_entry_mtime_is_set, (struct archive_entry *entry), (entry))
FORWARD(archive, const char *, archive_entry_pathname, (struct archive_entry *entry), (entry))
FORWARD(archive, const char *, archive_entry_pathname_utf8, (struct archive_entry *entry), (entry))
FORWARD(archive, __LA_MODE_T, archive_entry_perm, (struct archive_entry *entry), (entry))
FORWARD(archive, la_int64_t, archive_entry_size, (struct archive_entry *entry), (entry))
FORWARD(archive, int, archive_entry_size_is_set, (struct archive_entry *entry), (entry))
FORWARD(archive, const char *, archive_entry_symlink, (struct archive_entry *entry), (entry))
FORWARD(archive, const char *, archive_entry_symlink_utf8, (struct archive_entry *entry), (entry))
