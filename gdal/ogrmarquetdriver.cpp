/*
 * gdal_Marquet.so: a GDAL/OGR vector driver for Marquet files (HEP002 geospatial tables
 * in HDF5), calling libmarquet only through its public C ABI (include/marquet.h).
 *
 * The driver decides nothing the library decides: tables, columns and their types come
 * from the library's Arrow mapping (marquet_table_read_arrow), extents and geometry
 * types from the table's attributes (marquet_geometry_info_*), spatial filters from the
 * library's indexed query (marquet_spatial_reader_query_box, whose answer keeps the rows'
 * geometries for the stream of its rows: marquet_query_result_take_arrow), and writes go through the
 * library's writer (marquet_arrow_writer_*: the default layout, staged and published in
 * one step when the dataset closes). See gdal/README.md.
 *
 * Built against GDAL >= 3.6 (Debian 12's 3.6.2 is what CI tests).
 */

#include "cpl_conv.h"
#include "cpl_error.h"
#include "cpl_string.h"
#include "cpl_time.h"
#include "gdal_priv.h"
#include "ogr_recordbatch.h"
#include "ogrsf_frmts.h"

// GDAL 3.6's ogr_recordbatch.h defines the Arrow C structs without the guards the Arrow
// specification names; tell marquet.h they exist.
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#endif
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
#endif
#include "marquet.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace
{

constexpr const char *DRIVER = "Marquet";
constexpr int64_t WRITE_BATCH_ROWS = 65536;

// ---- libmarquet errors ----------------------------------------------------------------

std::string LastError()
{
    size_t need = 0;
    marquet_last_error_message(nullptr, 0, &need);
    std::string s(need, '\0');
    if (need > 0 && marquet_last_error_message(&s[0], s.size(), &need) == 0)
        s.resize(need - 1);
    else
        s.clear();
    return s;
}

// Report a failed libmarquet call as a GDAL error; returns false when st != OK.
bool Ok(int32_t st, const char *what)
{
    if (st == MARQUET_STATUS_OK)
        return true;
    CPLError(CE_Failure, CPLE_AppDefined, "Marquet: %s: %s (%s)", what, LastError().c_str(),
             marquet_status_str(st));
    return false;
}

template <class F> std::string GetString(F f)
{
    size_t need = 0;
    int32_t st = f(nullptr, 0, &need);
    if (st != MARQUET_STATUS_BUFFER_TOO_SMALL && st != MARQUET_STATUS_OK)
        return std::string();
    std::string s(need, '\0');
    if (f(&s[0], s.size(), &need) != MARQUET_STATUS_OK)
        return std::string();
    s.resize(need > 0 ? need - 1 : 0);
    return s;
}

// ---- Arrow C data helpers ---------------------------------------------------------------

bool BitIsSet(const void *bitmap, int64_t i)
{
    return bitmap == nullptr || (static_cast<const uint8_t *>(bitmap)[i >> 3] >> (i & 7)) & 1;
}

// The key/value pairs of an ArrowSchema's metadata.
std::vector<std::pair<std::string, std::string>> ParseMetadata(const char *md)
{
    std::vector<std::pair<std::string, std::string>> out;
    if (md == nullptr)
        return out;
    int32_t n;
    memcpy(&n, md, 4);
    md += 4;
    for (int32_t i = 0; i < n; i++)
    {
        int32_t kl, vl;
        memcpy(&kl, md, 4);
        md += 4;
        std::string k(md, kl);
        md += kl;
        memcpy(&vl, md, 4);
        md += 4;
        std::string v(md, vl);
        md += vl;
        out.emplace_back(std::move(k), std::move(v));
    }
    return out;
}

std::string EncodeMetadata(const std::vector<std::pair<std::string, std::string>> &kv)
{
    std::string s;
    auto put32 = [&s](int32_t v) { s.append(reinterpret_cast<const char *>(&v), 4); };
    put32(static_cast<int32_t>(kv.size()));
    for (const auto &p : kv)
    {
        put32(static_cast<int32_t>(p.first.size()));
        s += p.first;
        put32(static_cast<int32_t>(p.second.size()));
        s += p.second;
    }
    return s;
}

// Not an OGR field type (OFTMaxType is OFTInteger64List, a real one).
constexpr OGRFieldType NO_FIELD = static_cast<OGRFieldType>(-1);

// What a stored column is, as an OGR field (from its Arrow format).
struct FieldKind
{
    OGRFieldType type = NO_FIELD;  // no OGR field: the column is left out
    OGRFieldSubType subtype = OFSTNone;
    bool geometry = false;
};

bool IsIntFormat(const std::string &f)
{
    return f == "c" || f == "C" || f == "s" || f == "S" || f == "i" || f == "I" || f == "l" ||
           f == "L";
}

FieldKind KindOf(const ArrowSchema *s)
{
    FieldKind k;
    std::string f = s->format;
    for (const auto &kv : ParseMetadata(s->metadata))
        if (kv.first == "ARROW:extension:name" && kv.second == "geoarrow.wkb")
            k.geometry = true;
    if (k.geometry)
        return k;
    if (s->dictionary != nullptr)
    {
        std::string d = s->dictionary->format;
        if (d == "u" || d == "U")
            k.type = OFTString;
        return k;
    }
    if (f == "b")
    {
        k.type = OFTInteger;
        k.subtype = OFSTBoolean;
    }
    else if (f == "c" || f == "C" || f == "s" || f == "S" || f == "i")
    {
        k.type = OFTInteger;
        if (f == "s")
            k.subtype = OFSTInt16;
    }
    else if (f == "I" || f == "l" || f == "L")
        k.type = OFTInteger64;
    else if (f == "f" || f == "g" || f == "e")
    {
        k.type = OFTReal;
        if (f == "f")
            k.subtype = OFSTFloat32;
    }
    else if (f == "u" || f == "U")
        k.type = OFTString;
    else if (f == "z" || f == "Z")
        k.type = OFTBinary;
    else if (f == "tdD" || f == "tdm")
        k.type = OFTDate;
    else if (f.rfind("ts", 0) == 0)
        k.type = OFTDateTime;
    else if ((f == "+l" || f == "+L") && s->n_children == 1)
    {
        std::string c = s->children[0]->format;
        if (c == "b")
        {
            k.type = OFTIntegerList;
            k.subtype = OFSTBoolean;
        }
        else if (c == "c" || c == "C" || c == "s" || c == "S" || c == "i")
            k.type = OFTIntegerList;
        else if (c == "I" || c == "l" || c == "L")
            k.type = OFTInteger64List;
        else if (c == "f" || c == "g")
            k.type = OFTRealList;
        else if (c == "u" || c == "U")
            k.type = OFTStringList;
    }
    return k;
}

int64_t IntAt(const std::string &f, const ArrowArray *a, int64_t i)
{
    const void *b = a->buffers[1];
    i += a->offset;
    switch (f[0])
    {
        case 'c': return static_cast<const int8_t *>(b)[i];
        case 'C': return static_cast<const uint8_t *>(b)[i];
        case 's': return static_cast<const int16_t *>(b)[i];
        case 'S': return static_cast<const uint16_t *>(b)[i];
        case 'i': return static_cast<const int32_t *>(b)[i];
        case 'I': return static_cast<const uint32_t *>(b)[i];
        case 'l': return static_cast<const int64_t *>(b)[i];
        case 'L': return static_cast<int64_t>(static_cast<const uint64_t *>(b)[i]);
        case 'b': return (static_cast<const uint8_t *>(b)[i >> 3] >> (i & 7)) & 1;
    }
    return 0;
}

double RealAt(const std::string &f, const ArrowArray *a, int64_t i)
{
    i += a->offset;
    if (f == "f")
        return static_cast<const float *>(a->buffers[1])[i];
    return static_cast<const double *>(a->buffers[1])[i];
}

// The bytes of row i of a utf8/binary array (32- or 64-bit offsets).
std::pair<const char *, size_t> BytesAt(const std::string &f, const ArrowArray *a, int64_t i)
{
    i += a->offset;
    const char *data = static_cast<const char *>(a->buffers[2]);
    if (f == "U" || f == "Z")
    {
        const int64_t *o = static_cast<const int64_t *>(a->buffers[1]);
        return {data + o[i], static_cast<size_t>(o[i + 1] - o[i])};
    }
    const int32_t *o = static_cast<const int32_t *>(a->buffers[1]);
    return {data + o[i], static_cast<size_t>(o[i + 1] - o[i])};
}

bool ValidAt(const ArrowArray *a, int64_t i)
{
    return a->null_count == 0 || BitIsSet(a->buffers[0], i + a->offset);
}

// Seconds per unit of a timestamp format "ts[smun]:TZ".
double TsScale(const std::string &f)
{
    switch (f[2])
    {
        case 's': return 1.0;
        case 'm': return 1e-3;
        case 'u': return 1e-6;
        default: return 1e-9;
    }
}

void SetDateTimeFromEpoch(OGRFeature *feat, int field, int64_t v, double scale, bool utc)
{
    // Split into whole seconds and a fraction exactly (v may be ns).
    int64_t per = static_cast<int64_t>(std::llround(1.0 / scale));
    int64_t secs = v / per, rem = v % per;
    if (rem < 0)
    {
        rem += per;
        secs -= 1;
    }
    struct tm t;
    CPLUnixTimeToYMDHMS(static_cast<GIntBig>(secs), &t);
    float sec = static_cast<float>(t.tm_sec + static_cast<double>(rem) / per);
    feat->SetField(field, t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, sec,
                   utc ? 100 : 0);
}

// ---- one batch of rows read from a stream ---------------------------------------------------

struct Column
{
    std::string name;
    std::string format;
    const ArrowSchema *schema = nullptr;
    FieldKind kind;
    int ogr_field = -1;  // index in the layer definition
    int geom_field = -1;
};

class Batch
{
  public:
    ArrowArray array{};
    ~Batch()
    {
        if (array.release != nullptr)
            array.release(&array);
    }
    int64_t Length() const
    {
        return array.length;
    }
};

// ---- the layer -----------------------------------------------------------------------------

class OGRMarquetDataSource;

// A writer of new rows: OGR features into Arrow batches of one schema for
// marquet_arrow_writer (columns built by format, as the library maps them back).
class ColumnBuilder
{
  public:
    std::string name, format;
    std::string metadata;  // encoded
    int ogr_field = -1, geom_field = -1;
    std::string child_format;  // lists
    OGRwkbGeometryType gtype = wkbUnknown;
    // Accumulated values.
    std::vector<uint8_t> valid;
    std::vector<uint8_t> fixed;  // fixed-width values, element by element
    std::vector<int64_t> offsets{0};
    std::string data;
    std::vector<uint8_t> child_fixed;
    std::vector<int64_t> child_offsets{0};
    std::string child_data;
    int64_t child_len = 0;
    int64_t length = 0;

    int Width(const std::string &f) const
    {
        switch (f[0])
        {
            case 'c': case 'C': return 1;
            case 's': case 'S': return 2;
            case 'i': case 'I': case 'f': return 4;
            case 'l': case 'L': case 'g': return 8;
            case 't': return f == "tdD" ? 4 : 8;
        }
        return 0;
    }

    template <class T> static void Put(std::vector<uint8_t> &v, T x)
    {
        const uint8_t *p = reinterpret_cast<const uint8_t *>(&x);
        v.insert(v.end(), p, p + sizeof(T));
    }

    static void PutInt(std::vector<uint8_t> &v, const std::string &f, int64_t x)
    {
        switch (f[0])
        {
            case 'c': Put<int8_t>(v, static_cast<int8_t>(x)); break;
            case 'C': Put<uint8_t>(v, static_cast<uint8_t>(x)); break;
            case 's': Put<int16_t>(v, static_cast<int16_t>(x)); break;
            case 'S': Put<uint16_t>(v, static_cast<uint16_t>(x)); break;
            case 'i': Put<int32_t>(v, static_cast<int32_t>(x)); break;
            case 'I': Put<uint32_t>(v, static_cast<uint32_t>(x)); break;
            case 'l': Put<int64_t>(v, x); break;
            case 'L': Put<uint64_t>(v, static_cast<uint64_t>(x)); break;
            case 'b': v.push_back(x != 0); break;  // packed at export
        }
    }

    static void PutReal(std::vector<uint8_t> &v, const std::string &f, double x)
    {
        if (f == "f")
            Put<float>(v, static_cast<float>(x));
        else
            Put<double>(v, x);
    }

    void AppendNull()
    {
        valid.push_back(0);
        if (format == "b")
            fixed.push_back(0);
        else if (int w = Width(format))
            fixed.insert(fixed.end(), w, 0);
        else
            offsets.push_back(format[0] == '+' ? child_len : static_cast<int64_t>(data.size()));
        length++;
    }

    // Days since 1970-01-01 of a civil date.
    static int64_t DaysFromCivil(int y, int m, int d)
    {
        y -= m <= 2;
        const int64_t era = (y >= 0 ? y : y - 399) / 400;
        const unsigned yoe = static_cast<unsigned>(y - era * 400);
        const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + static_cast<int64_t>(doe) - 719468;
    }

    bool Append(OGRFeature *f)
    {
        if (geom_field >= 0)
        {
            OGRGeometry *g = f->GetGeomFieldRef(geom_field);
            if (g == nullptr)
            {
                AppendNull();
                return true;
            }
            size_t n = g->WkbSize();
            std::string buf(n, '\0');
            if (g->exportToWkb(wkbNDR, reinterpret_cast<unsigned char *>(&buf[0]),
                               wkbVariantIso) != OGRERR_NONE)
            {
                CPLError(CE_Failure, CPLE_AppDefined, "Marquet: column %s: cannot encode the geometry of feature " CPL_FRMT_GIB " as WKB",
                         name.c_str(), f->GetFID());
                return false;
            }
            valid.push_back(1);
            data += buf;
            offsets.push_back(static_cast<int64_t>(data.size()));
            length++;
            return true;
        }
        if (ogr_field < 0 || !f->IsFieldSetAndNotNull(ogr_field))
        {
            AppendNull();
            return true;
        }
        valid.push_back(1);
        length++;
        const std::string &fm = format;
        if (fm == "b" || IsIntFormat(fm))
            PutInt(fixed, fm, f->GetFieldAsInteger64(ogr_field));
        else if (fm == "f" || fm == "g")
            PutReal(fixed, fm, f->GetFieldAsDouble(ogr_field));
        else if (fm == "tdD")
        {
            int y, mo, d, h, mi, tz;
            float s;
            f->GetFieldAsDateTime(ogr_field, &y, &mo, &d, &h, &mi, &s, &tz);
            Put<int32_t>(fixed, static_cast<int32_t>(DaysFromCivil(y, mo, d)));
        }
        else if (fm.rfind("ts", 0) == 0)
        {
            int y, mo, d, h, mi, tz;
            float s;
            f->GetFieldAsDateTime(ogr_field, &y, &mo, &d, &h, &mi, &s, &tz);
            double secs = static_cast<double>(DaysFromCivil(y, mo, d)) * 86400.0 + h * 3600.0 +
                          mi * 60.0 + static_cast<double>(s);
            if (tz > 1 && tz != 100)  // an offset from UTC in 15-minute steps
                secs -= (tz - 100) * 15 * 60.0;
            Put<int64_t>(fixed, static_cast<int64_t>(std::llround(secs / TsScale(fm))));
        }
        else if (fm == "u" || fm == "z")
        {
            if (fm == "z")
            {
                int n = 0;
                const GByte *b = f->GetFieldAsBinary(ogr_field, &n);
                data.append(reinterpret_cast<const char *>(b), n);
            }
            else
                data += f->GetFieldAsString(ogr_field);
            offsets.push_back(static_cast<int64_t>(data.size()));
        }
        else if (fm == "+l")
        {
            const std::string &c = child_format;
            int n = 0;
            if (c == "u")
            {
                char **l = f->GetFieldAsStringList(ogr_field);
                n = CSLCount(l);
                for (int k = 0; k < n; k++)
                {
                    child_data += l[k];
                    child_offsets.push_back(static_cast<int64_t>(child_data.size()));
                }
            }
            else if (c == "g")
            {
                const double *v = f->GetFieldAsDoubleList(ogr_field, &n);
                for (int k = 0; k < n; k++)
                    PutReal(child_fixed, c, v[k]);
            }
            else if (c == "l")
            {
                const GIntBig *v = f->GetFieldAsInteger64List(ogr_field, &n);
                for (int k = 0; k < n; k++)
                    PutInt(child_fixed, c, v[k]);
            }
            else
            {
                const int *v = f->GetFieldAsIntegerList(ogr_field, &n);
                for (int k = 0; k < n; k++)
                    PutInt(child_fixed, c, v[k]);
            }
            child_len += n;
            offsets.push_back(child_len);
        }
        return true;
    }

    void Clear()
    {
        valid.clear();
        fixed.clear();
        offsets.assign(1, 0);
        data.clear();
        child_fixed.clear();
        child_offsets.assign(1, 0);
        child_data.clear();
        child_len = 0;
        length = 0;
    }
};

// Owned memory behind an exported ArrowArray (one column or the struct of a batch).
struct Holder
{
    std::vector<std::vector<uint8_t>> bufs;
    std::vector<const void *> ptrs;
    std::vector<ArrowArray *> children;
};

void ReleaseArray(ArrowArray *a)
{
    Holder *h = static_cast<Holder *>(a->private_data);
    for (ArrowArray *c : h->children)
    {
        if (c->release != nullptr)
            c->release(c);
        delete c;
    }
    delete h;
    a->release = nullptr;
}

std::vector<uint8_t> PackBits(const std::vector<uint8_t> &v)
{
    std::vector<uint8_t> out((v.size() + 7) / 8, 0);
    for (size_t i = 0; i < v.size(); i++)
        if (v[i])
            out[i >> 3] |= static_cast<uint8_t>(1u << (i & 7));
    return out;
}

std::vector<uint8_t> Offsets32(const std::vector<int64_t> &o)
{
    std::vector<uint8_t> out(o.size() * 4);
    for (size_t i = 0; i < o.size(); i++)
    {
        int32_t v = static_cast<int32_t>(o[i]);
        memcpy(&out[i * 4], &v, 4);
    }
    return out;
}

ArrowArray *NewArray(int64_t length, int64_t null_count, std::vector<std::vector<uint8_t>> bufs,
                     std::vector<ArrowArray *> children, std::vector<bool> present)
{
    ArrowArray *a = new ArrowArray();
    Holder *h = new Holder();
    h->bufs = std::move(bufs);
    for (size_t i = 0; i < h->bufs.size(); i++)
        h->ptrs.push_back(present[i] ? static_cast<const void *>(h->bufs[i].data()) : nullptr);
    h->children = std::move(children);
    a->length = length;
    a->null_count = null_count;
    a->offset = 0;
    a->n_buffers = static_cast<int64_t>(h->ptrs.size());
    a->n_children = static_cast<int64_t>(h->children.size());
    a->buffers = h->ptrs.empty() ? nullptr : h->ptrs.data();
    a->children = h->children.empty() ? nullptr : h->children.data();
    a->dictionary = nullptr;
    a->release = ReleaseArray;
    a->private_data = h;
    return a;
}

ArrowArray *ExportColumn(ColumnBuilder &b)
{
    int64_t nulls = static_cast<int64_t>(std::count(b.valid.begin(), b.valid.end(), 0));
    std::vector<uint8_t> validity = PackBits(b.valid);
    const std::string &f = b.format;
    if (f == "b")
        return NewArray(b.length, nulls, {validity, PackBits(b.fixed)}, {}, {nulls > 0, true});
    if (b.Width(f) > 0)
        return NewArray(b.length, nulls, {validity, b.fixed}, {}, {nulls > 0, true});
    if (f == "u" || f == "z")
    {
        std::vector<uint8_t> d(b.data.begin(), b.data.end());
        return NewArray(b.length, nulls, {validity, Offsets32(b.offsets), d}, {}, {nulls > 0, true, true});
    }
    // "+l": a list of child_format values.
    ArrowArray *child;
    const std::string &c = b.child_format;
    if (c == "u")
    {
        std::vector<uint8_t> d(b.child_data.begin(), b.child_data.end());
        child = NewArray(b.child_len, 0, {{}, Offsets32(b.child_offsets), d}, {}, {false, true, true});
    }
    else if (c == "b")
        child = NewArray(b.child_len, 0, {{}, PackBits(b.child_fixed)}, {}, {false, true});
    else
        child = NewArray(b.child_len, 0, {{}, b.child_fixed}, {}, {false, true});
    return NewArray(b.length, nulls, {validity, Offsets32(b.offsets)}, {child}, {nulls > 0, true});
}

// Owned strings behind an exported ArrowSchema.
struct SchemaHolder
{
    std::string format, name, metadata;
    std::vector<ArrowSchema *> children;
};

void ReleaseSchema(ArrowSchema *s)
{
    SchemaHolder *h = static_cast<SchemaHolder *>(s->private_data);
    for (ArrowSchema *c : h->children)
    {
        if (c->release != nullptr)
            c->release(c);
        delete c;
    }
    delete h;
    s->release = nullptr;
}

void FillSchema(ArrowSchema *s, const std::string &format, const std::string &name,
                const std::string &metadata, std::vector<ArrowSchema *> children)
{
    SchemaHolder *h = new SchemaHolder{format, name, metadata, std::move(children)};
    s->format = h->format.c_str();
    s->name = h->name.c_str();
    s->metadata = h->metadata.empty() ? nullptr : h->metadata.data();
    s->flags = ARROW_FLAG_NULLABLE;
    s->n_children = static_cast<int64_t>(h->children.size());
    s->children = h->children.empty() ? nullptr : h->children.data();
    s->dictionary = nullptr;
    s->release = ReleaseSchema;
    s->private_data = h;
}

class OGRMarquetLayer final : public OGRLayer
{
    OGRMarquetDataSource *m_ds;
    marquet_table *m_table = nullptr;  // null for a new table until written
    std::string m_path;                // HDF5 path of the table
    OGRFeatureDefn *m_defn;
    std::vector<Column> m_cols;        // every stored column the layer shows, in order
    std::vector<std::string> m_geom_names;
    std::vector<std::string> m_coverings;
    int64_t m_nrows = 0;

    // Reading.
    ArrowArrayStream m_stream{};
    ArrowSchema m_stream_schema{};
    std::vector<int> m_stream_cols;  // stream child -> index in m_cols
    std::unique_ptr<Batch> m_batch;
    int64_t m_batch_pos = 0;
    int64_t m_next_fid = 0;  // FID of the next row of a range stream
    std::vector<int64_t> m_rows;  // rows of a spatial filter (FIDs in stream order)
    size_t m_rows_pos = 0;
    bool m_use_rows = false;
    // The spatial filter's answer, holding the rows' geometries when the geometry field
    // is read (MARQUET_QUERY_KEEP_GEOMETRY): the stream of its rows takes them from it
    // instead of reading them again (marquet_query_result_take_arrow).
    marquet_query_result *m_result = nullptr;
    bool m_exact = false;  // the library's answer is exact: OGR need not test geometries
    bool m_eof = false;
    marquet_spatial_reader *m_reader = nullptr;
    int m_reader_field = -1;

    // Writing.
    bool m_writable = false;
    bool m_new = false;
    bool m_failed = false;
    bool m_started = false;  // a feature was buffered: the schema is fixed
    std::vector<ColumnBuilder> m_builders;
    marquet_arrow_writer *m_writer = nullptr;
    int64_t m_pending = 0;
    int64_t m_written = 0;

    void CloseStream();
    bool OpenStream();
    bool NextBatch();
    OGRFeature *Translate(int64_t row_in_batch, int64_t fid);
    bool StartWriter();
    bool FlushBatch();

  public:
    OGRMarquetLayer(OGRMarquetDataSource *ds, marquet_table *table, const std::string &path,
                    bool writable);
    OGRMarquetLayer(OGRMarquetDataSource *ds, const std::string &path,
                    const OGRSpatialReference *srs, OGRwkbGeometryType gtype,
                    const std::string &geom_name);
    ~OGRMarquetLayer() override;

    bool Init();
    bool Finish();

    OGRFeatureDefn *GetLayerDefn() override
    {
        return m_defn;
    }
    void ResetReading() override;
    OGRFeature *GetNextFeature() override;
    OGRFeature *GetFeature(GIntBig fid) override;
    GIntBig GetFeatureCount(int force) override;
    OGRErr GetExtent(OGREnvelope *env, int force) override
    {
        return GetExtent(0, env, force);
    }
    OGRErr GetExtent(int geom, OGREnvelope *env, int force) override;
    void SetSpatialFilter(OGRGeometry *g) override
    {
        SetSpatialFilter(0, g);
    }
    void SetSpatialFilter(int geom, OGRGeometry *g) override;
    OGRErr SetIgnoredFields(const char **fields) override
    {
        OGRErr e = OGRLayer::SetIgnoredFields(fields);
        ResetReading();
        return e;
    }
    int TestCapability(const char *cap) override;
    OGRErr CreateField(OGRFieldDefn *field, int approx) override;
    OGRErr ICreateFeature(OGRFeature *f) override;
    const char *GetFIDColumn() override
    {
        return "";
    }
};

class OGRMarquetDataSource final : public GDALDataset
{
  public:
    marquet_file *m_file = nullptr;
    bool m_update = false;
    std::vector<std::unique_ptr<OGRMarquetLayer>> m_layers;

    ~OGRMarquetDataSource() override
    {
        CloseAll();
    }

    // Finish the layers being written (each publishes its table in one step, or nothing)
    // and close the file. (GDALDataset::Close is GDAL >= 3.7.)
    CPLErr CloseAll()
    {
        CPLErr err = CE_None;
        for (auto &l : m_layers)
            if (!l->Finish())
                err = CE_Failure;
        m_layers.clear();
        if (m_file != nullptr)
        {
            if (m_update && marquet_file_close(m_file) != MARQUET_STATUS_OK)
            {
                Ok(MARQUET_STATUS_IO, "closing the file");
                err = CE_Failure;
            }
            marquet_file_free(m_file);
            m_file = nullptr;
        }
        return err;
    }

    int GetLayerCount() override
    {
        return static_cast<int>(m_layers.size());
    }
    OGRLayer *GetLayer(int i) override
    {
        return i >= 0 && i < GetLayerCount() ? m_layers[i].get() : nullptr;
    }
    int TestCapability(const char *cap) override
    {
        if (EQUAL(cap, ODsCCreateLayer))
            return m_update;
        if (EQUAL(cap, ODsCMeasuredGeometries) || EQUAL(cap, ODsCZGeometries))
            return TRUE;
        return FALSE;
    }
    OGRLayer *ICreateLayer(const char *name, OGRSpatialReference *srs, OGRwkbGeometryType gtype,
                           char **options) override;
};

// ---- layer: opening and schema --------------------------------------------------------------

OGRMarquetLayer::OGRMarquetLayer(OGRMarquetDataSource *ds, marquet_table *table,
                                 const std::string &path, bool writable)
    : m_ds(ds), m_table(table), m_path(path), m_writable(writable)
{
    std::string name = path[0] == '/' ? path.substr(1) : path;
    m_defn = new OGRFeatureDefn(name.c_str());
    m_defn->Reference();
    m_defn->SetGeomType(wkbNone);
    SetDescription(name.c_str());
}

OGRMarquetLayer::OGRMarquetLayer(OGRMarquetDataSource *ds, const std::string &path,
                                 const OGRSpatialReference *srs, OGRwkbGeometryType gtype,
                                 const std::string &geom_name)
    : m_ds(ds), m_path(path), m_writable(true), m_new(true)
{
    std::string name = path[0] == '/' ? path.substr(1) : path;
    m_defn = new OGRFeatureDefn(name.c_str());
    m_defn->Reference();
    m_defn->SetGeomType(wkbNone);
    SetDescription(name.c_str());
    OGRGeomFieldDefn gfd(geom_name.c_str(), gtype);
    if (srs != nullptr)
    {
        OGRSpatialReference *s = srs->Clone();
        s->SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
        gfd.SetSpatialRef(s);
        s->Release();
    }
    m_defn->AddGeomFieldDefn(&gfd);
    m_geom_names.push_back(geom_name);
}

OGRMarquetLayer::~OGRMarquetLayer()
{
    CloseStream();
    marquet_query_result_free(m_result);
    marquet_spatial_reader_free(m_reader);
    marquet_arrow_writer_free(m_writer);
    marquet_table_free(m_table);
    m_defn->Release();
}

OGRwkbGeometryType TypeFromCodes(const std::vector<int32_t> &codes)
{
    if (codes.empty())
        return wkbUnknown;
    auto conv = [](int32_t c) {
        int base = c % 1000, dims = c / 1000;
        return OGR_GT_SetModifier(static_cast<OGRwkbGeometryType>(base), dims == 1 || dims == 3,
                                  dims == 2 || dims == 3);
    };
    OGRwkbGeometryType t = conv(codes[0]);
    for (int32_t c : codes)
        if (conv(c) != t)
        {
            bool z = false, m = false;
            for (int32_t d : codes)
            {
                z |= d / 1000 == 1 || d / 1000 == 3;
                m |= d / 1000 == 2 || d / 1000 == 3;
            }
            return OGR_GT_SetModifier(wkbUnknown, z, m);
        }
    return t;
}

bool OGRMarquetLayer::Init()
{
    if (!Ok(marquet_table_nrows(m_table, &m_nrows), m_path.c_str()))
        return false;
    int64_t ng = 0;
    if (!Ok(marquet_table_geometry_column_count(m_table, &ng), m_path.c_str()))
        return false;
    for (int64_t i = 0; i < ng; i++)
    {
        std::string g = GetString([&](char *b, size_t l, size_t *n) {
            return marquet_table_geometry_column_name(m_table, i, b, l, n);
        });
        marquet_geometry_info *info = nullptr;
        if (marquet_table_geometry_info(m_table, g.data(), g.size(), &info) != MARQUET_STATUS_OK)
            continue;  // not interpretable: left out, as the library's Arrow mapping does
        m_geom_names.push_back(g);
        std::string cov = GetString([&](char *b, size_t l, size_t *n) {
            return marquet_geometry_info_covering(info, b, l, n);
        });
        if (!cov.empty())
            m_coverings.push_back(cov);
        marquet_geometry_info_free(info);
    }
    // The stored columns (COLUMN_ORDER) without covering columns; their Arrow types from
    // a stream of no rows.
    int64_t nc = 0;
    if (!Ok(marquet_table_column_count(m_table, &nc), m_path.c_str()))
        return false;
    std::string names;
    std::vector<int64_t> offs{0};
    for (int64_t i = 0; i < nc; i++)
    {
        std::string c = GetString([&](char *b, size_t l, size_t *n) {
            return marquet_table_column_name(m_table, i, b, l, n);
        });
        if (std::find(m_coverings.begin(), m_coverings.end(), c) != m_coverings.end())
            continue;
        names += c;
        offs.push_back(static_cast<int64_t>(names.size()));
    }
    ArrowArrayStream st{};
    if (!Ok(marquet_table_read_arrow(m_table, names.data(), names.size(), offs.data(),
                                     static_cast<int64_t>(offs.size() - 1), 0, 0, 0, &st),
            m_path.c_str()))
        return false;
    ArrowSchema sch{};
    if (st.get_schema(&st, &sch) != 0)
    {
        const char *e = st.get_last_error(&st);
        CPLError(CE_Failure, CPLE_AppDefined, "Marquet: %s: %s", m_path.c_str(), e ? e : "schema");
        st.release(&st);
        return false;
    }
    for (int64_t i = 0; i < sch.n_children; i++)
    {
        const ArrowSchema *c = sch.children[i];
        Column col;
        col.name = c->name;
        col.format = c->format;
        col.kind = KindOf(c);
        if (col.kind.geometry)
        {
            marquet_geometry_info *info = nullptr;
            if (!Ok(marquet_table_geometry_info(m_table, col.name.data(), col.name.size(), &info),
                    col.name.c_str()))
                continue;
            std::vector<int32_t> codes(64);
            size_t count = 0;
            marquet_geometry_info_types(info, codes.data(), codes.size(), &count);
            codes.resize(std::min(count, codes.size()));
            OGRGeomFieldDefn gfd(col.name.c_str(), TypeFromCodes(codes));
            int32_t crs = MARQUET_CRS_UNKNOWN;
            marquet_geometry_info_crs(info, &crs);
            OGRSpatialReference *srs = nullptr;
            if (crs == MARQUET_CRS_DEFAULT)
            {
                srs = new OGRSpatialReference();
                srs->SetFromUserInput("urn:ogc:def:crs:OGC:1.3:CRS84");  // HEP002 §8.1 default
            }
            else if (crs == MARQUET_CRS_PROJJSON)
            {
                std::string pj = GetString([&](char *b, size_t l, size_t *n) {
                    return marquet_geometry_info_crs_projjson(info, b, l, n);
                });
                srs = new OGRSpatialReference();
                if (srs->SetFromUserInput(pj.c_str()) != OGRERR_NONE)
                {
                    CPLError(CE_Warning, CPLE_AppDefined,
                             "Marquet: %s/%s: PROJ cannot read the CRS (PROJJSON); no SRS is set",
                             m_path.c_str(), col.name.c_str());
                    srs->Release();
                    srs = nullptr;
                }
            }
            if (srs != nullptr)
            {
                srs->SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
                gfd.SetSpatialRef(srs);
                srs->Release();
            }
            marquet_geometry_info_free(info);
            col.geom_field = m_defn->GetGeomFieldCount();
            m_defn->AddGeomFieldDefn(&gfd);
        }
        else if (col.kind.type != NO_FIELD)
        {
            OGRFieldDefn fd(col.name.c_str(), col.kind.type);
            fd.SetSubType(col.kind.subtype);
            col.ogr_field = m_defn->GetFieldCount();
            m_defn->AddFieldDefn(&fd);
        }
        else
        {
            CPLDebug(DRIVER, "%s: column %s (Arrow %s%s%s) has no OGR field type; left out",
                     m_path.c_str(), col.name.c_str(), col.format.c_str(),
                     c->n_children > 0 ? " of " : "", c->n_children > 0 ? c->children[0]->format : "");
            continue;
        }
        // Keep what the writer of appended rows needs: the same Arrow type.
        ColumnBuilder b;
        b.name = col.name;
        b.format = col.format;
        b.metadata = c->metadata ? EncodeMetadata(ParseMetadata(c->metadata)) : std::string();
        b.ogr_field = col.ogr_field;
        b.geom_field = col.geom_field;
        if (b.format == "+l" && c->n_children == 1)
            b.child_format = c->children[0]->format;
        m_builders.push_back(b);
        m_cols.push_back(col);
    }
    sch.release(&sch);
    st.release(&st);
    return true;
}

// ---- layer: reading -----------------------------------------------------------------------

void OGRMarquetLayer::CloseStream()
{
    m_batch.reset();
    if (m_stream_schema.release != nullptr)
        m_stream_schema.release(&m_stream_schema);
    if (m_stream.release != nullptr)
        m_stream.release(&m_stream);
    m_stream = ArrowArrayStream{};
    m_stream_schema = ArrowSchema{};
    m_stream_cols.clear();
}

void OGRMarquetLayer::ResetReading()
{
    CloseStream();
    m_eof = false;
    m_next_fid = 0;
    m_rows_pos = 0;
}

void OGRMarquetLayer::SetSpatialFilter(int geom, OGRGeometry *g)
{
    if (geom < 0 || (geom > 0 && geom >= m_defn->GetGeomFieldCount()))
    {
        CPLError(CE_Failure, CPLE_AppDefined, "Marquet: invalid geometry field index %d", geom);
        return;
    }
    m_iGeomFieldFilter = geom;
    if (!InstallFilter(g))
    {
        ResetReading();
        return;
    }
    m_use_rows = false;
    m_rows.clear();
    marquet_query_result_free(m_result);
    m_result = nullptr;
    ResetReading();
    if (m_poFilterGeom == nullptr || m_table == nullptr || m_defn->GetGeomFieldCount() == 0)
        return;
    // The library's indexed query answers the window (HEP002 §10): rows whose geometry
    // intersects the filter's envelope, exactly (planar columns) or as a superset
    // (geodesic edges: OGR then tests each geometry itself).
    // One reader per geometry column, kept for every later window (its metadata and
    // decoded index chunks are read once).
    if (m_reader == nullptr || m_reader_field != geom)
    {
        marquet_spatial_reader_free(m_reader);
        m_reader = nullptr;
        std::string name = m_defn->GetGeomFieldDefn(geom)->GetNameRef();
        if (!Ok(marquet_spatial_reader_open(m_table, name.data(), name.size(), &m_reader), m_path.c_str()))
            return;
        m_reader_field = geom;
    }
    marquet_query_result *r = nullptr;
    int32_t pred = m_bFilterIsEnvelope ? MARQUET_PREDICATE_INTERSECTS : MARQUET_PREDICATE_BBOX;
    int32_t flags = MARQUET_QUERY_USE_INDEXES;
    if (!m_defn->GetGeomFieldDefn(geom)->IsIgnored())
        flags |= MARQUET_QUERY_KEEP_GEOMETRY;
    if (!Ok(marquet_spatial_reader_query_box(m_reader, m_sFilterEnvelope.MinX, m_sFilterEnvelope.MinY,
                                             m_sFilterEnvelope.MaxX, m_sFilterEnvelope.MaxY, pred, flags, &r),
            m_path.c_str()))
        return;
    int64_t n = 0;
    int32_t approx = 0;
    marquet_query_result_count(r, &n);
    marquet_query_result_approximate(r, &approx);
    m_rows.resize(static_cast<size_t>(n));
    if (n > 0)
        marquet_query_result_rows(r, m_rows.data(), m_rows.size());
    m_result = r;
    m_use_rows = true;
    m_exact = m_bFilterIsEnvelope && approx == 0;
}

bool OGRMarquetLayer::OpenStream()
{
    CloseStream();
    if (m_table == nullptr)
        return false;
    // Only the columns OGR wants (SetIgnoredFields).
    std::string names;
    std::vector<int64_t> offs{0};
    for (const Column &c : m_cols)
    {
        bool ignored = c.geom_field >= 0 ? m_defn->GetGeomFieldDefn(c.geom_field)->IsIgnored()
                                         : m_defn->GetFieldDefn(c.ogr_field)->IsIgnored();
        if (ignored)
            continue;
        names += c.name;
        offs.push_back(static_cast<int64_t>(names.size()));
    }
    int32_t st;
    if (m_use_rows && m_result != nullptr)
        st = marquet_query_result_take_arrow(m_table, m_result, names.data(), names.size(), offs.data(),
                                             static_cast<int64_t>(offs.size() - 1), 0, &m_stream);
    else if (m_use_rows)
        st = marquet_table_take_arrow(m_table, names.data(), names.size(), offs.data(),
                                      static_cast<int64_t>(offs.size() - 1), m_rows.data(),
                                      static_cast<int64_t>(m_rows.size()), 0, &m_stream);
    else
        st = marquet_table_read_arrow(m_table, names.data(), names.size(), offs.data(),
                                      static_cast<int64_t>(offs.size() - 1), 0, m_nrows, 0,
                                      &m_stream);
    if (!Ok(st, m_path.c_str()))
        return false;
    if (m_stream.get_schema(&m_stream, &m_stream_schema) != 0)
    {
        const char *e = m_stream.get_last_error(&m_stream);
        CPLError(CE_Failure, CPLE_AppDefined, "Marquet: %s: %s", m_path.c_str(), e ? e : "schema");
        return false;
    }
    for (int64_t i = 0; i < m_stream_schema.n_children; i++)
    {
        std::string n = m_stream_schema.children[i]->name;
        int k = -1;
        for (size_t j = 0; j < m_cols.size(); j++)
            if (m_cols[j].name == n)
                k = static_cast<int>(j);
        m_stream_cols.push_back(k);
    }
    return true;
}

bool OGRMarquetLayer::NextBatch()
{
    m_batch.reset(new Batch());
    if (m_stream.get_next(&m_stream, &m_batch->array) != 0)
    {
        const char *e = m_stream.get_last_error(&m_stream);
        CPLError(CE_Failure, CPLE_AppDefined, "Marquet: %s: %s", m_path.c_str(), e ? e : "read failed");
        m_batch.reset();
        return false;
    }
    if (m_batch->array.release == nullptr)  // end of stream
    {
        m_batch.reset();
        return false;
    }
    m_batch_pos = 0;
    return true;
}

OGRFeature *OGRMarquetLayer::Translate(int64_t i, int64_t fid)
{
    OGRFeature *f = new OGRFeature(m_defn);
    f->SetFID(fid);
    const ArrowArray &sa = m_batch->array;
    for (int64_t c = 0; c < sa.n_children; c++)
    {
        int k = m_stream_cols[c];
        if (k < 0)
            continue;
        const Column &col = m_cols[k];
        const ArrowArray *a = sa.children[c];
        const ArrowSchema *s = m_stream_schema.children[c];
        const std::string &fm = col.format;
        if (col.geom_field >= 0)
        {
            if (!ValidAt(a, i))
                continue;
            auto b = BytesAt(fm, a, i);
            OGRGeometry *g = nullptr;
            if (OGRGeometryFactory::createFromWkb(b.first, m_defn->GetGeomFieldDefn(col.geom_field)->GetSpatialRef(),
                                                  &g, b.second, wkbVariantIso) == OGRERR_NONE)
                f->SetGeomFieldDirectly(col.geom_field, g);
            else
                CPLError(CE_Warning, CPLE_AppDefined, "Marquet: %s/%s row " CPL_FRMT_GIB ": invalid WKB",
                         m_path.c_str(), col.name.c_str(), static_cast<GIntBig>(fid));
            continue;
        }
        int fld = col.ogr_field;
        if (!ValidAt(a, i))
        {
            f->SetFieldNull(fld);
            continue;
        }
        if (s->dictionary != nullptr)
        {
            int64_t key = IntAt(fm, a, i);
            auto b = BytesAt(s->dictionary->format, a->dictionary, key);
            f->SetField(fld, std::string(b.first, b.second).c_str());
            continue;
        }
        switch (col.kind.type)
        {
            case OFTInteger:
            case OFTInteger64:
                f->SetField(fld, static_cast<GIntBig>(IntAt(fm, a, i)));
                break;
            case OFTReal:
                f->SetField(fld, RealAt(fm, a, i));
                break;
            case OFTString:
            {
                auto b = BytesAt(fm, a, i);
                f->SetField(fld, std::string(b.first, b.second).c_str());
                break;
            }
            case OFTBinary:
            {
                auto b = BytesAt(fm, a, i);
                f->SetField(fld, static_cast<int>(b.second), reinterpret_cast<const GByte *>(b.first));
                break;
            }
            case OFTDate:
            {
                int64_t days = fm == "tdD" ? IntAt("i", a, i) : IntAt("l", a, i) / 86400000;
                struct tm t;
                CPLUnixTimeToYMDHMS(static_cast<GIntBig>(days) * 86400, &t);
                f->SetField(fld, t.tm_year + 1900, t.tm_mon + 1, t.tm_mday);
                break;
            }
            case OFTDateTime:
            {
                std::string tz = fm.size() > 4 ? fm.substr(4) : std::string();
                SetDateTimeFromEpoch(f, fld, IntAt("l", a, i), TsScale(fm), !tz.empty());
                break;
            }
            case OFTIntegerList:
            case OFTInteger64List:
            case OFTRealList:
            case OFTStringList:
            {
                int64_t j = i + a->offset;
                int64_t lo, hi;
                if (fm == "+L")
                {
                    lo = static_cast<const int64_t *>(a->buffers[1])[j];
                    hi = static_cast<const int64_t *>(a->buffers[1])[j + 1];
                }
                else
                {
                    lo = static_cast<const int32_t *>(a->buffers[1])[j];
                    hi = static_cast<const int32_t *>(a->buffers[1])[j + 1];
                }
                const ArrowArray *ca = a->children[0];
                std::string cf = s->children[0]->format;
                if (col.kind.type == OFTStringList)
                {
                    CPLStringList l;
                    for (int64_t k2 = lo; k2 < hi; k2++)
                    {
                        auto b = BytesAt(cf, ca, k2);
                        l.AddString(std::string(b.first, b.second).c_str());
                    }
                    f->SetField(fld, l.List());
                }
                else if (col.kind.type == OFTRealList)
                {
                    std::vector<double> v;
                    for (int64_t k2 = lo; k2 < hi; k2++)
                        v.push_back(RealAt(cf, ca, k2));
                    f->SetField(fld, static_cast<int>(v.size()), v.data());
                }
                else if (col.kind.type == OFTInteger64List)
                {
                    std::vector<GIntBig> v;
                    for (int64_t k2 = lo; k2 < hi; k2++)
                        v.push_back(IntAt(cf, ca, k2));
                    f->SetField(fld, static_cast<int>(v.size()), v.data());
                }
                else
                {
                    std::vector<int> v;
                    for (int64_t k2 = lo; k2 < hi; k2++)
                        v.push_back(static_cast<int>(IntAt(cf, ca, k2)));
                    f->SetField(fld, static_cast<int>(v.size()), v.data());
                }
                break;
            }
            default:
                break;
        }
    }
    return f;
}

OGRFeature *OGRMarquetLayer::GetNextFeature()
{
    if (m_table == nullptr || m_eof)
        return nullptr;
    if (m_use_rows && m_rows.empty())
        return nullptr;  // the window matched nothing: no stream to open
    while (true)
    {
        if (m_stream.release == nullptr && !OpenStream())
        {
            m_eof = true;
            return nullptr;
        }
        if (!m_batch || m_batch_pos >= m_batch->Length())
        {
            if (!NextBatch())
            {
                m_eof = true;
                return nullptr;
            }
            if (m_batch->Length() == 0)
                continue;
        }
        int64_t i = m_batch_pos++;
        int64_t fid = m_use_rows ? m_rows[m_rows_pos++] : m_next_fid++;
        OGRFeature *f = Translate(i, fid);
        bool geom_ok = m_poFilterGeom == nullptr || m_exact ||
                       FilterGeometry(f->GetGeomFieldRef(m_iGeomFieldFilter));
        if (geom_ok && (m_poAttrQuery == nullptr || m_poAttrQuery->Evaluate(f)))
            return f;
        delete f;
    }
}

OGRFeature *OGRMarquetLayer::GetFeature(GIntBig fid)
{
    if (m_table == nullptr || fid < 0 || fid >= m_nrows)
        return nullptr;
    // A stream of one row; the sequential reading state is kept.
    ArrowArrayStream saved = m_stream;
    ArrowSchema saved_schema = m_stream_schema;
    std::vector<int> saved_cols = m_stream_cols;
    std::unique_ptr<Batch> saved_batch = std::move(m_batch);
    bool saved_use = m_use_rows;
    marquet_query_result *saved_result = m_result;
    m_result = nullptr;
    std::vector<int64_t> saved_rows;
    saved_rows.swap(m_rows);
    m_stream = ArrowArrayStream{};
    m_stream_schema = ArrowSchema{};
    m_rows.assign(1, fid);
    m_use_rows = true;
    OGRFeature *f = nullptr;
    if (OpenStream() && NextBatch() && m_batch->Length() == 1)
        f = Translate(0, fid);
    CloseStream();
    m_stream = saved;
    m_stream_schema = saved_schema;
    m_stream_cols = saved_cols;
    m_batch = std::move(saved_batch);
    m_use_rows = saved_use;
    m_result = saved_result;
    m_rows.swap(saved_rows);
    return f;
}

GIntBig OGRMarquetLayer::GetFeatureCount(int force)
{
    if (m_poAttrQuery != nullptr || (m_poFilterGeom != nullptr && !m_exact))
        return OGRLayer::GetFeatureCount(force);
    if (m_poFilterGeom != nullptr)
        return static_cast<GIntBig>(m_rows.size());
    return m_new ? m_written + m_pending : m_nrows;
}

OGRErr OGRMarquetLayer::GetExtent(int geom, OGREnvelope *env, int force)
{
    if (geom < 0 || geom >= m_defn->GetGeomFieldCount())
        return OGRERR_FAILURE;
    if (m_table == nullptr)
        return OGRERR_FAILURE;
    std::string name = m_defn->GetGeomFieldDefn(geom)->GetNameRef();
    marquet_geometry_info *info = nullptr;
    if (!Ok(marquet_table_geometry_info(m_table, name.data(), name.size(), &info), m_path.c_str()))
        return OGRERR_FAILURE;
    double b[8];
    int32_t present = 0, hz = 0, hm = 0;
    int32_t st = marquet_geometry_info_bbox(info, b, 8, &present, &hz, &hm);
    marquet_geometry_info_free(info);
    if (st != MARQUET_STATUS_OK || !present || std::isnan(b[0]))
    {
        // No BBOX attribute (an empty table, or a file without it): OGR scans if asked to.
        return force ? OGRLayer::GetExtentInternal(geom, env, force) : OGRERR_FAILURE;
    }
    env->MinX = b[0];
    env->MinY = b[1];
    env->MaxX = b[4];
    env->MaxY = b[5];
    return OGRERR_NONE;
}

int OGRMarquetLayer::TestCapability(const char *cap)
{
    if (EQUAL(cap, OLCFastFeatureCount))
        return m_poAttrQuery == nullptr && (m_poFilterGeom == nullptr || m_exact);
    if (EQUAL(cap, OLCFastGetExtent) || EQUAL(cap, OLCFastSpatialFilter) || EQUAL(cap, OLCRandomRead))
        return m_table != nullptr;
    if (EQUAL(cap, OLCSequentialWrite))
        return m_writable;
    if (EQUAL(cap, OLCCreateField))
        return m_writable && m_new && !m_started;
    if (EQUAL(cap, OLCStringsAsUTF8) || EQUAL(cap, OLCIgnoreFields) ||
        EQUAL(cap, OLCMeasuredGeometries) || EQUAL(cap, OLCZGeometries))
        return TRUE;
    return FALSE;
}

// ---- layer: writing ------------------------------------------------------------------------

OGRErr OGRMarquetLayer::CreateField(OGRFieldDefn *field, int /*approx*/)
{
    if (!m_writable || !m_new)
    {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "Marquet: %s: fields can be added only to a new layer (a table written by this dataset)",
                 m_path.c_str());
        return OGRERR_FAILURE;
    }
    if (m_started)
    {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "Marquet: %s: CreateField after the first feature is not supported", m_path.c_str());
        return OGRERR_FAILURE;
    }
    ColumnBuilder b;
    b.name = field->GetNameRef();
    OGRFieldSubType st = field->GetSubType();
    switch (field->GetType())
    {
        case OFTInteger: b.format = st == OFSTBoolean ? "b" : st == OFSTInt16 ? "s" : "i"; break;
        case OFTInteger64: b.format = "l"; break;
        case OFTReal: b.format = st == OFSTFloat32 ? "f" : "g"; break;
        case OFTString: b.format = "u"; break;
        case OFTBinary: b.format = "z"; break;
        case OFTDate: b.format = "tdD"; break;
        case OFTDateTime: b.format = "tsm:UTC"; break;
        case OFTIntegerList: b.format = "+l"; b.child_format = st == OFSTBoolean ? "b" : "i"; break;
        case OFTInteger64List: b.format = "+l"; b.child_format = "l"; break;
        case OFTRealList: b.format = "+l"; b.child_format = "g"; break;
        case OFTStringList: b.format = "+l"; b.child_format = "u"; break;
        default:
            // OFTTime and the wide-string types: kept as text.
            b.format = "u";
            CPLError(CE_Warning, CPLE_AppDefined, "Marquet: field %s of type %s is written as a string",
                     b.name.c_str(), OGRFieldDefn::GetFieldTypeName(field->GetType()));
    }
    for (const auto &o : m_builders)
        if (EQUAL(o.name.c_str(), b.name.c_str()) || EQUAL(b.name.c_str(), m_geom_names[0].c_str()))
        {
            CPLError(CE_Failure, CPLE_AppDefined, "Marquet: %s: a column %s exists already",
                     m_path.c_str(), b.name.c_str());
            return OGRERR_FAILURE;
        }
    b.ogr_field = m_defn->GetFieldCount();
    OGRFieldDefn fd(field);
    if (field->GetType() == OFTTime || field->GetType() == OFTWideString ||
        field->GetType() == OFTWideStringList)
        fd.SetType(OFTString);
    m_defn->AddFieldDefn(&fd);
    m_builders.push_back(b);
    return OGRERR_NONE;
}

