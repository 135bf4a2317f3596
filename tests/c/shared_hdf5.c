/*
 * One open HDF5 file shared between a program's own HDF5 calls and libmarquet (HEP002
 * §1.1: arrays and features in one file). Needs a libmarquet built against the same
 * shared libhdf5 as this program (scripts/test-shared-hdf5.sh builds both and compares
 * this program's stdout with tests/c/shared_hdf5.expected and h5dump of its file with
 * testdata/golden/capi_shared_hdf5.ddl).
 *
 *   shared_hdf5 OUT.h5
 *
 * 1. H5Fcreate the file; write the program's own dataset /temperature and group /vector.
 * 2. Hand the file hid_t to marquet_file_from_hid: create the Marquet table /stations.
 * 3. Hand the group hid_t: create the table "roads" relative to it (/vector/roads); close
 *    the program's ids first, then append through libmarquet (its handle keeps the file
 *    open), then free it.
 * 4. Reopen with libmarquet only: list the tables, query, validate strictly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "marquet.h"

static void check(int32_t status, const char *what) {
    if (status == MARQUET_STATUS_OK) {
        return;
    }
    char msg[2048];
    size_t needed = 0;
    if (marquet_last_error_message(msg, sizeof msg, &needed) != MARQUET_STATUS_OK) {
        msg[0] = '\0';
    }
    fprintf(stderr, "%s failed: %s (%d): %s\n", what, marquet_status_str(status), (int)status, msg);
    exit(1);
}

static void h5check(long long v, const char *what) {
    if (v < 0) {
        fprintf(stderr, "%s failed\n", what);
        exit(1);
    }
}

#define CHECK(call) check((call), #call)
#define HCHECK(call) h5check((long long)(call), #call)
#define S(literal) literal, strlen(literal)

static marquet_geometry_column_options *point_options(void) {
    marquet_geometry_column_options *opts = NULL;
    CHECK(marquet_geometry_column_options_new(&opts));
    CHECK(marquet_geometry_column_options_set_deflate(opts, -1));
    CHECK(marquet_geometry_column_options_set_form(opts, MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XY, 0, 0));
    return opts;
}

static void append_points(marquet_table *t, const char *col, const double *x, const double *y, int64_t n) {
    marquet_batch *b = NULL;
    int64_t nrows = 0;
    CHECK(marquet_batch_new(&b));
    CHECK(marquet_batch_set_points(b, col, strlen(col), MARQUET_DIMENSIONS_XY, x, y, NULL, NULL, NULL, n));
    CHECK(marquet_table_append(t, b, &nrows));
    marquet_batch_free(b);
    char path[256];
    size_t needed = 0;
    CHECK(marquet_table_path(t, path, sizeof path, &needed));
    printf("%s: %lld rows\n", path, (long long)nrows);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "shared_hdf5.h5";

    /* 1. The program's own HDF5 work. */
    hid_t fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    HCHECK(fid);
    hsize_t dims[2] = {2, 3};
    double temperature[6] = {10.5, 11.0, 11.5, 12.0, 12.5, 13.0};
    hid_t sid = H5Screate_simple(2, dims, NULL);
    hid_t did = H5Dcreate2(fid, "/temperature", H5T_IEEE_F64LE, sid, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    HCHECK(did);
    HCHECK(H5Dwrite(did, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, temperature));
    HCHECK(H5Dclose(did));
    HCHECK(H5Sclose(sid));
    hid_t gid = H5Gcreate2(fid, "/vector", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    HCHECK(gid);

    /* Identifiers that are not files or groups are refused, without harm. */
    marquet_file *bad = NULL;
    printf("from_hid(H5T_NATIVE_INT): %s\n", marquet_status_str(marquet_file_from_hid(H5T_NATIVE_INT, &bad)));
    printf("from_hid(-1): %s\n", marquet_status_str(marquet_file_from_hid(-1, &bad)));
    printf("bad handle still NULL: %s\n", bad == NULL ? "yes" : "no");

    /* 2. The file hid_t: a table at /stations. */
    marquet_file *mf = NULL;
    marquet_table *stations = NULL;
    CHECK(marquet_file_from_hid(fid, &mf));
    CHECK(marquet_table_create(mf, S("/stations"), &stations));
    marquet_geometry_column_options *opts = point_options();
    CHECK(marquet_table_add_geometry_column(stations, S("location"), opts));
    double sx[2] = {-88.2434, 2.3522}, sy[2] = {40.1164, 48.8566};
    append_points(stations, "location", sx, sy, 2);
    marquet_table_free(stations);
    marquet_file_free(mf);

    /* The program sees Marquet's dataset in its own open file. */
    hid_t loc = H5Dopen2(fid, "/stations/location", H5P_DEFAULT);
    HCHECK(loc);
    hid_t lsp = H5Dget_space(loc);
    hsize_t n = 0;
    HCHECK(H5Sget_simple_extent_dims(lsp, &n, NULL));
    printf("program's H5Dopen2(/stations/location): %llu elements\n", (unsigned long long)n);
    HCHECK(H5Sclose(lsp));
    HCHECK(H5Dclose(loc));

    /* 3. The group hid_t: "roads" is relative to /vector. The program closes its ids
     * before libmarquet is done: the file stays open through libmarquet's reference. */
    marquet_file *mg = NULL;
    marquet_table *roads = NULL;
    CHECK(marquet_file_from_hid(gid, &mg));
    CHECK(marquet_table_create(mg, S("roads"), &roads));
    CHECK(marquet_table_add_geometry_column(roads, S("junction"), opts));
    marquet_geometry_column_options_free(opts);
    HCHECK(H5Gclose(gid));
    HCHECK(H5Fclose(fid));
    double rx[3] = {0.0, 1.0, 2.0}, ry[3] = {0.0, 1.0, 0.5};
    append_points(roads, "junction", rx, ry, 3);
    marquet_table_free(roads);
    marquet_file_free(mg);
    printf("open HDF5 objects after closing everything: %lld\n", (long long)H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL));

    /* 4. Read back with libmarquet alone. */
    marquet_file *rf = NULL;
    int64_t ntables = 0;
    CHECK(marquet_file_open(path, strlen(path), &rf));
    CHECK(marquet_file_table_count(rf, &ntables));
    for (int64_t i = 0; i < ntables; i++) {
        char name[256];
        size_t needed = 0;
        CHECK(marquet_file_table_name(rf, i, name, sizeof name, &needed));
        printf("table %s\n", name);
    }
    marquet_table *t = NULL;
    marquet_query_result *r = NULL;
    int64_t count = 0, rows[3];
    CHECK(marquet_table_open(rf, S("/vector/roads"), &t));
    CHECK(marquet_table_query_box(t, S("junction"), 0.5, 0.5, 2.5, 1.5, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    CHECK(marquet_query_result_count(r, &count));
    CHECK(marquet_query_result_rows(r, rows, 3));
    printf("/vector/roads junction intersects [0.5 0.5 2.5 1.5]: %lld rows:", (long long)count);
    for (int64_t i = 0; i < count; i++) {
        printf(" %lld", (long long)rows[i]);
    }
    printf("\n");
    marquet_query_result_free(r);
    marquet_table_free(t);
    marquet_file_free(rf);

    marquet_report *report = NULL;
    int32_t conformant = 0;
    int64_t findings = 0;
    CHECK(marquet_validate_file(path, strlen(path), NULL, 0, 1, &report));
    CHECK(marquet_report_conformant(report, &conformant));
    CHECK(marquet_report_finding_count(report, &findings));
    printf("validate (strict): %s, %lld findings\n", conformant ? "conformant" : "NOT conformant", (long long)findings);
    marquet_report_free(report);
    return conformant ? 0 : 1;
}
