/*
 * HEP002 §15.1 through the C API: the stations table with the same three rows (a point,
 * a null, an empty point) in all three storage forms, written, queried by box and read
 * back. Its stdout is compared with stations.expected in CI (capi/tests/c_api.rs).
 *
 *   cc -std=c11 stations.c $(pkg-config --cflags --libs marquet) -o stations
 *   ./stations /tmp/stations.h5
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marquet.h"

/* Report a failed call with its status and detailed message, then exit. */
static void check(int32_t status, const char *what) {
    if (status == MARQUET_STATUS_OK) {
        return;
    }
    char msg[1024];
    size_t needed = 0;
    if (marquet_last_error_message(msg, sizeof msg, &needed) != MARQUET_STATUS_OK) {
        msg[0] = '\0';
    }
    fprintf(stderr, "%s failed: %s (%d): %s\n", what, marquet_status_str(status), (int)status, msg);
    exit(1);
}

#define CHECK(call) check((call), #call)
#define S(literal) literal, strlen(literal)

/* POINT (-88.2434 40.1164) as little-endian ISO WKB (HEP002 §15.1). */
static const uint8_t STATION_WKB[21] = {0x01, 0x01, 0x00, 0x00, 0x00, 0x2b, 0xf6, 0x97, 0xdd, 0x93, 0x0f,
                                        0x56, 0xc0, 0x90, 0xa0, 0xf8, 0x31, 0xe6, 0x0e, 0x44, 0x40};

static double le_double(const uint8_t *p) {
    double d;
    memcpy(&d, p, sizeof d); /* the example assumes a little-endian host */
    return d;
}

/* Print one WKB point as WKT (other types by their ISO code). */
static void print_wkb(const uint8_t *w, size_t n) {
    uint32_t type;
    if (n < 5 || w[0] != 1) {
        printf("<%zu bytes>", n);
        return;
    }
    memcpy(&type, w + 1, 4);
    if (type == 1 && n == 21) {
        double x = le_double(w + 5), y = le_double(w + 13);
        if (isnan(x) && isnan(y)) {
            printf("POINT EMPTY");
        } else {
            printf("POINT (%.4f %.4f)", x, y);
        }
    } else {
        printf("<geometry type %u, %zu bytes>", (unsigned)type, n);
    }
}

static void write_stations(const char *path) {
    marquet_file *file = NULL;
    marquet_table *table = NULL;
    marquet_geometry_column_options *opts = NULL;
    marquet_batch *batch = NULL;

    CHECK(marquet_file_create(path, strlen(path), &file));
    CHECK(marquet_table_create(file, S("/stations"), &table));

    /* Three geometry columns, one per storage form, stored without filters. */
    CHECK(marquet_geometry_column_options_new(&opts));
    CHECK(marquet_geometry_column_options_set_deflate(opts, -1));
    CHECK(marquet_geometry_column_options_set_form(opts, MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XY, 0, 0));
    CHECK(marquet_table_add_geometry_column(table, S("location"), opts));
    CHECK(marquet_geometry_column_options_set_form(opts, MARQUET_FORM_FIXED_WKB, 0, 0, 21));
    CHECK(marquet_table_add_geometry_column(table, S("location_wkb"), opts));
    CHECK(marquet_geometry_column_options_set_form(opts, MARQUET_FORM_VAR_WKB, 0, 0, 0));
    CHECK(marquet_table_add_geometry_column(table, S("location_wkb_list"), opts));
    marquet_geometry_column_options_free(opts);

    /* Rows: the station, a null, an empty point. */
    double x[3] = {-88.2434, 0.0, NAN};
    double y[3] = {40.1164, 0.0, NAN};
    uint8_t valid[3] = {1, 0, 1};
    uint8_t wkb[42];
    memcpy(wkb, STATION_WKB, 21);
    memcpy(wkb + 21, STATION_WKB, 5); /* an empty point: NaN coordinates */
    double nan = NAN;
    memcpy(wkb + 26, &nan, 8);
    memcpy(wkb + 34, &nan, 8);
    int64_t offsets[4] = {0, 21, 21, 42};

    CHECK(marquet_batch_new(&batch));
    CHECK(marquet_batch_set_points(batch, S("location"), MARQUET_DIMENSIONS_XY, x, y, NULL, NULL, valid, 3));
    CHECK(marquet_batch_set_wkb(batch, S("location_wkb"), wkb, sizeof wkb, offsets, valid, 3));
    CHECK(marquet_batch_set_wkb(batch, S("location_wkb_list"), wkb, sizeof wkb, offsets, valid, 3));
    int64_t nrows = 0;
    CHECK(marquet_table_append(table, batch, &nrows));
    marquet_batch_free(batch);
    printf("wrote %lld rows to /stations\n", (long long)nrows);

    marquet_table_free(table);
    CHECK(marquet_file_close(file));
    marquet_file_free(file);
}

