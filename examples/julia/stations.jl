# HEP002 §15.1 through the C API from Julia (ccall): the stations point column with a
# point, a null and an empty point, written, queried by box and read back.
#
#   LIBMARQUET=/path/to/libmarquet.so julia stations.jl out.h5
#
# Not run in CI (Julia is not installed there); the C and Fortran examples cover the
# same calls. CI checks mechanically that every ccall below names a function of
# include/marquet.h with the same number of arguments and compatible types, and that the
# constants have the header's values (capi/tests/bindings.rs).

const libmarquet = get(ENV, "LIBMARQUET", "libmarquet")

const MARQUET_STATUS_OK = Int32(0)
const MARQUET_FORM_POINT = Int32(3)
const MARQUET_DIMENSIONS_XY = Int32(0)
const MARQUET_PREDICATE_INTERSECTS = Int32(1)

"Throw with the library's message when a call did not return MARQUET_STATUS_OK."
function check(status::Int32, what::AbstractString)
    status == MARQUET_STATUS_OK && return
    needed = Ref{Csize_t}(0)
    ccall((:marquet_last_error_message, libmarquet), Int32, (Ptr{UInt8}, Csize_t, Ref{Csize_t}), C_NULL, 0, needed)
    buf = Vector{UInt8}(undef, needed[])
    ccall((:marquet_last_error_message, libmarquet), Int32, (Ptr{UInt8}, Csize_t, Ref{Csize_t}), buf, length(buf), needed)
    desc = unsafe_string(ccall((:marquet_status_str, libmarquet), Cstring, (Int32,), status))
    error("$what failed: $desc ($status): $(String(buf[1:end-1]))")
end

function write_stations(path::String)
    file = Ref{Ptr{Cvoid}}(C_NULL)
    table = Ref{Ptr{Cvoid}}(C_NULL)
    opts = Ref{Ptr{Cvoid}}(C_NULL)
    batch = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:marquet_file_create, libmarquet), Int32, (Cstring, Csize_t, Ref{Ptr{Cvoid}}), path, sizeof(path), file),
          "marquet_file_create")
    name = "/stations"
    check(ccall((:marquet_table_create, libmarquet), Int32, (Ptr{Cvoid}, Cstring, Csize_t, Ref{Ptr{Cvoid}}),
                file[], name, sizeof(name), table), "marquet_table_create")
    check(ccall((:marquet_geometry_column_options_new, libmarquet), Int32, (Ref{Ptr{Cvoid}},), opts),
          "marquet_geometry_column_options_new")
    check(ccall((:marquet_geometry_column_options_set_form, libmarquet), Int32, (Ptr{Cvoid}, Int32, Int32, Int32, Int64),
                opts[], MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XY, 0, 0), "marquet_geometry_column_options_set_form")
    col = "location"
    check(ccall((:marquet_table_add_geometry_column, libmarquet), Int32, (Ptr{Cvoid}, Cstring, Csize_t, Ptr{Cvoid}),
                table[], col, sizeof(col), opts[]), "marquet_table_add_geometry_column")
    ccall((:marquet_geometry_column_options_free, libmarquet), Cvoid, (Ptr{Cvoid},), opts[])

    x = [-88.2434, 0.0, NaN]
    y = [40.1164, 0.0, NaN]
    valid = UInt8[1, 0, 1]
    check(ccall((:marquet_batch_new, libmarquet), Int32, (Ref{Ptr{Cvoid}},), batch), "marquet_batch_new")
    check(ccall((:marquet_batch_set_points, libmarquet), Int32,
                (Ptr{Cvoid}, Cstring, Csize_t, Int32, Ptr{Float64}, Ptr{Float64}, Ptr{Float64}, Ptr{Float64}, Ptr{UInt8}, Int64),
                batch[], col, sizeof(col), MARQUET_DIMENSIONS_XY, x, y, C_NULL, C_NULL, valid, length(x)),
          "marquet_batch_set_points")
    nrows = Ref{Int64}(0)
    check(ccall((:marquet_table_append, libmarquet), Int32, (Ptr{Cvoid}, Ptr{Cvoid}, Ref{Int64}), table[], batch[], nrows),
          "marquet_table_append")
    ccall((:marquet_batch_free, libmarquet), Cvoid, (Ptr{Cvoid},), batch[])
    ccall((:marquet_table_free, libmarquet), Cvoid, (Ptr{Cvoid},), table[])
    ccall((:marquet_file_free, libmarquet), Cvoid, (Ptr{Cvoid},), file[])
    println("wrote $(nrows[]) rows to $path")
end

function read_stations(path::String)
    file = Ref{Ptr{Cvoid}}(C_NULL)
    table = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:marquet_file_open, libmarquet), Int32, (Cstring, Csize_t, Ref{Ptr{Cvoid}}), path, sizeof(path), file),
          "marquet_file_open")
    name = "/stations"
    check(ccall((:marquet_table_open, libmarquet), Int32, (Ptr{Cvoid}, Cstring, Csize_t, Ref{Ptr{Cvoid}}),
                file[], name, sizeof(name), table), "marquet_table_open")
    nrows = Ref{Int64}(0)
    check(ccall((:marquet_table_nrows, libmarquet), Int32, (Ptr{Cvoid}, Ref{Int64}), table[], nrows), "marquet_table_nrows")
    n = nrows[]
    x = Vector{Float64}(undef, n)
    y = Vector{Float64}(undef, n)
    valid = Vector{UInt8}(undef, n)
    col = "location"
    check(ccall((:marquet_table_read_points, libmarquet), Int32,
                (Ptr{Cvoid}, Cstring, Csize_t, Int64, Int64, Ptr{Float64}, Ptr{Float64}, Ptr{Float64}, Ptr{Float64}, Ptr{UInt8}),
                table[], col, sizeof(col), 0, n, x, y, C_NULL, C_NULL, valid), "marquet_table_read_points")
    for i in 1:n
        if valid[i] == 0
            println("NULL")
        elseif isnan(x[i])
            println("POINT EMPTY")
        else
            println("POINT ($(x[i]) $(y[i]))")
        end
    end

    # Rows whose point intersects a box around the station (0-based row numbers).
    result = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:marquet_table_query_box, libmarquet), Int32,
                (Ptr{Cvoid}, Cstring, Csize_t, Float64, Float64, Float64, Float64, Int32, Int32, Ref{Ptr{Cvoid}}),
                table[], col, sizeof(col), -89.0, 40.0, -88.0, 41.0, MARQUET_PREDICATE_INTERSECTS, 1, result),
          "marquet_table_query_box")
    count = Ref{Int64}(0)
    check(ccall((:marquet_query_result_count, libmarquet), Int32, (Ptr{Cvoid}, Ref{Int64}), result[], count),
          "marquet_query_result_count")
    rows = Vector{Int64}(undef, count[])
    check(ccall((:marquet_query_result_rows, libmarquet), Int32, (Ptr{Cvoid}, Ptr{Int64}, Csize_t),
                result[], rows, length(rows)), "marquet_query_result_rows")
    ccall((:marquet_query_result_free, libmarquet), Cvoid, (Ptr{Cvoid},), result[])
    println("location intersects [-89 40 -88 41]: $(count[]) rows $(join(rows, ' '))")

    ccall((:marquet_table_free, libmarquet), Cvoid, (Ptr{Cvoid},), table[])
    ccall((:marquet_file_free, libmarquet), Cvoid, (Ptr{Cvoid},), file[])
end

path = isempty(ARGS) ? "stations_jl.h5" : ARGS[1]
write_stations(path)
read_stations(path)
