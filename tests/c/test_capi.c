/*
 * Tests of the C API's contract: status codes for null pointers, bad lengths, buffers
 * too small (with the needed size), freed and closed handles, paths that are not
 * tables; outputs untouched on failure; attribute and geometry round trips.
 *
 *   test_capi DIR     (DIR: a writable scratch directory)
 *
 * Prints "N passed, 0 failed" and exits 0 when every check holds.
 */
/* realpath (POSIX), for the file:// URL of test_url_reader. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marquet.h"

static int passed = 0, failed = 0;

#define EXPECT(cond)                                                                        \
    do {                                                                                    \
        if (cond) {                                                                         \
            passed++;                                                                       \
        } else {                                                                            \
            failed++;                                                                       \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);              \
        }                                                                                   \
    } while (0)

/* Expect a status; on a mismatch print the last error message. */
#define EXPECT_STATUS(call, want)                                                           \
    do {                                                                                    \
        int32_t got_ = (call);                                                              \
        if (got_ == (want)) {                                                               \
            passed++;                                                                       \
        } else {                                                                            \
            failed++;                                                                       \
            fprintf(stderr, "%s:%d: FAILED: %s returned %d (%s), expected %d: %s\n",        \
                    __FILE__, __LINE__, #call, (int)got_, marquet_status_str(got_),         \
                    (int)(want), last_error());                                             \
        }                                                                                   \
    } while (0)

#define OK(call) EXPECT_STATUS(call, MARQUET_STATUS_OK)
#define S(literal) literal, strlen(literal)

static const char *last_error(void) {
    static char buf[4096];
    size_t needed = 0;
    if (marquet_last_error_message(buf, sizeof buf, &needed) != MARQUET_STATUS_OK) {
        return "<message too long>";
    }
    return buf;
}

static int error_contains(const char *needle) {
    return strstr(last_error(), needle) != NULL;
}

static char path_buf[1024];
static const char *scratch(const char *dir, const char *name) {
    snprintf(path_buf, sizeof path_buf, "%s/%s", dir, name);
    return path_buf;
}

/* POINT (1 2) and a polygon ((0 0, 1 0, 1 1, 0 0)), little-endian ISO WKB. */
static size_t point_wkb(uint8_t *w, double x, double y) {
    uint32_t t = 1;
    w[0] = 1;
    memcpy(w + 1, &t, 4);
    memcpy(w + 5, &x, 8);
    memcpy(w + 13, &y, 8);
    return 21;
}

static size_t polygon_wkb(uint8_t *w) {
    uint32_t t = 3, rings = 1, n = 4;
    double c[8] = {0, 0, 1, 0, 1, 1, 0, 0};
    w[0] = 1;
    memcpy(w + 1, &t, 4);
    memcpy(w + 5, &rings, 4);
    memcpy(w + 9, &n, 4);
    memcpy(w + 13, c, sizeof c);
    return 13 + sizeof c;
}

static void test_statics(void) {
    int32_t codes[] = {0, 100, 101, 102, 103, 104, 105, 200, 201, 300, 301, 302, 303, 304, 305, 900, 901, -1, 7, 99999};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        EXPECT(marquet_status_str(codes[i]) != NULL);
    }
    EXPECT(strcmp(marquet_status_str(MARQUET_STATUS_OK), "ok") == 0);
    EXPECT(strcmp(marquet_status_str(12345), "unknown status") == 0);
    EXPECT(marquet_version() != NULL && strlen(marquet_version()) >= 5);
    /* Before any failure the message is empty. */
    size_t needed = 99;
    char c = 'x';
    OK(marquet_last_error_message(&c, 1, &needed));
    EXPECT(needed == 1 && c == '\0');
}