static void print_info(marquet_table *table, const char *name) {
    marquet_geometry_info *info = NULL;
    int32_t form = 0, crs = 0, present = 0, has_z = 0, has_m = 0;
    int64_t fixed = 0;
    int32_t codes[8];
    size_t ncodes = 0;
    double bbox[8];

    CHECK(marquet_table_geometry_info(table, name, strlen(name), &info));
    CHECK(marquet_geometry_info_form(info, &form));
    CHECK(marquet_geometry_info_fixed_size(info, &fixed));
    CHECK(marquet_geometry_info_types(info, codes, 8, &ncodes));
    CHECK(marquet_geometry_info_bbox(info, bbox, 8, &present, &has_z, &has_m));
    CHECK(marquet_geometry_info_crs(info, &crs));
    printf("  form %s", form == MARQUET_FORM_POINT ? "point" : form == MARQUET_FORM_FIXED_WKB ? "fixed WKB" : "WKB");
    if (fixed > 0) {
        printf(" (%lld bytes)", (long long)fixed);
    }
    printf(", types");
    for (size_t i = 0; i < ncodes; i++) {
        printf(" %d", (int)codes[i]);
    }
    if (present) {
        printf(", bbox [%.4f %.4f %.4f %.4f]", bbox[0], bbox[1], bbox[4], bbox[5]);
    }
    printf(", crs %s\n", crs == MARQUET_CRS_DEFAULT ? "OGC:CRS84" : crs == MARQUET_CRS_UNKNOWN ? "unknown" : "PROJJSON");
    marquet_geometry_info_free(info);
}

static void read_stations(const char *path) {
    marquet_file *file = NULL;
    marquet_table *table = NULL;
    int64_t ntables = 0, ngeom = 0, nrows = 0;
    char name[256];
    size_t needed = 0;

    CHECK(marquet_file_open(path, strlen(path), &file));
    CHECK(marquet_file_table_count(file, &ntables));
    for (int64_t t = 0; t < ntables; t++) {
        CHECK(marquet_file_table_name(file, t, name, sizeof name, &needed));
        printf("table %s\n", name);
    }
    CHECK(marquet_table_open(file, S("/stations"), &table));
    marquet_file_free(file); /* the table keeps the file open */
    CHECK(marquet_table_nrows(table, &nrows));
    CHECK(marquet_table_geometry_column_count(table, &ngeom));

    for (int64_t g = 0; g < ngeom; g++) {
        CHECK(marquet_table_geometry_column_name(table, g, name, sizeof name, &needed));
        /* Ask for the size first, then read into a buffer of that size. */
        int64_t *offsets = malloc(sizeof(int64_t) * (size_t)(nrows + 1));
        uint8_t *valid = malloc((size_t)nrows);
        int32_t st = marquet_table_read_wkb(table, name, strlen(name), 0, nrows, NULL, 0, offsets, valid, &needed);
        if (st != MARQUET_STATUS_BUFFER_TOO_SMALL) {
            check(st, "marquet_table_read_wkb (size query)");
        }
        uint8_t *buf = malloc(needed > 0 ? needed : 1);
        CHECK(marquet_table_read_wkb(table, name, strlen(name), 0, nrows, buf, needed, offsets, valid, &needed));
        printf("%s:", name);
        for (int64_t i = 0; i < nrows; i++) {
            printf(" ");
            if (!valid[i]) {
                printf("NULL");
            } else {
                print_wkb(buf + offsets[i], (size_t)(offsets[i + 1] - offsets[i]));
            }
            printf(";");
        }
        printf("\n");
        print_info(table, name);
        free(buf);
        free(valid);
        free(offsets);
    }

    /* The point column also reads as coordinate arrays. */
    double x[3], y[3];
    uint8_t valid[3];
    CHECK(marquet_table_read_points(table, S("location"), 0, 3, x, y, NULL, NULL, valid));
    printf("location as arrays:");
    for (int i = 0; i < 3; i++) {
        if (valid[i]) {
            printf(" (%.4f, %.4f)", x[i], y[i]);
        } else {
            printf(" null");
        }
    }
    printf("\n");
    marquet_table_free(table);
}

