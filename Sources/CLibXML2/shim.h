#ifndef BRAID_CLIBXML2_H
#define BRAID_CLIBXML2_H

#include <libxml/parser.h>
#include <libxml/xmlreader.h>

#pragma clang assume_nonnull begin

/// Frees a string libxml2 allocated (`xmlTextReaderGetAttribute`'s result). `xmlFree` is a macro over a
/// per-thread function pointer when libxml2 is built with threads, which Swift cannot call.
static inline void braid_xml_free(void *_Nullable pointer) {
    xmlFree(pointer);
}

/// A structured error handler that drops every message, so that a hostile document prints nothing to stderr.
static inline void braid_xml_ignore_error(void *_Nullable context, xmlErrorPtr _Nullable error) {
    (void)context;
    (void)error;
}

#pragma clang assume_nonnull end

#endif