bool OGRMarquetLayer::StartWriter()
{
    // The schema: a struct of the columns; geometry columns as geoarrow.wkb with the CRS.
    std::vector<ArrowSchema *> children;
    for (ColumnBuilder &b : m_builders)
    {
        ArrowSchema *c = new ArrowSchema();
        std::vector<ArrowSchema *> grand;
        if (b.format == "+l")
        {
            ArrowSchema *e = new ArrowSchema();
            FillSchema(e, b.child_format, "element", "", {});
            grand.push_back(e);
        }
        FillSchema(c, b.format, b.name, b.metadata, grand);
        children.push_back(c);
    }
    ArrowSchema s{};
    FillSchema(&s, "+s", "", "", children);
    s.flags = 0;
    return Ok(marquet_arrow_writer_new(m_ds->m_file, m_path.data(), m_path.size(), m_new ? 0 : 1,
                                       &s, &m_writer),
              m_path.c_str());
}

bool OGRMarquetLayer::FlushBatch()
{
    if (m_pending == 0)
        return true;
    if (m_writer == nullptr && !StartWriter())
        return false;
    std::vector<ArrowArray *> cols;
    for (ColumnBuilder &b : m_builders)
    {
        cols.push_back(ExportColumn(b));
        b.Clear();
    }
    ArrowArray *s = NewArray(m_pending, 0, {{}}, cols, {false});
    int32_t st = marquet_arrow_writer_write(m_writer, s);
    delete s;  // moved into the writer (its release is now NULL)
    m_written += m_pending;
    m_pending = 0;
    return Ok(st, m_path.c_str());
}

