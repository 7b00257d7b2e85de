// libarchive's reader and entries, for unpacking an archive while it downloads (--extract): its read callbacks
// are plain C function pointers, so no wrapper is needed.
#include <archive.h>
#include <archive_entry.h>