/* Query every geometry column with a box and a predicate, and read the matching rows. */
static void query_box(marquet_table *table, const char *column, const double box[4], int32_t predicate, const char *pname) {
    marquet_query_result *result = NULL;
    int64_t count = 0;
    int32_t approximate = 0;
    CHECK(marquet_table_query_box(table, column, strlen(column), box[0], box[1], box[2], box[3], predicate, 1, &result));
    CHECK(marquet_query_result_count(result, &count));
    CHECK(marquet_query_result_approximate(result, &approximate));
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
    CHECK(marquet_query_result_rows(result, rows, (size_t)count));
    marquet_query_result_free(result);

    printf("%s %s [%g %g %g %g]: %lld row%s%s", column, pname, box[0], box[1], box[2], box[3], (long long)count,
           count == 1 ? "" : "s", approximate ? " (approximate)" : "");
    for (int64_t i = 0; i < count; i++) {
        /* Each matching row read back on its own: a one-row range [r, r + 1). */
        uint8_t wkb[64];
        int64_t offsets[2];
        uint8_t valid = 0;
        size_t needed = 0;
        CHECK(marquet_table_read_wkb(table, column, strlen(column), rows[i], rows[i] + 1, wkb, sizeof wkb, offsets, &valid,
                                     &needed));
        printf("%s row %lld ", i == 0 ? ":" : ",", (long long)rows[i]);
        print_wkb(wkb, (size_t)(offsets[1] - offsets[0]));
    }
    printf("\n");
    free(rows);
}

static void query_stations(const char *path) {
    marquet_file *file = NULL;
    marquet_table *table = NULL;
    const double around[4] = {-89.0, 40.0, -88.0, 41.0};
    const double elsewhere[4] = {0.0, 0.0, 10.0, 10.0};

    CHECK(marquet_file_open(path, strlen(path), &file));
    CHECK(marquet_table_open(file, S("/stations"), &table));
    query_box(table, "location", around, MARQUET_PREDICATE_INTERSECTS, "intersects");
    query_box(table, "location_wkb", around, MARQUET_PREDICATE_WITHIN, "within");
    query_box(table, "location_wkb_list", around, MARQUET_PREDICATE_BBOX, "bbox");
    query_box(table, "location", elsewhere, MARQUET_PREDICATE_INTERSECTS, "intersects");
    /* A point contains no box of positive area. */
    query_box(table, "location_wkb_list", around, MARQUET_PREDICATE_CONTAINS, "contains");
    marquet_table_free(table);
    marquet_file_free(file);
}

/* Run the conformance validator (HEP001 §13, HEP002 §12) strictly on the file. */
static void validate_stations(const char *path) {
    marquet_report *report = NULL;
    int32_t conformant = 0;
    int64_t findings = 0;
    CHECK(marquet_validate_file(path, strlen(path), NULL, 0, 1, &report));
    CHECK(marquet_report_conformant(report, &conformant));
    CHECK(marquet_report_finding_count(report, &findings));
    printf("validate (strict): %s, %lld findings\n", conformant ? "conformant" : "NOT conformant", (long long)findings);
    marquet_report_free(report);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "stations.h5";
    write_stations(path);
    read_stations(path);
    query_stations(path);
    validate_stations(path);
    return 0;
}