OGRErr OGRMarquetLayer::ICreateFeature(OGRFeature *f)
{
    if (!m_writable)
    {
        CPLError(CE_Failure, CPLE_NotSupported, "Marquet: %s: the dataset is not opened for update",
                 m_path.c_str());
        return OGRERR_FAILURE;
    }
    if (m_failed)
        return OGRERR_FAILURE;
    if (!m_started && m_new)
    {
        // The geometry column goes last (after the attribute fields), as GeoPackage and
        // GeoParquet sources have it... first in our order: the primary geometry column.
        ColumnBuilder g;
        g.name = m_geom_names[0];
        g.format = "z";
        g.geom_field = 0;
        std::string crs = "null";
        const OGRSpatialReference *srs = m_defn->GetGeomFieldDefn(0)->GetSpatialRef();
        if (srs != nullptr)
        {
            char *pj = nullptr;
            const char *const opts[] = {"MULTILINE=NO", nullptr};
            if (srs->exportToPROJJSON(&pj, opts) == OGRERR_NONE && pj != nullptr)
                crs = pj;
            CPLFree(pj);
        }
        g.metadata = EncodeMetadata({{"ARROW:extension:name", "geoarrow.wkb"},
                                     {"ARROW:extension:metadata", "{\"crs\":" + crs + "}"}});
        m_builders.insert(m_builders.begin(), g);
    }
    m_started = true;
    for (ColumnBuilder &b : m_builders)
        if (!b.Append(f))
        {
            m_failed = true;
            return OGRERR_FAILURE;
        }
    m_pending++;
    if (m_pending >= WRITE_BATCH_ROWS && !FlushBatch())
    {
        m_failed = true;
        return OGRERR_FAILURE;
    }
    return OGRERR_NONE;
}

