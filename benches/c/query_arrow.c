/*
 * Window queries answered as Arrow through the C ABI, two ways (issue #33 item 1):
 *
 *   take: marquet_table_query_box (MARQUET_QUERY_USE_INDEXES), marquet_query_result_rows,
 *         marquet_table_take_arrow: the rows are read again, geometries included;
 *   kept: marquet_table_query_box (| MARQUET_QUERY_KEEP_GEOMETRY),
 *         marquet_query_result_take_arrow: the geometry column comes from the answer.
 *
 *   query_arrow FILE TABLE COLUMN WINDOWS take|kept [PASSES]
 *
 * WINDOWS holds one "xmin,ymin,xmax,ymax" per line. Every column is read; each batch is
 * consumed (its rows counted, the geometry bytes summed). Prints the rows, the geometry
 * bytes (equal for both ways) and the best pass's time per window. One table handle of
 * the file opened read-only serves all windows (its warm reader, as a GIS layer's).
 *
 * Build: cc -O2 -Iinclude benches/c/query_arrow.c -Ltarget/release -lmarquet \
 *          -Wl,-rpath,$PWD/target/release -o query_arrow   (after cargo build --release -p marquet-capi)
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "marquet.h"

static void check(int32_t st, const char *what) {
    if (st != MARQUET_STATUS_OK) {
        char msg[4096];
        size_t needed = 0;
        marquet_last_error_message(msg, sizeof msg, &needed);
        fprintf(stderr, "%s: %s: %s\n", what, marquet_status_str(st), msg);
        exit(1);
    }
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 6 || (strcmp(argv[5], "take") != 0 && strcmp(argv[5], "kept") != 0)) {
        fprintf(stderr, "usage: query_arrow FILE TABLE COLUMN WINDOWS take|kept [PASSES]\n");
        return 2;
    }
    const char *path = argv[1], *table = argv[2], *column = argv[3];
    int kept = strcmp(argv[5], "kept") == 0;
    int passes = argc > 6 ? atoi(argv[6]) : 1;
    double (*w)[4] = malloc(100000 * sizeof *w);
    int nw = 0;
    FILE *fh = fopen(argv[4], "r");
    if (fh == NULL || w == NULL) {
        perror(argv[4]);
        return 1;
    }
    while (nw < 100000 && fscanf(fh, "%lf,%lf,%lf,%lf", &w[nw][0], &w[nw][1], &w[nw][2], &w[nw][3]) == 4) {
        nw++;
    }
    fclose(fh);

    marquet_file *f = NULL;
    marquet_table *t = NULL;
    check(marquet_file_open(path, strlen(path), &f), "marquet_file_open");
    check(marquet_table_open(f, table, strlen(table), &t), "marquet_table_open");
    int32_t flags = MARQUET_QUERY_USE_INDEXES | (kept ? MARQUET_QUERY_KEEP_GEOMETRY : 0);
    double best = 1e30;
    int64_t rows_total = 0, bytes_total = 0;
    int64_t *rows = NULL;
    size_t cap = 0;
    for (int p = 0; p < passes; p++) {
        rows_total = bytes_total = 0;
        double t0 = now();
        for (int i = 0; i < nw; i++) {
            marquet_query_result *r = NULL;
            check(marquet_table_query_box(t, column, strlen(column), w[i][0], w[i][1], w[i][2], w[i][3],
                                          MARQUET_PREDICATE_INTERSECTS, flags, &r),
                  "marquet_table_query_box");
            struct ArrowArrayStream st;
            memset(&st, 0, sizeof st);
            if (kept) {
                check(marquet_query_result_take_arrow(t, r, NULL, 0, NULL, 0, 0, &st), "marquet_query_result_take_arrow");
            } else {
                int64_t n = 0;
                check(marquet_query_result_count(r, &n), "marquet_query_result_count");
                if ((size_t)n > cap) {
                    cap = (size_t)n;
                    rows = realloc(rows, cap * sizeof *rows);
                }
                check(marquet_query_result_rows(r, rows, cap), "marquet_query_result_rows");
                check(marquet_table_take_arrow(t, NULL, 0, NULL, 0, rows, n, 0, &st), "marquet_table_take_arrow");
            }
            marquet_query_result_free(r);
            struct ArrowSchema s;
            memset(&s, 0, sizeof s);
            if (st.get_schema(&st, &s) != 0) {
                fprintf(stderr, "get_schema: %s\n", st.get_last_error(&st));
                return 1;
            }
            int64_t g = -1;
            for (int64_t k = 0; k < s.n_children; k++) {
                if (strcmp(s.children[k]->name, column) == 0) {
                    g = k;
                }
            }
            s.release(&s);
            for (;;) {
                struct ArrowArray a;
                memset(&a, 0, sizeof a);
                if (st.get_next(&st, &a) != 0) {
                    fprintf(stderr, "get_next: %s\n", st.get_last_error(&st));
                    return 1;
                }
                if (a.release == NULL) {
                    break;
                }
                rows_total += a.length;
                if (g >= 0) {
                    const struct ArrowArray *c = a.children[g];
                    const int32_t *o = (const int32_t *)c->buffers[1] + c->offset;
                    bytes_total += o[c->length] - o[0];
                }
                a.release(&a);
            }
            st.release(&st);
        }
        double dt = now() - t0;
        best = dt < best ? dt : best;
    }
    printf("%s: %d windows, %lld rows, %lld geometry bytes, %.4f ms a window (best of %d)\n", argv[5], nw,
           (long long)rows_total, (long long)bytes_total, 1e3 * best / nw, passes);
    free(rows);
    free(w);
    marquet_table_free(t);
    marquet_file_free(f);
    return 0;
}