static void test_null_pointers(const char *dir) {
    marquet_file *file = (marquet_file *)0x1; /* sentinel: must stay untouched */
    EXPECT_STATUS(marquet_file_open(NULL, 5, &file), MARQUET_STATUS_NULL_POINTER);
    EXPECT(file == (marquet_file *)0x1);
    EXPECT(error_contains("path is null"));
    EXPECT_STATUS(marquet_file_create(S("x.h5"), NULL), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_file_open(S(""), &file), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(file == (marquet_file *)0x1);

    int64_t n = -7;
    EXPECT_STATUS(marquet_table_nrows(NULL, &n), MARQUET_STATUS_NULL_POINTER);
    EXPECT(n == -7);
    EXPECT_STATUS(marquet_file_table_count(NULL, &n), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_batch_new(NULL), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_geometry_column_options_set_edges(NULL, 0), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_geometry_info_form(NULL, NULL), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_table_append(NULL, NULL, NULL), MARQUET_STATUS_NULL_POINTER);

    /* _free(NULL) is a no-op for every handle type. */
    marquet_file_free(NULL);
    marquet_table_free(NULL);
    marquet_batch_free(NULL);
    marquet_geometry_column_options_free(NULL);
    marquet_geometry_info_free(NULL);
    marquet_report_free(NULL);
    passed++;

    /* A missing file is an I/O error naming the path. */
    const char *missing = scratch(dir, "does-not-exist.h5");
    EXPECT_STATUS(marquet_file_open(missing, strlen(missing), &file), MARQUET_STATUS_IO);
    EXPECT(error_contains("does-not-exist.h5"));
    EXPECT_STATUS(marquet_file_open_rw(missing, strlen(missing), &file), MARQUET_STATUS_IO);
    EXPECT(file == (marquet_file *)0x1);
}

static void test_batch_arguments(void) {
    marquet_batch *b = NULL;
    OK(marquet_batch_new(&b));
    uint8_t wkb[64];
    size_t n1 = point_wkb(wkb, 1, 2);
    int64_t good[2] = {0, (int64_t)n1};
    int64_t past[2] = {0, 100};
    int64_t decreasing[3] = {0, 21, 5};
    int64_t negative[2] = {-1, 21};

    OK(marquet_batch_set_wkb(b, S("g"), wkb, n1, good, NULL, 1));
    EXPECT_STATUS(marquet_batch_set_wkb(b, S("g"), wkb, n1, past, NULL, 1), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("past the 21-byte data buffer"));
    EXPECT_STATUS(marquet_batch_set_wkb(b, S("g"), wkb, n1, decreasing, NULL, 2), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_batch_set_wkb(b, S("g"), wkb, n1, negative, NULL, 1), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_batch_set_wkb(b, S("g"), wkb, n1, good, NULL, -1), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("nrows is negative"));
    EXPECT_STATUS(marquet_batch_set_wkb(b, S("g"), NULL, 21, good, NULL, 1), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_batch_set_wkb(b, S("g"), wkb, n1, NULL, NULL, 1), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_batch_set_wkb(b, NULL, 3, wkb, n1, good, NULL, 1), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_batch_set_wkb(b, "", 0, wkb, n1, good, NULL, 1), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_batch_set_wkb(b, "\xff\xfe", 2, wkb, n1, good, NULL, 1), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("UTF-8"));

    double x[2] = {1, 2}, y[2] = {3, 4};
    OK(marquet_batch_set_points(b, S("p"), MARQUET_DIMENSIONS_XY, x, y, NULL, NULL, NULL, 2));
    EXPECT_STATUS(marquet_batch_set_points(b, S("p"), 7, x, y, NULL, NULL, NULL, 2), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_batch_set_points(b, S("p"), MARQUET_DIMENSIONS_XYZ, x, y, NULL, NULL, NULL, 2),
                  MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_batch_set_points(b, S("p"), MARQUET_DIMENSIONS_XY, x, NULL, NULL, NULL, NULL, 2),
                  MARQUET_STATUS_NULL_POINTER);
    /* A zero-row column may pass NULL arrays. */
    OK(marquet_batch_set_points(b, S("p"), MARQUET_DIMENSIONS_XY, NULL, NULL, NULL, NULL, NULL, 0));

    const char chars[] = "ab\0c";
    int64_t so[3] = {0, 2, 4};
    EXPECT_STATUS(marquet_batch_set_strings(b, S("s"), chars, 4, so, NULL, 2), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("NUL"));
    EXPECT_STATUS(marquet_batch_set_missing_rest(b, 2), MARQUET_STATUS_INVALID_ARGUMENT);
    OK(marquet_batch_clear(b));

    /* Options: enum values and sizes are checked by the setters. */
    marquet_geometry_column_options *o = NULL;
    OK(marquet_geometry_column_options_new(&o));
    EXPECT_STATUS(marquet_geometry_column_options_set_form(o, 42, 0, 0, 0), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_geometry_column_options_set_form(o, MARQUET_FORM_FIXED_WKB, 0, 0, 4),
                  MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_geometry_column_options_set_form(o, MARQUET_FORM_VAR_WKB, 0, 0, 21),
                  MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_geometry_column_options_set_form(o, MARQUET_FORM_POINT, 9, 0, 0),
                  MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_geometry_column_options_set_edges(o, MARQUET_EDGES_UNKNOWN), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_geometry_column_options_set_orientation(o, 2), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_geometry_column_options_set_deflate(o, 10), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_geometry_column_options_set_chunk_rows(o, 0), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_geometry_column_options_set_crs(o, MARQUET_CRS_PROJJSON), MARQUET_STATUS_INVALID_ARGUMENT);

    /* Freed handles are refused (not dereferenced), and a second free is a no-op. */
    marquet_geometry_column_options_free(o);
    EXPECT_STATUS(marquet_geometry_column_options_set_edges(o, 0), MARQUET_STATUS_INVALID_HANDLE);
    EXPECT(error_contains("not a live handle"));
    marquet_geometry_column_options_free(o);
    marquet_batch_free(b);
    EXPECT_STATUS(marquet_batch_clear(b), MARQUET_STATUS_INVALID_HANDLE);
    EXPECT_STATUS(marquet_batch_set_wkb(b, S("g"), wkb, n1, good, NULL, 1), MARQUET_STATUS_INVALID_HANDLE);
    marquet_batch_free(b);
}

static void test_tables(const char *dir) {
    const char *path = scratch(dir, "tables.h5");
    marquet_file *file = NULL;
    marquet_table *t = NULL, *t2 = NULL;
    OK(marquet_file_create(path, strlen(path), &file));

    /* A table with an attribute of every type and a WKB geometry column with a covering. */
    OK(marquet_table_create(file, S("/data/things"), &t));
    OK(marquet_table_add_column(t, S("id"), MARQUET_TYPE_INT64));
    OK(marquet_table_add_column(t, S("count"), MARQUET_TYPE_INT32));
    OK(marquet_table_add_column(t, S("height"), MARQUET_TYPE_DOUBLE));
    OK(marquet_table_add_string_column(t, S("label"), 16));
    EXPECT_STATUS(marquet_table_add_column(t, S("bad"), 77), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_table_add_string_column(t, S("bad"), 0), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_table_add_column(t, S("id"), MARQUET_TYPE_INT32), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("/data/things/id"));

    marquet_geometry_column_options *o = NULL;
    OK(marquet_geometry_column_options_new(&o));
    /* A PROJJSON coordinate reference system: a CRS type and the members it requires. */
    const char *projjson = "{\"type\":\"GeographicCRS\",\"name\":\"WGS 84\",\"datum\":{\"type\":\"GeodeticReferenceFrame\","
                           "\"name\":\"World Geodetic System 1984\",\"ellipsoid\":{\"name\":\"WGS 84\",\"semi_major_axis\":6378137,"
                           "\"inverse_flattening\":298.257223563}},\"id\":{\"authority\":\"EPSG\",\"code\":4326}}";
    const char *not_projjson = "{\"a\":1}";
    EXPECT_STATUS(marquet_geometry_column_options_set_crs_projjson(o, not_projjson, strlen(not_projjson)), MARQUET_STATUS_OK);
    OK(marquet_geometry_column_options_set_edges(o, MARQUET_EDGES_SPHERICAL));
    OK(marquet_geometry_column_options_set_orientation(o, 1));
    OK(marquet_geometry_column_options_set_covering(o, S("shape_bbox"), 0));
    /* A CRS that is not a PROJJSON coordinate reference system is refused (HEP002 §8.1). */
    EXPECT_STATUS(marquet_table_add_geometry_column(t, S("shape"), o), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("HEP002 §8.1"));
    OK(marquet_geometry_column_options_set_crs_projjson(o, projjson, strlen(projjson)));
    OK(marquet_table_add_geometry_column(t, S("shape"), o));
    /* Non-planar edges need a geographic CRS. */
    OK(marquet_geometry_column_options_set_crs(o, MARQUET_CRS_UNKNOWN));
    OK(marquet_geometry_column_options_set_covering(o, NULL, 0, 0));
    EXPECT_STATUS(marquet_table_add_geometry_column(t, S("shape2"), o), MARQUET_STATUS_INVALID_ARGUMENT);
    marquet_geometry_column_options_free(o);

    /* Append two rows. */
    marquet_batch *b = NULL;
    OK(marquet_batch_new(&b));
    int64_t ids[2] = {10, 20};
    int32_t counts[2] = {7, 0};
    double heights[2] = {1.5, -2.25};
    uint8_t valid[2] = {1, 0};
    const char chars[] = "firstsecond";
    int64_t soff[3] = {0, 5, 11};
    uint8_t wkb[128];
    size_t np = polygon_wkb(wkb);
    size_t n2 = point_wkb(wkb + np, 5, 6);
    int64_t woff[3] = {0, (int64_t)np, (int64_t)(np + n2)};
    OK(marquet_batch_set_int64(b, S("id"), ids, NULL, 2));
    OK(marquet_batch_set_int32(b, S("count"), counts, valid, 2));
    OK(marquet_batch_set_double(b, S("height"), heights, NULL, 2));
    OK(marquet_batch_set_strings(b, S("label"), chars, 11, soff, NULL, 2));
    OK(marquet_batch_set_wkb(b, S("shape"), wkb, np + n2, woff, NULL, 2));
    int64_t nrows = -1;
    OK(marquet_table_append(t, b, &nrows));
    EXPECT(nrows == 2);

    /* A failed append changes nothing: invalid WKB is reported with its table row (the
       table holds 2 rows, so the batch's first row is row 2; issue 19). */
    uint8_t bad[21];
    memcpy(bad, wkb + np, 21);
    bad[1] = 99; /* geometry type 99 */
    int64_t boff[2] = {0, 21};
    OK(marquet_batch_clear(b));
    OK(marquet_batch_set_missing_rest(b, 1));
    OK(marquet_batch_set_wkb(b, S("shape"), bad, 21, boff, NULL, 1));
    nrows = -1;
    EXPECT_STATUS(marquet_table_append(t, b, &nrows), MARQUET_STATUS_INVALID_WKB);
    EXPECT(nrows == -1);
    EXPECT(error_contains("/data/things/shape row 2"));
    /* A ring wound against ORIENTATION = COUNTERCLOCKWISE is refused, naming the table row
       (HEP002 §9.2; issue 18). */
    uint8_t cw[128];
    size_t ncw = polygon_wkb(cw);
    double rev[8] = {0, 0, 1, 1, 1, 0, 0, 0};
    memcpy(cw + 13, rev, sizeof rev);
    int64_t cwoff[2] = {0, (int64_t)ncw};
    OK(marquet_batch_clear(b));
    OK(marquet_batch_set_missing_rest(b, 1));
    OK(marquet_batch_set_wkb(b, S("shape"), cw, ncw, cwoff, NULL, 1));
    EXPECT_STATUS(marquet_table_append(t, b, &nrows), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("/data/things/shape row 2: HEP002 §9.2"));
    /* Batch columns that disagree in length. */
    OK(marquet_batch_set_int64(b, S("id"), ids, NULL, 2));
    OK(marquet_batch_set_wkb(b, S("shape"), wkb, np, woff, NULL, 1));
    EXPECT_STATUS(marquet_table_append(t, b, &nrows), MARQUET_STATUS_INVALID_ARGUMENT);
    OK(marquet_table_nrows(t, &nrows));
    EXPECT(nrows == 2);
    marquet_batch_free(b);

    /* Listing. */
    int64_t ntables = 0, ncols = 0, ngeom = 0;
    OK(marquet_file_table_count(file, &ntables));
    EXPECT(ntables == 1);
    char small[4] = "zzz";
    size_t needed = 0;
    EXPECT_STATUS(marquet_file_table_name(file, 0, small, sizeof small, &needed), MARQUET_STATUS_BUFFER_TOO_SMALL);
    EXPECT(needed == strlen("/data/things") + 1);
    EXPECT(strcmp(small, "zzz") == 0);
    char name[64];
    OK(marquet_file_table_name(file, 0, name, sizeof name, &needed));
    EXPECT(strcmp(name, "/data/things") == 0);
    EXPECT_STATUS(marquet_file_table_name(file, 1, name, sizeof name, &needed), MARQUET_STATUS_OUT_OF_RANGE);
    EXPECT_STATUS(marquet_file_table_name(file, -1, name, sizeof name, &needed), MARQUET_STATUS_INVALID_ARGUMENT);
    OK(marquet_table_column_count(t, &ncols));
    EXPECT(ncols == 6); /* id count height label shape shape_bbox */
    OK(marquet_table_geometry_column_count(t, &ngeom));
    EXPECT(ngeom == 1);
    OK(marquet_table_geometry_column_name(t, 0, name, sizeof name, &needed));
    EXPECT(strcmp(name, "shape") == 0);
    int32_t ty = 0;
    OK(marquet_table_column_type(t, S("label"), &ty));
    EXPECT(ty == MARQUET_TYPE_STRING);
    OK(marquet_table_column_type(t, S("shape"), &ty));
    EXPECT(ty == MARQUET_TYPE_GEOMETRY);
    OK(marquet_table_column_type(t, S("shape_bbox"), &ty));
    EXPECT(ty == MARQUET_TYPE_OTHER);
    EXPECT_STATUS(marquet_table_column_type(t, S("nope"), &ty), MARQUET_STATUS_INVALID_ARGUMENT);

    /* Read back attributes. */
    int64_t rid[2] = {0, 0};
    int32_t rc[2] = {0, 0};
    double rh[2] = {0, 0};
    uint8_t rv[2] = {9, 9};
    OK(marquet_table_read_int64(t, S("id"), 0, 2, rid, rv));
    EXPECT(rid[0] == 10 && rid[1] == 20 && rv[0] == 1 && rv[1] == 1);
    OK(marquet_table_read_int32(t, S("count"), 0, 2, rc, rv));
    EXPECT(rc[0] == 7 && rv[0] == 1 && rv[1] == 0);
    OK(marquet_table_read_double(t, S("height"), 0, 2, rh, NULL));
    EXPECT(rh[0] == 1.5 && rh[1] == -2.25);
    OK(marquet_table_read_double(t, S("id"), 1, 2, rh, NULL)); /* integers widen to double */
    EXPECT(rh[0] == 20.0);
    EXPECT_STATUS(marquet_table_read_int32(t, S("label"), 0, 2, rc, NULL), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_table_read_int32(t, S("count"), 0, 3, rc, NULL), MARQUET_STATUS_OUT_OF_RANGE);
    EXPECT_STATUS(marquet_table_read_int32(t, S("count"), 2, 1, rc, NULL), MARQUET_STATUS_OUT_OF_RANGE);
    EXPECT_STATUS(marquet_table_read_int32(t, S("count"), 0, 2, NULL, NULL), MARQUET_STATUS_NULL_POINTER);

    char text[16];
    int64_t to[3] = {-1, -1, -1};
    EXPECT_STATUS(marquet_table_read_strings(t, S("label"), 0, 2, text, 4, to, rv, &needed),
                  MARQUET_STATUS_BUFFER_TOO_SMALL);
    EXPECT(needed == 11);
    EXPECT(to[0] == -1); /* outputs untouched on failure */
    OK(marquet_table_read_strings(t, S("label"), 0, 2, text, sizeof text, to, rv, &needed));
    EXPECT(to[0] == 0 && to[1] == 5 && to[2] == 11 && memcmp(text, "firstsecond", 11) == 0);

    /* Geometry reads: size query, then the values. */
    uint8_t gbuf[256];
    int64_t go[3];
    EXPECT_STATUS(marquet_table_read_wkb(t, S("shape"), 0, 2, NULL, 0, go, rv, &needed),
                  MARQUET_STATUS_BUFFER_TOO_SMALL);
    EXPECT(needed == np + n2);
    OK(marquet_table_read_wkb(t, S("shape"), 0, 2, gbuf, sizeof gbuf, go, rv, &needed));
    EXPECT(go[0] == 0 && go[1] == (int64_t)np && go[2] == (int64_t)(np + n2));
    EXPECT(memcmp(gbuf, wkb, np + n2) == 0);
    double px[2];
    EXPECT_STATUS(marquet_table_read_points(t, S("shape"), 0, 2, px, px, NULL, NULL, NULL),
                  MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("not a point column"));

    /* Metadata. */
    marquet_geometry_info *info = NULL;
    OK(marquet_table_geometry_info(t, S("shape"), &info));
    int32_t form = 0, crs = 0, edges = -1, ccw = 0, present = 0, hz = 0, hm = 0, dims = 0, f32 = 0;
    int32_t types[4] = {0};
    size_t ntypes = 0;
    double bbox[8];
    OK(marquet_geometry_info_form(info, &form));
    EXPECT(form == MARQUET_FORM_VAR_WKB);
    EXPECT_STATUS(marquet_geometry_info_types(info, types, 1, &ntypes), MARQUET_STATUS_BUFFER_TOO_SMALL);
    EXPECT(ntypes == 2 && types[0] == 0);
    OK(marquet_geometry_info_types(info, types, 4, &ntypes));
    EXPECT(ntypes == 2 && types[0] == 1 && types[1] == 3);
    EXPECT_STATUS(marquet_geometry_info_bbox(info, bbox, 4, &present, &hz, &hm), MARQUET_STATUS_INVALID_ARGUMENT);
    OK(marquet_geometry_info_bbox(info, bbox, 8, &present, &hz, &hm));
    /* SPHERICAL edges: the box holds the vertices and grows for geodesic bulges (R8). */
    EXPECT(present == 1 && hz == 0 && hm == 0);
    EXPECT(bbox[0] <= 0 && bbox[0] > -1e-6 && bbox[1] <= 0 && bbox[1] > -1e-6);
    EXPECT(bbox[4] >= 5 && bbox[4] < 5 + 1e-6 && bbox[5] >= 6 && bbox[5] < 7);
    EXPECT(isnan(bbox[2]));
    OK(marquet_geometry_info_crs(info, &crs));
    EXPECT(crs == MARQUET_CRS_PROJJSON);
    char doc[512];
    OK(marquet_geometry_info_crs_projjson(info, doc, sizeof doc, &needed));
    EXPECT(strcmp(doc, projjson) == 0 && needed == strlen(projjson) + 1);
    OK(marquet_geometry_info_edges(info, &edges));
    EXPECT(edges == MARQUET_EDGES_SPHERICAL);
    OK(marquet_geometry_info_orientation(info, &ccw));
    EXPECT(ccw == 1);
    OK(marquet_geometry_info_covering(info, name, sizeof name, &needed));
    EXPECT(strcmp(name, "shape_bbox") == 0);
    EXPECT_STATUS(marquet_geometry_info_point_layout(info, &dims, &f32), MARQUET_STATUS_INVALID_ARGUMENT);
    /* A handle of another type is refused. */
    EXPECT_STATUS(marquet_geometry_info_form((const marquet_geometry_info *)(const void *)t, &form),
                  MARQUET_STATUS_INVALID_HANDLE);
    marquet_geometry_info_free(info);
    EXPECT_STATUS(marquet_geometry_info_form(info, &form), MARQUET_STATUS_INVALID_HANDLE);
    EXPECT_STATUS(marquet_table_geometry_info(t, S("id"), &info), MARQUET_STATUS_SPEC_VIOLATION);

    /* An H5Col table without geometry is not a Marquet table; nor is a plain group; a
       missing path is an HDF5 error naming it. */
    OK(marquet_table_create(file, S("/plain"), &t2));
    marquet_table_free(t2);
    t2 = (marquet_table *)0x1;
    EXPECT_STATUS(marquet_table_open(file, S("/plain"), &t2), MARQUET_STATUS_NOT_A_TABLE);
    EXPECT(error_contains("/plain"));
    EXPECT_STATUS(marquet_table_open(file, S("/data"), &t2), MARQUET_STATUS_NOT_A_TABLE);
    int32_t st = marquet_table_open(file, S("/nowhere"), &t2);
    EXPECT(st == MARQUET_STATUS_NOT_A_TABLE || st == MARQUET_STATUS_HDF5);
    EXPECT(error_contains("/nowhere"));
    EXPECT(t2 == (marquet_table *)0x1);

    /* Closing the file: the handle refuses further use; open tables keep working. */
    OK(marquet_file_close(file));
    OK(marquet_file_close(file));
    EXPECT_STATUS(marquet_file_table_count(file, &ntables), MARQUET_STATUS_CLOSED);
    EXPECT_STATUS(marquet_table_open(file, S("/data/things"), &t2), MARQUET_STATUS_CLOSED);
    OK(marquet_table_nrows(t, &nrows));
    EXPECT(nrows == 2);
    marquet_file_free(file);
    EXPECT_STATUS(marquet_file_table_count(file, &ntables), MARQUET_STATUS_INVALID_HANDLE);
    marquet_table_free(t);
    EXPECT_STATUS(marquet_table_nrows(t, &nrows), MARQUET_STATUS_INVALID_HANDLE);

    /* Read-only files refuse writes with an HDF5 error. */
    OK(marquet_file_open(path, strlen(path), &file));
    OK(marquet_table_open(file, S("/data/things"), &t));
    EXPECT_STATUS(marquet_table_add_column(t, S("more"), MARQUET_TYPE_INT32), MARQUET_STATUS_HDF5);
    marquet_table_free(t);
    marquet_file_free(file);
}

static void test_points(const char *dir) {
    const char *path = scratch(dir, "points.h5");
    marquet_file *file = NULL;
    marquet_table *t = NULL;
    marquet_geometry_column_options *o = NULL;
    marquet_batch *b = NULL;
    OK(marquet_file_create(path, strlen(path), &file));
    OK(marquet_table_create(file, S("/pts"), &t));
    marquet_file_free(file); /* the table keeps it open */
    OK(marquet_geometry_column_options_new(&o));
    OK(marquet_geometry_column_options_set_form(o, MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XYZ, 1, 0));
    OK(marquet_table_add_geometry_column(t, S("p"), o));
    marquet_geometry_column_options_free(o);

    double x[3] = {1, 0, NAN}, y[3] = {2, 0, NAN}, z[3] = {3, 0, NAN};
    uint8_t valid[3] = {1, 0, 1};
    OK(marquet_batch_new(&b));
    EXPECT_STATUS(marquet_batch_set_points(b, S("p"), MARQUET_DIMENSIONS_XY, x, y, NULL, NULL, valid, 3),
                  MARQUET_STATUS_OK);
    EXPECT_STATUS(marquet_table_append(t, b, NULL), MARQUET_STATUS_INVALID_ARGUMENT); /* XY into XYZ */
    OK(marquet_batch_set_points(b, S("p"), MARQUET_DIMENSIONS_XYZ, x, y, z, NULL, valid, 3));
    OK(marquet_table_append(t, b, NULL));
    marquet_batch_free(b);

    double rx[3], ry[3], rz[3], rm[3];
    uint8_t rv[3];
    OK(marquet_table_read_points(t, S("p"), 0, 3, rx, ry, rz, rm, rv));
    EXPECT(rx[0] == 1 && ry[0] == 2 && rz[0] == 3 && isnan(rm[0]));
    EXPECT(rv[0] == 1 && rv[1] == 0 && rv[2] == 1 && isnan(rx[2]) && isnan(ry[2]));
    marquet_geometry_info *info = NULL;
    int32_t dims = -1, f32 = -1;
    OK(marquet_table_geometry_info(t, S("p"), &info));
    OK(marquet_geometry_info_point_layout(info, &dims, &f32));
    EXPECT(dims == MARQUET_DIMENSIONS_XYZ && f32 == 1);
    marquet_geometry_info_free(info);
    marquet_table_free(t);
}

static void test_validate(const char *dir) {
    marquet_report *r = (marquet_report *)0x1;
    const char *missing = scratch(dir, "no-such-file.h5");
    EXPECT_STATUS(marquet_validate_file(missing, strlen(missing), NULL, 0, 0, &r), MARQUET_STATUS_IO);
    EXPECT(r == (marquet_report *)0x1);
    const char *notes = scratch(dir, "notes.txt");
    FILE *f = fopen(notes, "w");
    EXPECT(f != NULL);
    if (f != NULL) {
        fputs("not an hdf5 file\n", f);
        fclose(f);
    }
    EXPECT_STATUS(marquet_validate_file(notes, strlen(notes), NULL, 0, 0, &r), MARQUET_STATUS_HDF5);
    EXPECT_STATUS(marquet_validate_file(notes, strlen(notes), NULL, 0, 2, &r), MARQUET_STATUS_INVALID_ARGUMENT);

    /* The file written by test_points conforms, as a whole and table by table. */
    const char *path = scratch(dir, "points.h5");
    int32_t conformant = -1;
    int64_t count = -1;
    OK(marquet_validate_file(path, strlen(path), NULL, 0, 1, &r));
    OK(marquet_report_conformant(r, &conformant));
    EXPECT(conformant == 1);
    OK(marquet_report_finding_count(r, &count));
    EXPECT(count == 0);
    size_t needed = 0;
    EXPECT_STATUS(marquet_report_json(r, NULL, 0, &needed), MARQUET_STATUS_BUFFER_TOO_SMALL);
    char *json = malloc(needed);
    OK(marquet_report_json(r, json, needed, &needed));
    EXPECT(strstr(json, "\"conformant\"") != NULL);
    free(json);
    marquet_report_free(r);
    EXPECT_STATUS(marquet_report_conformant(r, &conformant), MARQUET_STATUS_INVALID_HANDLE);

    /* test_tables' file: spherical edges, whose boxes the validator checks against the
       geodesic edges (ruling R8): conformant even in strict mode, without findings. */
    path = scratch(dir, "tables.h5");
    OK(marquet_validate_file(path, strlen(path), NULL, 0, 0, &r));
    OK(marquet_report_conformant(r, &conformant));
    EXPECT(conformant == 1);
    marquet_report_free(r);
    OK(marquet_validate_file(path, strlen(path), NULL, 0, 1, &r));
    OK(marquet_report_conformant(r, &conformant));
    EXPECT(conformant == 1);
    OK(marquet_report_finding_count(r, &count));
    EXPECT(count == 0);
    int32_t sev = 0;
    int64_t wrow = 0;
    EXPECT_STATUS(marquet_report_finding_info(r, 0, &sev, &wrow), MARQUET_STATUS_OUT_OF_RANGE);
    marquet_report_free(r);

    /* A table path that is not there is a finding, not a failure of the call. */
    path = scratch(dir, "points.h5");
    OK(marquet_validate_file(path, strlen(path), S("/nowhere"), 0, &r));
    OK(marquet_report_conformant(r, &conformant));
    EXPECT(conformant == 0);
    OK(marquet_report_finding_count(r, &count));
    EXPECT(count >= 1);
    int32_t severity = 0;
    int64_t row = 0;
    char text[512];
    OK(marquet_report_finding_info(r, 0, &severity, &row));
    EXPECT(severity == MARQUET_SEVERITY_ERROR && row == -1);
    OK(marquet_report_finding_path(r, 0, text, sizeof text, &needed));
    EXPECT(strcmp(text, "/nowhere") == 0);
    OK(marquet_report_finding_rule(r, 0, text, sizeof text, &needed));
    EXPECT(strncmp(text, "HEP00", 5) == 0);
    OK(marquet_report_finding_message(r, 0, text, sizeof text, &needed));
    EXPECT(needed > 1);
    EXPECT_STATUS(marquet_report_finding_info(r, count, &severity, &row), MARQUET_STATUS_OUT_OF_RANGE);
    marquet_report_free(r);
    marquet_report_free(r);
}

/* Spatial queries: box and WKB windows, every predicate, and the argument checks. */
static void test_query(const char *dir) {
    marquet_file *f = NULL;
    marquet_table *t = NULL;
    marquet_batch *b = NULL;
    OK(marquet_file_create(S(scratch(dir, "query.h5")), &f));
    OK(marquet_table_create(f, S("/q"), &t));
    OK(marquet_table_add_geometry_column(t, S("shape"), NULL));
    /* Rows: POINT (1 2), the triangle (0 0, 1 0, 1 1), null, POINT (5 5). */
    uint8_t wkb[256];
    int64_t offsets[5] = {0};
    size_t n = point_wkb(wkb, 1, 2);
    offsets[1] = (int64_t)n;
    n += polygon_wkb(wkb + n);
    offsets[2] = offsets[3] = (int64_t)n;
    n += point_wkb(wkb + n, 5, 5);
    offsets[4] = (int64_t)n;
    uint8_t valid[4] = {1, 1, 0, 1};
    OK(marquet_batch_new(&b));
    OK(marquet_batch_set_wkb(b, S("shape"), wkb, n, offsets, valid, 4));
    OK(marquet_table_append(t, b, NULL));
    marquet_batch_free(b);

    struct {
        double box[4];
        int32_t predicate;
        int64_t want[4];
        int64_t nwant;
    } cases[] = {
        {{0, 0, 2, 3}, MARQUET_PREDICATE_INTERSECTS, {0, 1}, 2},
        {{0, 0, 2, 3}, MARQUET_PREDICATE_WITHIN, {0, 1}, 2},
        {{0.5, 0.1, 0.6, 0.2}, MARQUET_PREDICATE_CONTAINS, {1}, 1},
        {{0.5, 0.1, 0.6, 0.2}, MARQUET_PREDICATE_INTERSECTS, {1}, 1},
        {{0.5, 1.5, 1.5, 2.5}, MARQUET_PREDICATE_WITHIN, {0}, 1},
        {{4, 4, 6, 6}, MARQUET_PREDICATE_BBOX, {3}, 1},
        {{0.6, 0.8, 0.7, 0.9}, MARQUET_PREDICATE_BBOX, {1}, 1},
        {{0.6, 0.8, 0.7, 0.9}, MARQUET_PREDICATE_INTERSECTS, {0}, 0},
        {{10, 10, 20, 20}, MARQUET_PREDICATE_INTERSECTS, {0}, 0},
    };
    /* Every flag combination: the same rows; with MARQUET_QUERY_KEEP_GEOMETRY the
     * result holds each matching row's WKB, byte for byte the WKB written. */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int32_t flags = 0; flags <= (MARQUET_QUERY_USE_INDEXES | MARQUET_QUERY_KEEP_GEOMETRY); flags++) {
            marquet_query_result *r = NULL;
            int64_t count = -1, rows[4] = {-1, -1, -1, -1};
            OK(marquet_table_query_box(t, S("shape"), cases[c].box[0], cases[c].box[1], cases[c].box[2], cases[c].box[3],
                                       cases[c].predicate, flags, &r));
            OK(marquet_query_result_count(r, &count));
            EXPECT(count == cases[c].nwant);
            OK(marquet_query_result_rows(r, rows, 4));
            for (int64_t i = 0; i < cases[c].nwant; i++) {
                EXPECT(rows[i] == cases[c].want[i]);
            }
            uint8_t got[256];
            int64_t goff[5] = {-1, -1, -1, -1, -1};
            uint8_t gvalid[4] = {9, 9, 9, 9};
            size_t need = 12345;
            if (flags & MARQUET_QUERY_KEEP_GEOMETRY) {
                OK(marquet_query_result_wkb(r, got, sizeof got, goff, gvalid, &need));
                EXPECT(goff[0] == 0 && goff[count] == (int64_t)need && (count == 4 || goff[count + 1] == -1));
                for (int64_t i = 0; i < count; i++) {
                    int64_t row = rows[i], len = offsets[row + 1] - offsets[row];
                    EXPECT(gvalid[i] == 1 && goff[i + 1] - goff[i] == len && memcmp(got + goff[i], wkb + offsets[row], (size_t)len) == 0);
                }
                if (need > 0) {
                    EXPECT_STATUS(marquet_query_result_wkb(r, NULL, 0, goff, NULL, &need), MARQUET_STATUS_BUFFER_TOO_SMALL);
                    EXPECT(need == (size_t)goff[count]);
                }
            } else {
                EXPECT_STATUS(marquet_query_result_wkb(r, got, sizeof got, goff, gvalid, &need), MARQUET_STATUS_INVALID_ARGUMENT);
                EXPECT(error_contains("/q/shape: the query did not keep the geometries") && need == 12345 && goff[0] == -1);
            }
            marquet_query_result_free(r);
        }
    }

    /* A WKB window: the triangle itself. */
    marquet_query_result *r = NULL;
    int64_t count = -1, rows[4] = {-1, -1, -1, -1};
    OK(marquet_table_query_wkb(t, S("shape"), wkb + offsets[1], (size_t)(offsets[2] - offsets[1]),
                               MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    EXPECT(count == 1);
    /* Too small a buffer: BUFFER_TOO_SMALL, nothing written; NULL with length 0 too. */
    EXPECT_STATUS(marquet_query_result_rows(r, rows, 0), MARQUET_STATUS_BUFFER_TOO_SMALL);
    EXPECT(rows[0] == -1 && error_contains("rows holds 0 elements, 1 rows matched"));
    EXPECT_STATUS(marquet_query_result_rows(r, NULL, 0), MARQUET_STATUS_BUFFER_TOO_SMALL);
    EXPECT_STATUS(marquet_query_result_rows(r, NULL, 1), MARQUET_STATUS_NULL_POINTER);
    OK(marquet_query_result_rows(r, rows, 1));
    EXPECT(rows[0] == 1 && rows[1] == -1);
    int32_t approximate = -1;
    OK(marquet_query_result_approximate(r, &approximate));
    EXPECT(approximate == 0);
    int64_t stats[10];
    for (int i = 0; i < 10; i++) {
        stats[i] = -1;
    }
    size_t needed = 0;
    OK(marquet_query_result_stats(r, stats, 10, &needed));
    EXPECT(needed == 9 && stats[0] == 4 && stats[6] == 1 && stats[8] >= 0 && stats[9] == -1);
    EXPECT_STATUS(marquet_query_result_count(r, NULL), MARQUET_STATUS_NULL_POINTER);
    marquet_query_result_free(r);
    marquet_query_result_free(r); /* a second free is a no-op */
    marquet_query_result_free(NULL);
    EXPECT_STATUS(marquet_query_result_count(r, &count), MARQUET_STATUS_INVALID_HANDLE);

    /* Refused arguments: out untouched. */
    marquet_query_result *untouched = NULL;
    EXPECT_STATUS(marquet_table_query_box(t, S("shape"), 0, 0, 1, 1, 0, 1, &untouched), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("predicate 0 is not a MARQUET_PREDICATE_* value"));
    EXPECT_STATUS(marquet_table_query_box(t, S("shape"), 0, 0, 1, 1, MARQUET_PREDICATE_BBOX, 4, &untouched),
                  MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("flags 4 has bits that are not MARQUET_QUERY_* values"));
    EXPECT_STATUS(marquet_table_query_box(t, S("shape"), NAN, 0, 1, 1, MARQUET_PREDICATE_BBOX, 1, &untouched),
                  MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_table_query_box(t, S("shape"), 0, 2, 1, 1, MARQUET_PREDICATE_BBOX, 1, &untouched),
                  MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("ymin 2 > ymax 1"));
    EXPECT_STATUS(marquet_table_query_box(t, S("shape"), 1, 0, 0, 1, MARQUET_PREDICATE_BBOX, 1, NULL),
                  MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_table_query_box(NULL, S("shape"), 0, 0, 1, 1, MARQUET_PREDICATE_BBOX, 1, &untouched),
                  MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_table_query_box(t, NULL, 5, 0, 0, 1, 1, MARQUET_PREDICATE_BBOX, 1, &untouched),
                  MARQUET_STATUS_NULL_POINTER);
    EXPECT(marquet_table_query_box(t, S("nosuch"), 0, 0, 1, 1, MARQUET_PREDICATE_BBOX, 1, &untouched) != MARQUET_STATUS_OK);
    EXPECT(error_contains("nosuch"));
    const uint8_t bad_wkb[3] = {1, 1, 0};
    EXPECT_STATUS(marquet_table_query_wkb(t, S("shape"), bad_wkb, sizeof bad_wkb, MARQUET_PREDICATE_INTERSECTS, 1, &untouched),
                  MARQUET_STATUS_INVALID_WKB);
    EXPECT_STATUS(marquet_table_query_wkb(t, S("shape"), NULL, 21, MARQUET_PREDICATE_INTERSECTS, 1, &untouched),
                  MARQUET_STATUS_NULL_POINTER);
    EXPECT(untouched == NULL);

    /* Geographic columns: xmin > xmax wraps the antimeridian; spherical edges make the
     * answer approximate (boxes grown for the geodesic edges). A planar CRS refuses a
     * wrapping window. */
    marquet_table_free(t);
    OK(marquet_table_create(f, S("/geo"), &t));
    marquet_geometry_column_options *o = NULL;
    OK(marquet_geometry_column_options_new(&o));
    OK(marquet_geometry_column_options_set_form(o, MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XY, 0, 0));
    OK(marquet_table_add_geometry_column(t, S("lonlat"), o));
    OK(marquet_geometry_column_options_set_edges(o, MARQUET_EDGES_SPHERICAL));
    OK(marquet_table_add_geometry_column(t, S("sphere"), o));
    OK(marquet_geometry_column_options_set_edges(o, MARQUET_EDGES_PLANAR));
    OK(marquet_geometry_column_options_set_crs(o, MARQUET_CRS_UNKNOWN));
    OK(marquet_table_add_geometry_column(t, S("plane"), o));
    marquet_geometry_column_options_free(o);
    double gx[3] = {175, 0, -175}, gy[3] = {1, 1, 1};
    OK(marquet_batch_new(&b));
    OK(marquet_batch_set_points(b, S("lonlat"), MARQUET_DIMENSIONS_XY, gx, gy, NULL, NULL, NULL, 3));
    OK(marquet_batch_set_points(b, S("sphere"), MARQUET_DIMENSIONS_XY, gx, gy, NULL, NULL, NULL, 3));
    OK(marquet_batch_set_points(b, S("plane"), MARQUET_DIMENSIONS_XY, gx, gy, NULL, NULL, NULL, 3));
    OK(marquet_table_append(t, b, NULL));
    marquet_batch_free(b);
    const char *geo_cols[2] = {"lonlat", "sphere"};
    for (int c = 0; c < 2; c++) {
        r = NULL;
        count = -1;
        approximate = -1;
        rows[0] = rows[1] = rows[2] = -1;
        OK(marquet_table_query_box(t, geo_cols[c], strlen(geo_cols[c]), 170, -10, -170, 10, MARQUET_PREDICATE_INTERSECTS, 1,
                                   &r));
        OK(marquet_query_result_count(r, &count));
        OK(marquet_query_result_rows(r, rows, 3));
        OK(marquet_query_result_approximate(r, &approximate));
        EXPECT(count == 2 && rows[0] == 0 && rows[1] == 2);
        EXPECT(approximate == c);
        marquet_query_result_free(r);
    }
    EXPECT_STATUS(marquet_table_query_box(t, S("plane"), 170, -10, -170, 10, MARQUET_PREDICATE_INTERSECTS, 1, &untouched),
                  MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("wraps around the antimeridian") && untouched == NULL);

    /* This libmarquet links its own static HDF5: a caller's hid_t cannot be shared. */
    marquet_file *from_hid = NULL;
    EXPECT_STATUS(marquet_file_from_hid(72057594037927936LL, &from_hid), MARQUET_STATUS_UNSUPPORTED);
    EXPECT(from_hid == NULL && error_contains("links its own static HDF5"));

    marquet_table_free(t);
    marquet_file_free(f);
}

/* marquet_table_write: the default layout. 1,000 points written in reverse grid order come
 * back in Hilbert order with a valid BLOCK_BBOX (and no R-tree: point column). */
static void test_write_default_layout(const char *dir) {
    const char *path = scratch(dir, "write.h5");
    marquet_file *f = NULL;
    marquet_table *t = NULL;
    marquet_batch *b = NULL;
    OK(marquet_file_create(path, strlen(path), &f));
    OK(marquet_table_create(f, S("/w"), &t));
    marquet_geometry_column_options *o = NULL;
    OK(marquet_geometry_column_options_new(&o));
    OK(marquet_geometry_column_options_set_form(o, MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XY, 0, 0));
    OK(marquet_table_add_geometry_column(t, S("p"), o));
    marquet_geometry_column_options_free(o);
    static double x[1000], y[1000];
    for (int i = 0; i < 1000; i++) {
        x[i] = (double)((999 - i) % 100);
        y[i] = (double)((999 - i) / 100);
    }
    OK(marquet_batch_new(&b));
    OK(marquet_batch_set_points(b, S("p"), MARQUET_DIMENSIONS_XY, x, y, NULL, NULL, NULL, 1000));
    int64_t nrows = -1;
    OK(marquet_table_write(t, b, &nrows));
    marquet_batch_free(b);
    EXPECT(nrows == 1000);
    int64_t count = -1;
    int32_t kind = -1, valid = -1;
    OK(marquet_table_index_count(t, S("p"), &count));
    OK(marquet_table_index_info(t, S("p"), 0, &kind, &valid));
    EXPECT(count == 1 && kind == MARQUET_INDEX_BLOCK_BBOX && valid == 1);
    /* Hilbert order: the input's last point (0, 0), at Hilbert index 0, comes first. */
    double px[2], py[2];
    OK(marquet_table_read_points(t, S("p"), 0, 2, px, py, NULL, NULL, NULL));
    EXPECT(px[0] == 0 && py[0] == 0);
    /* A window answered through the block index: the 6 grid points in it. */
    marquet_query_result *r = NULL;
    OK(marquet_table_query_box(t, S("p"), 10, 2, 12, 3, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    int64_t stats[8];
    OK(marquet_query_result_stats(r, stats, 8, NULL));
    EXPECT(count == 6 && stats[1] == 16 && stats[2] > 0); /* 1,000 rows: 16 blocks of 64 */
    marquet_query_result_free(r);
    marquet_table_free(t);
    marquet_file_free(f);
}

/* Spatial indexes: build, list, use, go stale under the LEAVE_STALE policy, rebuild,
 * truncate, drop; refused arguments. 1,000 points on a 100 x 10 grid, one grid row per
 * block of 100 rows. */
static void test_indexes(const char *dir) {
    marquet_file *f = NULL;
    marquet_table *t = NULL;
    marquet_batch *b = NULL;
    OK(marquet_file_create(S(scratch(dir, "indexes.h5")), &f));
    OK(marquet_table_create(f, S("/grid"), &t));
    marquet_geometry_column_options *o = NULL;
    OK(marquet_geometry_column_options_new(&o));
    OK(marquet_geometry_column_options_set_form(o, MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XY, 0, 0));
    OK(marquet_geometry_column_options_set_crs(o, MARQUET_CRS_UNKNOWN));
    OK(marquet_table_add_geometry_column(t, S("p"), o));
    marquet_geometry_column_options_free(o);
    static double x[1000], y[1000];
    for (int i = 0; i < 1000; i++) {
        x[i] = i % 100;
        y[i] = i / 100;
    }
    OK(marquet_batch_new(&b));
    OK(marquet_batch_set_points(b, S("p"), MARQUET_DIMENSIONS_XY, x, y, NULL, NULL, NULL, 1000));
    OK(marquet_table_append(t, b, NULL));
    marquet_batch_free(b);

    int64_t count = -1;
    OK(marquet_table_index_count(t, S("p"), &count));
    EXPECT(count == 0);
    OK(marquet_table_build_index(t, S("p"), MARQUET_INDEX_BLOCK_BBOX, 100));
    OK(marquet_table_build_index(t, S("p"), MARQUET_INDEX_PACKED_RTREE, 0));
    OK(marquet_table_index_count(t, S("p"), &count));
    EXPECT(count == 2);
    int32_t kind = -1, valid = -1;
    OK(marquet_table_index_info(t, S("p"), 0, &kind, &valid));
    EXPECT(kind == MARQUET_INDEX_BLOCK_BBOX && valid == 1);
    OK(marquet_table_index_info(t, S("p"), 1, &kind, &valid));
    EXPECT(kind == MARQUET_INDEX_PACKED_RTREE && valid == 1);

    /* x 10..12, y 2..3: 6 points in blocks 2 and 3. The valid R-tree answers alone (6
       candidates); the block index is not read. */
    int64_t stats[8], rows[8];
    marquet_query_result *r = NULL;
    OK(marquet_table_query_box(t, S("p"), 10, 2, 12, 3, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    OK(marquet_query_result_rows(r, rows, 8));
    OK(marquet_query_result_stats(r, stats, 8, NULL));
    EXPECT(count == 6 && rows[0] == 210 && rows[2] == 212 && rows[3] == 310 && rows[5] == 312);
    EXPECT(stats[0] == 1000 && stats[1] == 0 && stats[2] == 0 && stats[3] == 6 && stats[6] == 6);
    marquet_query_result_free(r);

    /* LEAVE_STALE: an append extends the block index and leaves the R-tree stale. */
    OK(marquet_table_set_rtree_policy(t, MARQUET_RTREE_LEAVE_STALE));
    double ax[10] = {11, 11, 11, 11, 11, 11, 11, 11, 11, 11}, ay[10] = {2.5, 2.5, 2.5, 2.5, 2.5, 50, 50, 50, 50, 50};
    OK(marquet_batch_new(&b));
    OK(marquet_batch_set_points(b, S("p"), MARQUET_DIMENSIONS_XY, ax, ay, NULL, NULL, NULL, 10));
    int64_t nrows = -1;
    OK(marquet_table_append(t, b, &nrows));
    marquet_batch_free(b);
    EXPECT(nrows == 1010);
    OK(marquet_table_index_info(t, S("p"), 0, &kind, &valid));
    EXPECT(kind == MARQUET_INDEX_BLOCK_BBOX && valid == 1);
    OK(marquet_table_index_info(t, S("p"), 1, &kind, &valid));
    EXPECT(kind == MARQUET_INDEX_PACKED_RTREE && valid == 0);
    r = NULL;
    OK(marquet_table_query_box(t, S("p"), 10, 2, 12, 3, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    EXPECT(count == 11);
    marquet_query_result_free(r);
    marquet_report *rep = NULL;
    int32_t conformant = -1;
    OK(marquet_file_flush(f));
    OK(marquet_validate_file(S(scratch(dir, "indexes.h5")), NULL, 0, 0, &rep));
    OK(marquet_report_conformant(rep, &conformant));
    EXPECT(conformant == 1);
    marquet_report_free(rep);

    int64_t rebuilt = -1;
    OK(marquet_table_rebuild_indexes(t, S("p"), &rebuilt));
    EXPECT(rebuilt == 2);
    OK(marquet_table_index_info(t, S("p"), 1, &kind, &valid));
    EXPECT(valid == 1);

    /* Truncation: rows 500.. go, the block index is cut, the R-tree goes stale again. */
    OK(marquet_table_truncate(t, 500));
    OK(marquet_table_nrows(t, &nrows));
    EXPECT(nrows == 500);
    OK(marquet_table_index_info(t, S("p"), 0, &kind, &valid));
    EXPECT(valid == 1);
    OK(marquet_table_index_info(t, S("p"), 1, &kind, &valid));
    EXPECT(valid == 0);
    r = NULL;
    OK(marquet_table_query_box(t, S("p"), 10, 2, 12, 3, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    OK(marquet_query_result_stats(r, stats, 8, NULL));
    EXPECT(count == 6 && stats[0] == 500 && stats[1] == 5 && stats[2] == 3);
    marquet_query_result_free(r);
    EXPECT_STATUS(marquet_table_truncate(t, 501), MARQUET_STATUS_OUT_OF_RANGE);
    EXPECT(error_contains("nrows 501 is larger than the table's 500 rows"));
    EXPECT_STATUS(marquet_table_truncate(t, -1), MARQUET_STATUS_INVALID_ARGUMENT);

    int64_t dropped = -1;
    OK(marquet_table_drop_index(t, S("p"), MARQUET_INDEX_PACKED_RTREE, &dropped));
    EXPECT(dropped == 1);
    OK(marquet_table_drop_index(t, S("p"), MARQUET_INDEX_PACKED_RTREE, &dropped));
    EXPECT(dropped == 0);
    OK(marquet_table_index_count(t, S("p"), &count));
    EXPECT(count == 1);

    /* Refused arguments. */
    EXPECT_STATUS(marquet_table_build_index(t, S("p"), 7, 0), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("kind 7 is not a MARQUET_INDEX_* value"));
    EXPECT_STATUS(marquet_table_build_index(t, S("p"), MARQUET_INDEX_PACKED_RTREE, 1), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("node size 1 is outside 2..65535"));
    EXPECT_STATUS(marquet_table_build_index(t, S("p"), MARQUET_INDEX_BLOCK_BBOX, -5), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(marquet_table_build_index(t, S("nosuch"), MARQUET_INDEX_BLOCK_BBOX, 0) != MARQUET_STATUS_OK);
    EXPECT(error_contains("nosuch"));
    EXPECT_STATUS(marquet_table_build_index(NULL, S("p"), MARQUET_INDEX_BLOCK_BBOX, 0), MARQUET_STATUS_NULL_POINTER);
    kind = valid = -1;
    EXPECT_STATUS(marquet_table_index_info(t, S("p"), 1, &kind, &valid), MARQUET_STATUS_OUT_OF_RANGE);
    EXPECT(kind == -1 && valid == -1);
    EXPECT_STATUS(marquet_table_index_info(t, S("p"), 0, NULL, &valid), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_table_index_count(t, S("p"), NULL), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_table_set_rtree_policy(t, 0), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_table_drop_index(t, S("p"), 0, NULL), MARQUET_STATUS_INVALID_ARGUMENT);

    marquet_table_free(t);
    marquet_file_free(f);
}

static void test_last_error_buffer(void) {
    marquet_file *f = NULL;
    EXPECT_STATUS(marquet_file_open(NULL, 1, &f), MARQUET_STATUS_NULL_POINTER);
    size_t needed = 0;
    char tiny[3] = {'q', 'q', 'q'};
    EXPECT_STATUS(marquet_last_error_message(tiny, sizeof tiny, &needed), MARQUET_STATUS_BUFFER_TOO_SMALL);
    EXPECT(needed == strlen("path is null") + 1 && tiny[0] == 'q');
    EXPECT_STATUS(marquet_last_error_message(NULL, 0, &needed), MARQUET_STATUS_BUFFER_TOO_SMALL);
    EXPECT_STATUS(marquet_last_error_message(NULL, 8, &needed), MARQUET_STATUS_NULL_POINTER);
    /* Reading the message does not replace it. */
    EXPECT(strcmp(last_error(), "path is null") == 0);
}

/* ORIENTATION = COUNTERCLOCKWISE through the C ABI (HEP002 §9.2; issue 18): a clockwise
   ring is refused naming its row, or re-wound when the table handle asks for it. */
static void test_orientation(const char *dir) {
    const char *path = scratch(dir, "orientation.h5");
    marquet_file *file = NULL;
    marquet_table *t = NULL;
    marquet_geometry_column_options *o = NULL;
    marquet_batch *b = NULL;
    OK(marquet_file_create(path, strlen(path), &file));
    OK(marquet_table_create(file, S("/polys"), &t));
    marquet_file_free(file);
    OK(marquet_geometry_column_options_new(&o));
    OK(marquet_geometry_column_options_set_orientation(o, 1));
    OK(marquet_table_add_geometry_column(t, S("shape"), o));
    marquet_geometry_column_options_free(o);
    uint8_t w[128];
    size_t n = polygon_wkb(w);
    double rev[8] = {0, 0, 1, 1, 1, 0, 0, 0};
    memcpy(w + 13, rev, sizeof rev);
    int64_t off[2] = {0, (int64_t)n};
    OK(marquet_batch_new(&b));
    OK(marquet_batch_set_wkb(b, S("shape"), w, n, off, NULL, 1));
    EXPECT_STATUS(marquet_table_append(t, b, NULL), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("/polys/shape row 0: HEP002 §9.2"));
    EXPECT_STATUS(marquet_table_set_rewind_rings(t, 2), MARQUET_STATUS_INVALID_ARGUMENT);
    OK(marquet_table_set_rewind_rings(t, 1));
    int64_t nrows = -1;
    OK(marquet_table_append(t, b, &nrows));
    EXPECT(nrows == 1);
    marquet_batch_free(b);
    marquet_table_free(t);
    marquet_report *r = NULL;
    int32_t conformant = -1;
    OK(marquet_validate_file(path, strlen(path), NULL, 0, 1, &r));
    OK(marquet_report_conformant(r, &conformant));
    EXPECT(conformant == 1);
    marquet_report_free(r);
}

/* CRS definitions resolved with PROJ (issue #22): an authority code becomes PROJJSON,
 * OGC:CRS84 / EPSG:4326 the default, an unknown code an error that changes nothing. */
static void test_crs_definition(const char *dir) {
    const char *path = scratch(dir, "crs.h5");
    marquet_file *file = NULL;
    marquet_table *t = NULL;
    marquet_geometry_column_options *o = NULL;
    OK(marquet_file_create(path, strlen(path), &file));
    OK(marquet_table_create(file, S("/t"), &t));
    marquet_file_free(file);
    OK(marquet_geometry_column_options_new(&o));
    OK(marquet_geometry_column_options_set_crs_definition(o, S("urn:ogc:def:crs:EPSG::3857")));
    EXPECT_STATUS(marquet_geometry_column_options_set_crs_definition(o, S("EPSG:999999")), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("EPSG:999999"));
    OK(marquet_table_add_geometry_column(t, S("merc"), o));
    OK(marquet_geometry_column_options_set_crs_definition(o, S("EPSG:4326")));
    OK(marquet_table_add_geometry_column(t, S("lonlat"), o));
    marquet_geometry_column_options_free(o);
    marquet_geometry_info *gi = NULL;
    int32_t crs = -1;
    char buf[8192];
    size_t needed = 0;
    OK(marquet_table_geometry_info(t, S("merc"), &gi));
    OK(marquet_geometry_info_crs(gi, &crs));
    EXPECT(crs == MARQUET_CRS_PROJJSON);
    OK(marquet_geometry_info_crs_projjson(gi, buf, sizeof buf, &needed));
    EXPECT(strstr(buf, "\"ProjectedCRS\"") != NULL && strstr(buf, "\"code\":3857") != NULL);
    marquet_geometry_info_free(gi);
    OK(marquet_table_geometry_info(t, S("lonlat"), &gi));
    OK(marquet_geometry_info_crs(gi, &crs));
    EXPECT(crs == MARQUET_CRS_DEFAULT);
    marquet_geometry_info_free(gi);
    marquet_table_free(t);
}

/* marquet_spatial_reader (issue #20): one reader answers many windows exactly as
 * marquet_table_query_box does (2,500 grid points with a block index, every 10th null),
 * keeps its answers after the table handle is freed, sees rows appended meanwhile, and
 * refuses bad arguments with the out pointer untouched. Run under valgrind: no leaks. */
static void test_spatial_reader(const char *dir) {
    marquet_file *f = NULL;
    marquet_table *t = NULL;
    marquet_batch *b = NULL;
    OK(marquet_file_create(S(scratch(dir, "reader.h5")), &f));
    OK(marquet_table_create(f, S("/r"), &t));
    marquet_geometry_column_options *o = NULL;
    OK(marquet_geometry_column_options_new(&o));
    OK(marquet_geometry_column_options_set_form(o, MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XY, 0, 0));
    OK(marquet_table_add_geometry_column(t, S("pt"), o));
    marquet_geometry_column_options_free(o);
    enum { N = 2500 };
    static double x[N], y[N];
    static uint8_t valid[N];
    for (int i = 0; i < N; i++) {
        x[i] = (double)(i % 50);
        y[i] = (double)(i / 50);
        valid[i] = i % 10 != 0;
    }
    OK(marquet_batch_new(&b));
    OK(marquet_batch_set_points(b, S("pt"), MARQUET_DIMENSIONS_XY, x, y, NULL, NULL, valid, N));
    OK(marquet_table_append(t, b, NULL));
    OK(marquet_table_build_index(t, S("pt"), MARQUET_INDEX_BLOCK_BBOX, 64));

    marquet_spatial_reader *rd = NULL, *primary = NULL;
    OK(marquet_spatial_reader_open(t, S("pt"), &rd));
    OK(marquet_spatial_reader_open(t, NULL, 0, &primary));
    static int64_t a[N], c[N];
    for (int w = 0; w < 40; w++) {
        double x0 = (w * 7) % 45, y0 = (w * 11) % 45, side = 1 + w % 6;
        for (int32_t flags = 0; flags <= (MARQUET_QUERY_USE_INDEXES | MARQUET_QUERY_KEEP_GEOMETRY); flags++) {
            marquet_query_result *r1 = NULL, *r2 = NULL, *r3 = NULL;
            int64_t n1 = -1, n2 = -2, n3 = -3;
            OK(marquet_spatial_reader_query_box(rd, x0, y0, x0 + side, y0 + side, MARQUET_PREDICATE_INTERSECTS, flags, &r1));
            OK(marquet_table_query_box(t, S("pt"), x0, y0, x0 + side, y0 + side, MARQUET_PREDICATE_INTERSECTS, flags, &r2));
            OK(marquet_spatial_reader_query_box(primary, x0, y0, x0 + side, y0 + side, MARQUET_PREDICATE_INTERSECTS, flags, &r3));
            OK(marquet_query_result_count(r1, &n1));
            OK(marquet_query_result_count(r2, &n2));
            OK(marquet_query_result_count(r3, &n3));
            /* (side + 1)^2 grid points, those with i % 10 == 0 (x % 10 == 0) null. */
            int64_t want = 0;
            for (int xi = (int)x0; xi <= (int)(x0 + side); xi++) {
                want += xi % 10 != 0 ? (int64_t)side + 1 : 0;
            }
            EXPECT(n1 == want && n2 == want && n3 == want);
            OK(marquet_query_result_rows(r1, a, N));
            OK(marquet_query_result_rows(r2, c, N));
            EXPECT(memcmp(a, c, (size_t)n1 * sizeof a[0]) == 0);
            /* Kept geometries (reader and table): each match's point WKB holds the
             * coordinates written for its row. */
            for (int k = 0; k < 2 && (flags & MARQUET_QUERY_KEEP_GEOMETRY); k++) {
                static uint8_t g[N * 21];
                static int64_t go[N + 1];
                size_t need = 0;
                OK(marquet_query_result_wkb(k ? r2 : r1, g, sizeof g, go, NULL, &need));
                int64_t bad = 0;
                for (int64_t i = 0; i < n1; i++) {
                    double gx, gy;
                    memcpy(&gx, g + go[i] + 5, 8);
                    memcpy(&gy, g + go[i] + 13, 8);
                    bad += go[i + 1] - go[i] != 21 || gx != x[a[i]] || gy != y[a[i]];
                }
                EXPECT(bad == 0 && need == (size_t)n1 * 21);
            }
            marquet_query_result_free(r1);
            marquet_query_result_free(r2);
            marquet_query_result_free(r3);
        }
    }
    /* A WKB window (the point (3 4)) through the reader. */
    uint8_t wkb[32];
    size_t n = point_wkb(wkb, 3, 4);
    marquet_query_result *r = NULL;
    int64_t count = -1, row = -1;
    OK(marquet_spatial_reader_query_wkb(rd, wkb, n, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    OK(marquet_query_result_rows(r, &row, 1));
    EXPECT(count == 1 && row == 4 * 50 + 3);
    marquet_query_result_free(r);
    /* Rows appended through the table handle are seen by the open reader. */
    OK(marquet_table_append(t, b, NULL));
    marquet_batch_free(b);
    r = NULL;
    OK(marquet_spatial_reader_query_box(rd, 2.5, 3.5, 3.5, 4.5, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    EXPECT(count == 2);
    marquet_query_result_free(r);
    /* Refused arguments leave *out untouched. */
    marquet_query_result *untouched = NULL;
    marquet_spatial_reader *no_reader = NULL;
    EXPECT_STATUS(marquet_spatial_reader_query_box(rd, NAN, 0, 1, 1, MARQUET_PREDICATE_BBOX, 1, &untouched), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_spatial_reader_query_box(rd, 0, 2, 1, 1, MARQUET_PREDICATE_BBOX, 1, &untouched), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(error_contains("ymin 2 > ymax 1"));
    EXPECT_STATUS(marquet_spatial_reader_query_box(rd, 0, 0, 1, 1, 9, 1, &untouched), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_spatial_reader_query_box(rd, 0, 0, 1, 1, MARQUET_PREDICATE_BBOX, 1, NULL), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_spatial_reader_query_box(NULL, 0, 0, 1, 1, MARQUET_PREDICATE_BBOX, 1, &untouched), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_spatial_reader_query_wkb(rd, wkb, 3, MARQUET_PREDICATE_INTERSECTS, 1, &untouched), MARQUET_STATUS_INVALID_WKB);
    EXPECT(untouched == NULL);
    EXPECT(marquet_spatial_reader_open(t, S("nosuch"), &no_reader) != MARQUET_STATUS_OK);
    EXPECT(no_reader == NULL && error_contains("nosuch"));
    EXPECT_STATUS(marquet_spatial_reader_open(t, NULL, 3, &no_reader), MARQUET_STATUS_NULL_POINTER);
    /* The reader outlives the table and file handles. */
    marquet_table_free(t);
    marquet_file_free(f);
    r = NULL;
    OK(marquet_spatial_reader_query_box(rd, 0, 0, 49, 49, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    EXPECT(count == 2 * (N - N / 10));
    marquet_query_result_free(r);
    marquet_spatial_reader_free(rd);
    marquet_spatial_reader_free(rd); /* a second free is a no-op */
    marquet_spatial_reader_free(primary);
    marquet_spatial_reader_free(NULL);
    EXPECT_STATUS(marquet_spatial_reader_query_box(rd, 0, 0, 1, 1, MARQUET_PREDICATE_BBOX, 1, &untouched), MARQUET_STATUS_INVALID_HANDLE);

    /* The file opened read-only: the table's queries and a reader run on the byte-range
     * path (the table keeps a reader per column); every window twice, the same answers
     * as the grid says (the 2,500 points twice now). */
    OK(marquet_file_open(S(scratch(dir, "reader.h5")), &f));
    OK(marquet_table_open(f, S("/r"), &t));
    OK(marquet_spatial_reader_open(t, S("pt"), &rd));
    for (int w = 0; w < 80; w++) {
        double x0 = (w * 7) % 45, y0 = (w * 11) % 45, side = 1 + w % 6;
        marquet_query_result *r1 = NULL, *r2 = NULL;
        int64_t n1 = -1, n2 = -2;
        OK(marquet_table_query_box(t, S("pt"), x0, y0, x0 + side, y0 + side, MARQUET_PREDICATE_INTERSECTS, w % 2, &r1));
        OK(marquet_spatial_reader_query_box(rd, x0, y0, x0 + side, y0 + side, MARQUET_PREDICATE_INTERSECTS, 1, &r2));
        OK(marquet_query_result_count(r1, &n1));
        OK(marquet_query_result_count(r2, &n2));
        int64_t want = 0;
        for (int xi = (int)x0; xi <= (int)(x0 + side); xi++) {
            want += xi % 10 != 0 ? 2 * ((int64_t)side + 1) : 0;
        }
        EXPECT(n1 == want && n2 == want);
        OK(marquet_query_result_rows(r1, a, N));
        OK(marquet_query_result_rows(r2, c, N));
        EXPECT(memcmp(a, c, (size_t)n1 * sizeof a[0]) == 0);
        marquet_query_result_free(r1);
        marquet_query_result_free(r2);
    }
    EXPECT(marquet_table_query_box(t, S("nosuch"), 0, 0, 1, 1, MARQUET_PREDICATE_BBOX, 1, &untouched) != MARQUET_STATUS_OK);
    EXPECT(untouched == NULL && error_contains("nosuch"));
    marquet_table_free(t);
    marquet_file_free(f);
    marquet_spatial_reader_free(rd);
}

/* Files by URL (issue #34): a reader over a file:// URL answers as the local table (read
 * by byte range); marquet_file_open_url reads the object whole; a missing object is
 * MARQUET_STATUS_REMOTE and leaves *out untouched; a plain path is not a URL. */
static void test_url_reader(const char *dir) {
    char path[4096], url[4200], missing[4300];
    EXPECT(realpath(scratch(dir, "reader.h5"), path) != NULL);
    snprintf(url, sizeof url, "file://%s", path);
    snprintf(missing, sizeof missing, "%s.missing", url);
    /* reader.h5 as test_spatial_reader left it: 5000 points, 4500 of them not null. */
    marquet_spatial_reader *rd = NULL;
    marquet_query_result *r = NULL;
    int64_t count = -1;
    OK(marquet_spatial_reader_open_url(S(url), S("/r"), S("pt"), &rd));
    OK(marquet_spatial_reader_query_box(rd, 0, 0, 49, 49, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    EXPECT(count == 4500);
    marquet_query_result_free(r);
    marquet_spatial_reader_free(rd);
    rd = NULL;
    r = NULL;
    OK(marquet_spatial_reader_open_url(S(url), NULL, 0, NULL, 0, &rd)); /* the one table, its primary column */
    OK(marquet_spatial_reader_query_box(rd, 2.5, 3.5, 3.5, 4.5, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    EXPECT(count == 2);
    marquet_query_result_free(r);
    marquet_spatial_reader_free(rd);
    marquet_file *f = NULL;
    marquet_table *t = NULL;
    OK(marquet_file_open_url(S(url), &f));
    OK(marquet_table_open(f, S("/r"), &t));
    r = NULL;
    OK(marquet_table_query_box(t, S("pt"), 0, 0, 49, 49, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    OK(marquet_query_result_count(r, &count));
    EXPECT(count == 4500);
    marquet_query_result_free(r);
    marquet_table_free(t);
    marquet_file_free(f);
    marquet_spatial_reader *none = NULL;
    marquet_file *nf = NULL;
    EXPECT_STATUS(marquet_spatial_reader_open_url(S(missing), NULL, 0, NULL, 0, &none), MARQUET_STATUS_REMOTE);
    EXPECT(none == NULL && error_contains("no such object"));
    EXPECT_STATUS(marquet_file_open_url(S(missing), &nf), MARQUET_STATUS_REMOTE);
    EXPECT(nf == NULL);
    EXPECT_STATUS(marquet_spatial_reader_open_url(S(path), NULL, 0, NULL, 0, &none), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_spatial_reader_open_url(NULL, 3, NULL, 0, NULL, 0, &none), MARQUET_STATUS_NULL_POINTER);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    test_statics();
    test_null_pointers(dir);
    test_batch_arguments();
    test_tables(dir);
    test_points(dir);
    test_orientation(dir);
    test_crs_definition(dir);
    test_validate(dir);
    test_query(dir);
    test_spatial_reader(dir);
    test_url_reader(dir);
    test_indexes(dir);
    test_write_default_layout(dir);
    test_last_error_buffer();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