// Write what was buffered; a layer whose writing failed publishes nothing.
bool OGRMarquetLayer::Finish()
{
    if (!m_writable || (!m_started && !m_new))
        return true;
    if (m_failed)
    {
        CPLError(CE_Failure, CPLE_AppDefined,
                 "Marquet: %s: not written (a feature failed); the file keeps its previous tables",
                 m_path.c_str());
        return false;
    }
    if (!m_started)
    {
        CPLError(CE_Warning, CPLE_AppDefined, "Marquet: %s: no features; no table is written",
                 m_path.c_str());
        return true;
    }
    if (!FlushBatch())
        return false;
    int64_t n = 0;
    bool ok = Ok(marquet_arrow_writer_finish(m_writer, &n), m_path.c_str());
    marquet_arrow_writer_free(m_writer);
    m_writer = nullptr;
    m_started = false;
    return ok;
}

// ---- data source ----------------------------------------------------------------------------

OGRLayer *OGRMarquetDataSource::ICreateLayer(const char *name, OGRSpatialReference *srs,
                                             OGRwkbGeometryType gtype, char **options)
{
    if (!m_update)
    {
        CPLError(CE_Failure, CPLE_NoWriteAccess, "Marquet: the dataset is opened read-only");
        return nullptr;
    }
    if (gtype == wkbNone)
    {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "Marquet: layer %s has no geometry; a Marquet table needs a geometry column (HEP002 §5)",
                 name);
        return nullptr;
    }
    std::string path = name[0] == '/' ? name : std::string("/") + name;
    for (auto &l : m_layers)
        if (EQUAL(l->GetName(), path.c_str() + 1))
        {
            CPLError(CE_Failure, CPLE_AppDefined, "Marquet: layer %s exists already", name);
            return nullptr;
        }
    const char *gname = CSLFetchNameValueDef(options, "GEOMETRY_NAME", "geometry");
    m_layers.emplace_back(new OGRMarquetLayer(this, path, srs, gtype, gname));
    return m_layers.back().get();
}

