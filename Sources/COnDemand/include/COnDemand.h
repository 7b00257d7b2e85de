#ifndef BRAID_CONDEMAND_H
#define BRAID_CONDEMAND_H

// libxml2 (Metalink, S3 listings) and libarchive (--extract), loaded the first time a download needs them rather
// than linked: with their own dependencies (ICU, nettle, the compressors) they cost each `braid` about 1.5 ms of
// loading before its first request. Their functions keep their names: onDemand.c defines each one Braid calls,
// which forwards to the library once loaded, and is compiled against the libraries' own headers, which check it.

#include <stddef.h>

#include <archive.h>
#include <archive_entry.h>

#pragma clang assume_nonnull begin

/// Loads libxml2; 1 once it is loaded, else 0 with why in `reason` (`size` bytes, NUL-terminated).
int braid_load_xml2(char *reason, size_t size);

/// Loads libarchive; 1 once it is loaded, else 0 with why in `reason` (`size` bytes, NUL-terminated).
int braid_load_archive(char *reason, size_t size);

/// Frees a string libxml2 allocated (`xmlTextReaderGetAttribute`'s result) with libxml2's own free function, which
/// it keeps in a variable (`xmlFree`; a macro over a per-thread one in builds with per-thread allocation hooks).
void braid_xml_free(void *_Nullable pointer);

#pragma clang assume_nonnull end

#ifndef BRAID_CONDEMAND_IMPLEMENTATION
// What Braid uses of libxml2's pull reader (libxml/xmlreader.h, libxml/parser.h, libxml/xmlerror.h), declared as
// libxml2 declares it: its headers need their own include path, which Swift's importer would then need too.

typedef unsigned char xmlChar;
typedef struct _xmlTextReader *xmlTextReaderPtr;
typedef struct _xmlError *xmlErrorPtr;
typedef void (*xmlStructuredErrorFunc)(void *_Nullable userData, xmlErrorPtr _Nullable error);

typedef enum {
    XML_PARSE_NOENT = 1 << 1,
    XML_PARSE_DTDLOAD = 1 << 2,
    XML_PARSE_NOERROR = 1 << 5,
    XML_PARSE_NOWARNING = 1 << 6,
    XML_PARSE_NOBLANKS = 1 << 8,
    XML_PARSE_NONET = 1 << 11,
} xmlParserOption;

typedef enum {
    XML_READER_TYPE_ELEMENT = 1,
    XML_READER_TYPE_TEXT = 3,
    XML_READER_TYPE_CDATA = 4,
    XML_READER_TYPE_DOCUMENT_TYPE = 10,
    XML_READER_TYPE_WHITESPACE = 13,
    XML_READER_TYPE_SIGNIFICANT_WHITESPACE = 14,
    XML_READER_TYPE_END_ELEMENT = 15,
} xmlReaderTypes;

xmlTextReaderPtr _Nullable xmlReaderForMemory(
    const char *_Nullable buffer, int size, const char *_Nullable URL, const char *_Nullable encoding, int options);
void xmlFreeTextReader(xmlTextReaderPtr _Nullable reader);
int xmlTextReaderRead(xmlTextReaderPtr _Nullable reader);
int xmlTextReaderNodeType(xmlTextReaderPtr _Nullable reader);
int xmlTextReaderIsEmptyElement(xmlTextReaderPtr _Nullable reader);
int xmlTextReaderGetParserLineNumber(xmlTextReaderPtr _Nullable reader);
xmlChar *_Nullable xmlTextReaderGetAttribute(xmlTextReaderPtr _Nullable reader, const xmlChar *_Nullable name);
const xmlChar *_Nullable xmlTextReaderConstValue(xmlTextReaderPtr _Nullable reader);
const xmlChar *_Nullable xmlTextReaderConstNamespaceUri(xmlTextReaderPtr _Nullable reader);
const xmlChar *_Nullable xmlTextReaderConstLocalName(xmlTextReaderPtr _Nullable reader);
const xmlChar *_Nullable xmlTextReaderConstEncoding(xmlTextReaderPtr _Nullable reader);
void xmlTextReaderSetStructuredErrorHandler(
    xmlTextReaderPtr _Nullable reader, xmlStructuredErrorFunc _Nullable handler, void *_Nullable argument);
#endif

/// A structured error handler that drops every message, so that a hostile document prints nothing to stderr.
static inline void braid_xml_ignore_error(void *_Nullable context, xmlErrorPtr _Nullable error) {
    (void)context;
    (void)error;
}

#endif
