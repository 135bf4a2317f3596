/*
 * Tests of the Arrow C data / C stream functions of the C ABI (capi/src/arrow.rs):
 * marquet_table_read_arrow, marquet_table_take_arrow, marquet_query_result_take_arrow and
 * the marquet_arrow_writer. The
 * consumer and producer sides are written here by hand from the Arrow specification, as
 * the GDAL driver (gdal/) does, with no Arrow library.
 *
 *   test_arrow DIR     (DIR: a writable scratch directory)
 *
 * Prints "N passed, 0 failed" and exits 0 when every check holds.
 */
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

static char path_buf[1024];
static const char *scratch(const char *dir, const char *name) {
    snprintf(path_buf, sizeof path_buf, "%s/%s", dir, name);
    return path_buf;
}

static size_t point_wkb(uint8_t *w, double x, double y) {
    uint32_t t = 1;
    w[0] = 1;
    memcpy(w + 1, &t, 4);
    memcpy(w + 5, &x, 8);
    memcpy(w + 13, &y, 8);
    return 21;
}

/* A table `table` of N points (i, 2i) in the default layout with an int32 column `id`
 * (= i, missing for every 5th row) and a string column `name` ("p<i>"). */
#define N 300
static void make_table_at(const char *path, const char *table) {
    marquet_file *f = NULL;
    marquet_table *t = NULL;
    marquet_batch *b = NULL;
    static uint8_t wkb[N * 21];
    static int64_t woff[N + 1], soff[N + 1];
    static int32_t ids[N];
    static uint8_t valid[N];
    static char chars[N * 8];
    size_t pos = 0;
    woff[0] = soff[0] = 0;
    for (int i = 0; i < N; i++) {
        woff[i + 1] = woff[i] + (int64_t)point_wkb(wkb + 21 * i, i, 2.0 * i);
        ids[i] = i;
        valid[i] = i % 5 != 0;
        pos += (size_t)sprintf(chars + pos, "p%d", i);
        soff[i + 1] = (int64_t)pos;
    }
    OK(marquet_file_create(path, strlen(path), &f));
    OK(marquet_table_create(f, table, strlen(table), &t));
    OK(marquet_table_add_geometry_column(t, S("geom"), NULL));
    OK(marquet_table_add_column(t, S("id"), MARQUET_TYPE_INT32));
    OK(marquet_table_add_string_column(t, S("name"), 16));
    OK(marquet_batch_new(&b));
    OK(marquet_batch_set_wkb(b, S("geom"), wkb, sizeof wkb, woff, NULL, N));
    OK(marquet_batch_set_int32(b, S("id"), ids, valid, N));
    OK(marquet_batch_set_strings(b, S("name"), chars, pos, soff, NULL, N));
    int64_t n = 0;
    OK(marquet_table_append(t, b, &n));
    EXPECT(n == N);
    marquet_batch_free(b);
    marquet_table_free(t);
    marquet_file_free(f);
}

static void make_table(const char *path) {
    make_table_at(path, "/pts");
}

static int bit(const void *bitmap, int64_t i) {
    return bitmap == NULL || ((const uint8_t *)bitmap)[i >> 3] >> (i & 7) & 1;
}

/* Read a whole stream of (geom, id, name) batches; check every row against the
 * expected row numbers `rows` (NULL: 0, 1, 2...); returns the number of rows. */
static int64_t check_stream(struct ArrowArrayStream *st, const int64_t *rows) {
    struct ArrowSchema s;
    memset(&s, 0, sizeof s);
    EXPECT(st->get_schema(st, &s) == 0);
    EXPECT(strcmp(s.format, "+s") == 0 && s.n_children == 3);
    EXPECT(strcmp(s.children[0]->name, "geom") == 0 && strcmp(s.children[0]->format, "z") == 0);
    EXPECT(s.children[0]->metadata != NULL);
    EXPECT(strcmp(s.children[1]->name, "id") == 0 && strcmp(s.children[1]->format, "i") == 0);
    EXPECT(strcmp(s.children[2]->name, "name") == 0 && strcmp(s.children[2]->format, "u") == 0);
    int64_t seen = 0, bad = 0;
    for (;;) {
        struct ArrowArray a;
        memset(&a, 0, sizeof a);
        if (st->get_next(st, &a) != 0) {
            fprintf(stderr, "get_next: %s\n", st->get_last_error(st));
            bad++;
            break;
        }
        if (a.release == NULL) {
            break;
        }
        const struct ArrowArray *g = a.children[0], *id = a.children[1], *nm = a.children[2];
        for (int64_t k = 0; k < a.length; k++, seen++) {
            int64_t r = rows ? rows[seen] : seen;
            const int32_t *go = (const int32_t *)g->buffers[1] + g->offset;
            const uint8_t *gd = (const uint8_t *)g->buffers[2];
            double x, y;
            memcpy(&x, gd + go[k] + 5, 8);
            memcpy(&y, gd + go[k] + 13, 8);
            /* The rows are in Hilbert order: check each row against its own id. */
            int idv = ((const int32_t *)id->buffers[1])[id->offset + k];
            int ok_valid = bit(id->buffers[0], id->offset + k);
            const int32_t *so = (const int32_t *)nm->buffers[1] + nm->offset;
            char name[32];
            snprintf(name, sizeof name, "%.*s", (int)(so[k + 1] - so[k]), (const char *)nm->buffers[2] + so[k]);
            int i = (int)x;
            char want[32];
            snprintf(want, sizeof want, "p%d", i);
            if (go[k + 1] - go[k] != 21 || y != 2.0 * i || strcmp(name, want) != 0 ||
                ok_valid != (i % 5 != 0) || (ok_valid && idv != i)) {
                bad++;
            }
            (void)r;
        }
        a.release(&a);
    }
    s.release(&s);
    EXPECT(bad == 0);
    return seen;
}