bool IsHdf5(GDALOpenInfo *oi)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    if (oi->fpL == nullptr || oi->nHeaderBytes < 8)
        return false;
    // The superblock is at 0, 512, 1024, 2048... (a user block before it).
    if (memcmp(oi->pabyHeader, sig, 8) == 0)
        return true;
    for (int off = 512; off + 8 <= oi->nHeaderBytes; off *= 2)
        if (memcmp(oi->pabyHeader + off, sig, 8) == 0)
            return true;
    return false;
}

int Identify(GDALOpenInfo *oi)
{
    if ((oi->nOpenFlags & GDAL_OF_VECTOR) == 0)
        return FALSE;  // the HDF5 raster drivers keep their files
    if (STARTS_WITH_CI(oi->pszFilename, "MARQUET:"))
        return TRUE;
    return IsHdf5(oi) ? GDAL_IDENTIFY_UNKNOWN : FALSE;
}

bool OnlyUs(GDALOpenInfo *oi)
{
    const char *const *allowed = oi->papszAllowedDrivers;
    return allowed != nullptr && CSLCount(const_cast<char **>(allowed)) == 1 && EQUAL(allowed[0], DRIVER);
}

GDALDataset *Open(GDALOpenInfo *oi)
{
    if (!Identify(oi))
        return nullptr;
    std::string path = oi->pszFilename;
    if (STARTS_WITH_CI(path.c_str(), "MARQUET:"))
        path = path.substr(8);
    bool update = oi->eAccess == GA_Update;
    marquet_file *file = nullptr;
    int32_t st = update ? marquet_file_open_rw(path.data(), path.size(), &file)
                        : marquet_file_open(path.data(), path.size(), &file);
    if (st != MARQUET_STATUS_OK)
    {
        CPLError(CE_Failure, CPLE_OpenFailed, "Marquet: cannot open %s: %s", path.c_str(),
                 LastError().c_str());
        return nullptr;
    }
    auto ds = std::make_unique<OGRMarquetDataSource>();
    ds->m_file = file;
    ds->m_update = update;
    ds->SetDescription(oi->pszFilename);
    int64_t n = 0;
    if (!Ok(marquet_file_table_count(file, &n), path.c_str()))
        return nullptr;
    for (int64_t i = 0; i < n; i++)
    {
        std::string t = GetString([&](char *b, size_t l, size_t *need) {
            return marquet_file_table_name(file, i, b, l, need);
        });
        marquet_table *table = nullptr;
        st = marquet_table_open(file, t.data(), t.size(), &table);
        if (st == MARQUET_STATUS_NOT_A_TABLE)
            continue;  // an H5Col table without geometry: not a Marquet table
        if (st != MARQUET_STATUS_OK)
        {
            CPLError(CE_Warning, CPLE_AppDefined, "Marquet: %s: table %s left out: %s", path.c_str(),
                     t.c_str(), LastError().c_str());
            continue;
        }
        std::unique_ptr<OGRMarquetLayer> l(new OGRMarquetLayer(ds.get(), table, t, update));
        if (!l->Init())
        {
            CPLError(CE_Warning, CPLE_AppDefined, "Marquet: %s: table %s left out", path.c_str(), t.c_str());
            continue;
        }
        ds->m_layers.push_back(std::move(l));
    }
    if (ds->m_layers.empty() && !update)
    {
        if (OnlyUs(oi))
            CPLError(CE_Failure, CPLE_OpenFailed,
                     "Marquet: %s is an HDF5 file without Marquet tables (HEP002 §5: a group with "
                     "CLASS=COLUMN_TABLE and MARQUET_VERSION)",
                     path.c_str());
        else
            CPLDebug(DRIVER, "%s: an HDF5 file without Marquet tables", path.c_str());
        return nullptr;
    }
    return ds.release();
}

