/*
 * The run-time version check of a program linking libmarquet (docs/VERSIONING.md):
 * the header it was compiled with says MARQUET_VERSION_MAJOR.MINOR.PATCH, the library it
 * runs with says marquet_version(). The loader already guarantees the C ABI (the soname
 * libmarquet.so.MARQUET_ABI_VERSION); what is left to check is that the library is at
 * least as new as the header, so that every function the header declares is there.
 * Exit status 0 when compatible, 1 when not.
 *
 *   cc -std=c11 version_check.c $(pkg-config --cflags --libs marquet) -o version_check
 */
#include <stdio.h>

#include "marquet.h"

int main(void) {
    const char *lib = marquet_version();
    int major = -1, minor = -1, patch = -1;
    if (sscanf(lib, "%d.%d.%d", &major, &minor, &patch) != 3) {
        fprintf(stderr, "libmarquet reports an unreadable version \"%s\"\n", lib);
        return 1;
    }
    /* Incompatible changes of the C ABI change the soname, so a newer library of the same
     * soname serves every program built with an older header (docs/VERSIONING.md). */
    int ok = major != MARQUET_VERSION_MAJOR ? major > MARQUET_VERSION_MAJOR
             : minor != MARQUET_VERSION_MINOR ? minor > MARQUET_VERSION_MINOR
                                              : patch >= MARQUET_VERSION_PATCH;
    printf("header %s (ABI %d), library %s: %s\n", MARQUET_VERSION_STRING, MARQUET_ABI_VERSION, lib,
           ok ? "compatible" : "INCOMPATIBLE");
    return ok ? 0 : 1;
}