/* The values of the one binary or string column of every batch of `st`, each as its
 * 4-byte length and bytes, into `out` (at most `cap` bytes); `*count` receives the number
 * of values. Returns the bytes written. */
static size_t binary_values(struct ArrowArrayStream *st, uint8_t *out, size_t cap, int64_t *count) {
    size_t pos = 0;
    for (;;) {
        struct ArrowArray a;
        memset(&a, 0, sizeof a);
        if (st->get_next(st, &a) != 0 || a.release == NULL) {
            break;
        }
        const struct ArrowArray *c = a.children[0];
        const int32_t *o = (const int32_t *)c->buffers[1] + c->offset;
        for (int64_t i = 0; i < a.length; i++, (*count)++) {
            uint32_t len = (uint32_t)(o[i + 1] - o[i]);
            if (pos + 4 + len <= cap) {
                memcpy(out + pos, &len, 4);
                memcpy(out + pos + 4, (const uint8_t *)c->buffers[2] + o[i], len);
                pos += 4 + len;
            }
        }
        a.release(&a);
    }
    return pos;
}

static void test_read(const char *dir) {
    const char *path = scratch(dir, "arrow.h5");
    make_table(path);
    marquet_file *f = NULL;
    marquet_table *t = NULL;
    OK(marquet_file_open(path, strlen(path), &f));
    OK(marquet_table_open(f, S("/pts"), &t));
    struct ArrowArrayStream st;
    memset(&st, 0, sizeof st);
    OK(marquet_table_read_arrow(t, NULL, 0, NULL, 0, 0, N, 64, &st));
    EXPECT(check_stream(&st, NULL) == N);
    st.release(&st);

    /* Chosen columns, in the order asked; an unknown column is refused. */
    const char cols[] = "namegeom";
    int64_t offs[3] = {0, 4, 8};
    OK(marquet_table_read_arrow(t, cols, 8, offs, 2, 10, 20, 0, &st));
    struct ArrowSchema s;
    memset(&s, 0, sizeof s);
    EXPECT(st.get_schema(&st, &s) == 0);
    EXPECT(s.n_children == 2 && strcmp(s.children[0]->name, "name") == 0);
    s.release(&s);
    struct ArrowArray a;
    EXPECT(st.get_next(&st, &a) == 0 && a.length == 10);
    a.release(&a);
    EXPECT(st.get_next(&st, &a) == 0 && a.release == NULL);
    st.release(&st);
    const char nope[] = "nope";
    int64_t noff[2] = {0, 4};
    EXPECT_STATUS(marquet_table_read_arrow(t, nope, 4, noff, 1, 0, 1, 0, &st), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_table_read_arrow(t, NULL, 0, NULL, 0, 0, N + 1, 0, &st), MARQUET_STATUS_OUT_OF_RANGE);
    EXPECT_STATUS(marquet_table_read_arrow(t, NULL, 0, NULL, 0, 0, 1, 0, NULL), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_table_read_arrow(t, NULL, 0, NULL, 1, 0, 1, 0, &st), MARQUET_STATUS_NULL_POINTER);

    /* take: the rows of a query, in order; the stream outlives the handles. */
    marquet_query_result *r = NULL;
    OK(marquet_table_query_box(t, S("geom"), 10, 0, 50.5, 1000, MARQUET_PREDICATE_INTERSECTS, 1, &r));
    int64_t n = 0;
    OK(marquet_query_result_count(r, &n));
    EXPECT(n == 41);
    int64_t rows[64];
    OK(marquet_query_result_rows(r, rows, 64));
    marquet_query_result_free(r);
    OK(marquet_table_take_arrow(t, NULL, 0, NULL, 0, rows, n, 16, &st));
    marquet_table_free(t);
    marquet_file_free(f);
    EXPECT(check_stream(&st, rows) == 41);
    st.release(&st);

    /* The rows of a query's answer: with the geometries kept, the geometry column is the
     * query's (check_stream matches each row's point with its own id and name, which are
     * read from the file); without, it is read. Through the table and through a spatial
     * reader; the stream outlives the result and the handles. */
    for (int32_t flags = MARQUET_QUERY_USE_INDEXES; flags <= (MARQUET_QUERY_USE_INDEXES | MARQUET_QUERY_KEEP_GEOMETRY); flags++) {
        for (int via_reader = 0; via_reader <= 1; via_reader++) {
            OK(marquet_file_open(path, strlen(path), &f));
            OK(marquet_table_open(f, S("/pts"), &t));
            marquet_spatial_reader *rd = NULL;
            r = NULL;
            if (via_reader) {
                OK(marquet_spatial_reader_open(t, S("geom"), &rd));
                OK(marquet_spatial_reader_query_box(rd, 10, 0, 50.5, 1000, MARQUET_PREDICATE_INTERSECTS, flags, &r));
            } else {
                OK(marquet_table_query_box(t, S("geom"), 10, 0, 50.5, 1000, MARQUET_PREDICATE_INTERSECTS, flags, &r));
            }
            int64_t got[64];
            OK(marquet_query_result_rows(r, got, 64));
            EXPECT(memcmp(got, rows, 41 * sizeof rows[0]) == 0);
            OK(marquet_query_result_take_arrow(t, r, NULL, 0, NULL, 0, 16, &st));
            marquet_query_result_free(r);
            marquet_spatial_reader_free(rd);
            marquet_table_free(t);
            marquet_file_free(f);
            EXPECT(check_stream(&st, rows) == 41);
            st.release(&st);
        }
    }
    /* Chosen columns: the geometry alone (from the result) and without it. */
    OK(marquet_file_open(path, strlen(path), &f));
    OK(marquet_table_open(f, S("/pts"), &t));
    r = NULL;
    OK(marquet_table_query_box(t, S("geom"), 10, 0, 50.5, 1000, MARQUET_PREDICATE_INTERSECTS,
                               MARQUET_QUERY_USE_INDEXES | MARQUET_QUERY_KEEP_GEOMETRY, &r));
    const char gcol[] = "geomname";
    int64_t goffs[2] = {0, 4};
    for (int k = 0; k < 2; k++) {
        /* Against a read of the same rows and column by row number. */
        struct ArrowArrayStream want;
        OK(marquet_query_result_take_arrow(t, r, k ? gcol + 4 : gcol, 4, goffs, 1, 0, &st));
        OK(marquet_table_take_arrow(t, k ? gcol + 4 : gcol, 4, goffs, 1, rows, 41, 0, &want));
        memset(&s, 0, sizeof s);
        EXPECT(st.get_schema(&st, &s) == 0);
        EXPECT(s.n_children == 1 && strcmp(s.children[0]->name, k ? "name" : "geom") == 0);
        s.release(&s);
        static uint8_t v1[64 * 32], v2[64 * 32];
        int64_t c1 = 0, c2 = 0;
        size_t l1 = binary_values(&st, v1, sizeof v1, &c1), l2 = binary_values(&want, v2, sizeof v2, &c2);
        EXPECT(c1 == 41 && c2 == 41 && l1 == l2 && l1 > 41 * 4 && memcmp(v1, v2, l1) == 0);
        st.release(&st);
        want.release(&want);
    }
    /* A result of another table is refused before anything is read. */
    const char *other = scratch(dir, "arrow_other.h5");
    char other_path[1024];
    snprintf(other_path, sizeof other_path, "%s", other);
    make_table_at(other_path, "/elsewhere");
    marquet_file *f2 = NULL;
    marquet_table *t2 = NULL;
    marquet_query_result *r2 = NULL;
    OK(marquet_file_open(other_path, strlen(other_path), &f2));
    OK(marquet_table_open(f2, S("/elsewhere"), &t2));
    OK(marquet_table_query_box(t2, S("geom"), 10, 0, 50.5, 1000, MARQUET_PREDICATE_INTERSECTS, MARQUET_QUERY_KEEP_GEOMETRY, &r2));
    EXPECT_STATUS(marquet_query_result_take_arrow(t, r2, NULL, 0, NULL, 0, 0, &st), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(strstr(last_error(), "another table") != NULL);
    EXPECT_STATUS(marquet_query_result_take_arrow(t, NULL, NULL, 0, NULL, 0, 0, &st), MARQUET_STATUS_NULL_POINTER);
    EXPECT_STATUS(marquet_query_result_take_arrow(t, r, NULL, 0, NULL, 0, 0, NULL), MARQUET_STATUS_NULL_POINTER);
    marquet_query_result_free(r2);
    marquet_query_result_free(r);
    marquet_table_free(t2);
    marquet_file_free(f2);

    int64_t down[2] = {5, 3}, far[1] = {N};
    EXPECT_STATUS(marquet_table_take_arrow(t, NULL, 0, NULL, 0, down, 2, 0, &st), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(marquet_table_take_arrow(t, NULL, 0, NULL, 0, far, 1, 0, &st), MARQUET_STATUS_OUT_OF_RANGE);
    marquet_table_free(t);
    marquet_file_free(f);
}

/* ---- a hand-made producer: a struct of (geom: geoarrow.wkb binary, v: int64) ---- */

static void release_child_schema(struct ArrowSchema *s) {
    s->release = NULL;
}

static void release_schema(struct ArrowSchema *s) {
    for (int64_t i = 0; i < s->n_children; i++) {
        if (s->children[i]->release != NULL) {
            s->children[i]->release(s->children[i]);
        }
        free(s->children[i]);
    }
    free(s->children);
    free((void *)s->private_data);
    s->release = NULL;
}

static void make_schema(struct ArrowSchema *s) {
    static const char key[] = "ARROW:extension:name", val[] = "geoarrow.wkb";
    int32_t nk = 1, kl = (int32_t)strlen(key), vl = (int32_t)strlen(val);
    char *md = malloc(4 + 4 + (size_t)kl + 4 + (size_t)vl);
    memcpy(md, &nk, 4);
    memcpy(md + 4, &kl, 4);
    memcpy(md + 8, key, (size_t)kl);
    memcpy(md + 8 + kl, &vl, 4);
    memcpy(md + 12 + kl, val, (size_t)vl);
    struct ArrowSchema **ch = calloc(2, sizeof *ch);
    ch[0] = calloc(1, sizeof **ch);
    ch[1] = calloc(1, sizeof **ch);
    *ch[0] = (struct ArrowSchema){.format = "z", .name = "geom", .metadata = md, .flags = ARROW_FLAG_NULLABLE, .release = release_child_schema};
    *ch[1] = (struct ArrowSchema){.format = "l", .name = "v", .flags = ARROW_FLAG_NULLABLE, .release = release_child_schema};
    /* Children are released by the parent here (the specification allows either). */
    *s = (struct ArrowSchema){.format = "+s", .name = "", .n_children = 2, .children = ch,
                              .release = release_schema, .private_data = md};
}

struct batch_mem {
    struct ArrowArray *kids[2];
    struct ArrowArray k0, k1;
    const void *b0[3], *b1[2], *top[1];
    int32_t off[65];
    uint8_t wkb[64 * 21];
    int64_t v[64];
    uint8_t valid[8];
};

static int live_batches = 0;

static void release_child(struct ArrowArray *a) {
    a->release = NULL;
}

static void release_batch(struct ArrowArray *a) {
    struct batch_mem *m = a->private_data;
    for (int i = 0; i < 2; i++) {
        if (m->kids[i]->release != NULL) {
            m->kids[i]->release(m->kids[i]);
        }
    }
    free(m);
    live_batches--;
    a->release = NULL;
}

/* A batch of n rows starting at point k0 (v = k; row 1 of each batch has a null v). */
static void make_batch(struct ArrowArray *a, int k0, int n) {
    struct batch_mem *m = calloc(1, sizeof *m);
    live_batches++;
    m->off[0] = 0;
    for (int i = 0; i < n; i++) {
        m->off[i + 1] = m->off[i] + (int32_t)point_wkb(m->wkb + 21 * i, k0 + i, -(k0 + i));
        m->v[i] = k0 + i;
    }
    memset(m->valid, 0xff, sizeof m->valid);
    m->valid[0] &= (uint8_t)~2u;
    m->b0[0] = NULL;
    m->b0[1] = m->off;
    m->b0[2] = m->wkb;
    m->b1[0] = m->valid;
    m->b1[1] = m->v;
    m->top[0] = NULL;
    m->k0 = (struct ArrowArray){.length = n, .null_count = 0, .n_buffers = 3, .buffers = m->b0, .release = release_child};
    m->k1 = (struct ArrowArray){.length = n, .null_count = 1, .n_buffers = 2, .buffers = m->b1, .release = release_child};
    m->kids[0] = &m->k0;
    m->kids[1] = &m->k1;
    *a = (struct ArrowArray){.length = n, .null_count = 0, .n_buffers = 1, .buffers = m->top, .n_children = 2,
                             .children = m->kids, .release = release_batch, .private_data = m};
}

static void test_writer(const char *dir) {
    const char *path = scratch(dir, "writer.h5");
    marquet_file *f = NULL;
    OK(marquet_file_create(path, strlen(path), &f));
    struct ArrowSchema s;
    struct ArrowArray a;
    marquet_arrow_writer *w = NULL;

    /* Freed unfinished: no table, the schema and the batches released. */
    make_schema(&s);
    OK(marquet_arrow_writer_new(f, S("/t"), 0, &s, &w));
    EXPECT(s.release == NULL);
    make_batch(&a, 0, 10);
    OK(marquet_arrow_writer_write(w, &a));
    EXPECT(a.release == NULL);
    marquet_arrow_writer_free(w);
    EXPECT(live_batches == 0);
    int64_t count = -1;
    OK(marquet_file_table_count(f, &count));
    EXPECT(count == 0);

    /* Written: 3 batches, 150 rows, in one step at finish. */
    make_schema(&s);
    OK(marquet_arrow_writer_new(f, S("t"), 0, &s, &w));
    for (int k = 0; k < 3; k++) {
        make_batch(&a, 50 * k, 50);
        OK(marquet_arrow_writer_write(w, &a));
    }
    OK(marquet_file_table_count(f, &count));
    EXPECT(count == 0);
    int64_t n = -1;
    OK(marquet_arrow_writer_finish(w, &n));
    EXPECT(n == 150);
    EXPECT_STATUS(marquet_arrow_writer_finish(w, &n), MARQUET_STATUS_INVALID_ARGUMENT);
    marquet_arrow_writer_free(w);
    EXPECT(live_batches == 0);

    marquet_table *t = NULL;
    OK(marquet_table_open(f, S("/t"), &t));
    OK(marquet_table_nrows(t, &n));
    EXPECT(n == 150);
    static double x[150], y[150];
    static int64_t v[150];
    static uint8_t ok[150];
    OK(marquet_table_read_points(t, S("geom"), 0, 150, x, y, NULL, NULL, NULL));
    OK(marquet_table_read_int64(t, S("v"), 0, 150, v, ok));
    int bad = 0, nulls = 0;
    for (int i = 0; i < 150; i++) {
        int k = (int)x[i];
        if (y[i] != -k) bad++;
        if (!ok[i]) {
            nulls++;
            if (k % 50 != 1) bad++;
        } else if (v[i] != k) {
            bad++;
        }
    }
    EXPECT(bad == 0 && nulls == 3);
    int64_t idx = 0;
    OK(marquet_table_index_count(t, S("geom"), &idx));
    EXPECT(idx >= 1); /* the default layout's block index */
    marquet_table_free(t);

    /* The table exists now: a second create is refused, and the schema still released. */
    make_schema(&s);
    EXPECT_STATUS(marquet_arrow_writer_new(f, S("/t"), 0, &s, &w), MARQUET_STATUS_INVALID_ARGUMENT);
    EXPECT(s.release == NULL);
    make_schema(&s);
    EXPECT_STATUS(marquet_arrow_writer_new(f, S("/none"), 1, &s, &w), MARQUET_STATUS_NOT_A_TABLE);

    /* Append: 20 more rows. */
    make_schema(&s);
    OK(marquet_arrow_writer_new(f, S("/t"), 1, &s, &w));
    make_batch(&a, 1000, 20);
    OK(marquet_arrow_writer_write(w, &a));
    OK(marquet_arrow_writer_finish(w, &n));
    EXPECT(n == 170);
    marquet_arrow_writer_free(w);
    EXPECT(live_batches == 0);
    EXPECT_STATUS(marquet_arrow_writer_write(NULL, NULL), MARQUET_STATUS_NULL_POINTER);
    marquet_file_free(f);

    marquet_report *rep = NULL;
    int32_t conformant = 0;
    OK(marquet_validate_file(path, strlen(path), NULL, 0, 1, &rep));
    OK(marquet_report_conformant(rep, &conformant));
    EXPECT(conformant == 1);
    marquet_report_free(rep);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_arrow DIR\n");
        return 2;
    }
    test_read(argv[1]);
    test_writer(argv[1]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