GDALDataset *Create(const char *name, int, int, int, GDALDataType, char **)
{
    marquet_file *file = nullptr;
    if (!Ok(marquet_file_create(name, strlen(name), &file), name))
        return nullptr;
    auto *ds = new OGRMarquetDataSource();
    ds->m_file = file;
    ds->m_update = true;
    ds->SetDescription(name);
    return ds;
}

}  // namespace

extern "C" void CPL_DLL GDALRegister_Marquet();

extern "C" void GDALRegister_Marquet()
{
    if (!GDAL_CHECK_VERSION("Marquet driver"))
        return;
    if (GDALGetDriverByName(DRIVER) != nullptr)
        return;
    auto *d = new GDALDriver();
    d->SetDescription(DRIVER);
    d->SetMetadataItem(GDAL_DCAP_VECTOR, "YES");
    d->SetMetadataItem(GDAL_DMD_LONGNAME, "Marquet geospatial tables in HDF5 (HEP002)");
    d->SetMetadataItem(GDAL_DMD_EXTENSIONS, "h5 hdf5 he5 nc");
    d->SetMetadataItem(GDAL_DMD_EXTENSION, "h5");
    d->SetMetadataItem(GDAL_DMD_HELPTOPIC, "https://github.com/marquet/marquet/blob/main/gdal/README.md");
    d->SetMetadataItem(GDAL_DCAP_VIRTUALIO, "NO");
    d->SetMetadataItem(GDAL_DCAP_CREATE_LAYER, "YES");
    d->SetMetadataItem(GDAL_DCAP_MEASURED_GEOMETRIES, "YES");
    d->SetMetadataItem(GDAL_DCAP_Z_GEOMETRIES, "YES");
    d->SetMetadataItem(GDAL_DMD_CREATIONFIELDDATATYPES,
                       "Integer Integer64 Real String Date DateTime Binary IntegerList "
                       "Integer64List RealList StringList");
    d->SetMetadataItem(GDAL_DMD_CREATIONFIELDDATASUBTYPES, "Boolean Int16 Float32");
    d->SetMetadataItem(GDAL_DS_LAYER_CREATIONOPTIONLIST,
                       "<LayerCreationOptionList>"
                       "<Option name='GEOMETRY_NAME' type='string' default='geometry' "
                       "description='Name of the geometry column'/>"
                       "</LayerCreationOptionList>");
    d->SetMetadataItem(GDAL_DMD_OPENOPTIONLIST, "<OpenOptionList/>");
    d->SetMetadataItem(GDAL_DMD_CONNECTION_PREFIX, "MARQUET:");
    d->pfnIdentify = Identify;
    d->pfnOpen = Open;
    d->pfnCreate = Create;
    GetGDALDriverManager()->RegisterDriver(d);
}
