//! Mechanical checks of the foreign-language bindings against include/marquet.h, for
//! the languages CI cannot run (Julia) and as a second line for the one it can
//! (Fortran, whose `bind(c)` interfaces gfortran does not check against C):
//!
//! * every `ccall((:name, lib), Ret, (T1, ...), args...)` in examples/julia/*.jl names a
//!   function declared in the header, with as many argument types as C parameters, each
//!   type compatible with the C parameter type, a compatible return type, and as many
//!   arguments as types;
//! * every `bind(c, name="...")` interface in examples/fortran/*.f90 names a header
//!   function with the same number of dummy arguments, each declared with a compatible
//!   kind and passing mode, and the same return type;
//! * every `MARQUET_*` constant both define has the header's value.
//!
//! Written by hand rather than with a C parser crate: the header is cbindgen's regular
//! output (one declaration per `;`, no macros in prototypes), and the check must run
//! where no Julia and no libclang is installed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A C function prototype: return type and parameter types, normalized ("struct "
/// dropped, one space between tokens, stars joined: `const marquet_table *`,
/// `marquet_file **`).
#[derive(Debug, Clone, PartialEq)]
struct Proto {
    ret: String,
    params: Vec<String>,
}

/// The header with comments and preprocessor lines removed.
fn strip_c(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i + 2..].split_once("*/").map(|(_, r)| r).unwrap_or("");
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap())
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A C type (with or without a parameter name) in normal form.
fn norm_c_type(decl: &str, has_name: bool) -> String {
    let spaced = decl.replace('*', " * ");
    let mut toks: Vec<&str> = spaced.split_whitespace().filter(|t| *t != "struct").collect();
    if has_name && toks.len() > 1 && toks.last().is_some_and(|t| *t != "*") {
        toks.pop();
    }
    toks.join(" ").replace("* *", "**")
}

/// The `marquet_*` function prototypes of a header.
fn header_functions(header: &str) -> BTreeMap<String, Proto> {
    let mut out = BTreeMap::new();
    for piece in strip_c(header).split(';') {
        // Text after a brace: `extern "C" {` before the first prototype, enum bodies.
        let p = piece.rsplit(['{', '}']).next().unwrap().trim();
        if p.starts_with("typedef") || !p.ends_with(')') {
            continue;
        }
        let Some(open) = p.find('(') else { continue };
        let head = p[..open].trim();
        let Some(name_at) = head.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) else { continue };
        let name = &head[name_at + 1..];
        if !name.starts_with("marquet_") {
            continue;
        }
        let ret = norm_c_type(&head[..name_at + 1], false);
        let args = p[open + 1..p.len() - 1].trim();
        let params = if args == "void" || args.is_empty() {
            Vec::new()
        } else {
            args.split(',').map(|a| norm_c_type(a, true)).collect()
        };
        out.insert(name.to_string(), Proto { ret, params });
    }
    out
}

/// `NAME = value` enum constants of the header.
fn header_constants(header: &str) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for line in strip_c(header).lines() {
        let l = line.trim().trim_end_matches(',');
        if let Some((n, v)) = l.split_once(" = ") {
            if n.starts_with("MARQUET_") {
                if let Ok(v) = v.trim().parse() {
                    out.insert(n.trim().to_string(), v);
                }
            }
        }
    }
    out
}

/// Split `s` at commas outside (), {}, [] and string literals.
fn split_top(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let (mut depth, mut in_str, mut cur) = (0i32, false, String::new());
    for c in s.chars() {
        match c {
            '"' => in_str = !in_str,
            '(' | '{' | '[' if !in_str => depth += 1,
            ')' | '}' | ']' if !in_str => depth -= 1,
            ',' if !in_str && depth == 0 => {
                parts.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        parts.push(cur.trim().to_string());
    }
    parts
}

/// The text inside the parentheses that open at `s[0]`, or None when unbalanced.
fn inside_parens(s: &str) -> Option<&str> {
    let (mut depth, mut in_str) = (0i32, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '(' if !in_str => depth += 1,
            ')' if !in_str => {
                depth -= 1;
                if depth == 0 {
                    return Some(&s[1..i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Is the Julia type `jl` a correct way to pass / return the C type `c`?
fn julia_compatible(jl: &str, c: &str) -> bool {
    let handle = |c: &str, stars: &str| {
        let t = c.strip_prefix("const ").unwrap_or(c);
        t.strip_suffix(stars).is_some_and(|b| b.trim().starts_with("marquet_") && !b.contains('*'))
    };
    let ptr_to = |c: &str, base: &str| c == format!("{base} *") || c == format!("const {base} *");
    match jl {
        "Int32" | "Cint" => c == "int32_t",
        "Int64" => c == "int64_t",
        "Csize_t" | "UInt" => c == "size_t",
        "Float64" | "Cdouble" => c == "double",
        "UInt8" => c == "uint8_t",
        "Cvoid" | "Nothing" => c == "void",
        "Cstring" => c == "const char *",
        "Ptr{Cvoid}" => handle(c, " *") || ptr_to(c, "void"),
        "Ref{Ptr{Cvoid}}" | "Ptr{Ptr{Cvoid}}" => handle(c, " **"),
        "Ptr{UInt8}" => ptr_to(c, "uint8_t") || ptr_to(c, "char"),
        "Ptr{Cchar}" | "Ptr{Int8}" => ptr_to(c, "char"),
        "Ptr{Int32}" | "Ref{Int32}" => ptr_to(c, "int32_t"),
        "Ptr{Int64}" | "Ref{Int64}" => ptr_to(c, "int64_t"),
        "Ptr{Csize_t}" | "Ref{Csize_t}" => ptr_to(c, "size_t"),
        "Ptr{Float64}" | "Ref{Float64}" | "Ptr{Cdouble}" => ptr_to(c, "double"),
        _ => false,
    }
}

/// Problems of the `ccall`s and constants in a Julia source, against the header.
fn check_julia(src: &str, file: &str, funcs: &BTreeMap<String, Proto>, consts: &BTreeMap<String, i64>) -> (usize, Vec<String>) {
    let mut errs = Vec::new();
    let mut n = 0;
    for (at, _) in src.match_indices("ccall(") {
        let line = src[..at].matches('\n').count() + 1;
        let Some(body) = inside_parens(&src[at + 5..]) else {
            errs.push(format!("{file}:{line}: unbalanced ccall"));
            continue;
        };
        let parts = split_top(body);
        if parts.len() < 3 {
            errs.push(format!("{file}:{line}: ccall with {} parts", parts.len()));
            continue;
        }
        let target = parts[0].trim_start_matches('(').trim_end_matches(')');
        let name = target.split(',').next().unwrap().trim().trim_start_matches(':');
        n += 1;
        let Some(proto) = funcs.get(name) else {
            errs.push(format!("{file}:{line}: {name} is not declared in include/marquet.h"));
            continue;
        };
        if !julia_compatible(&parts[1], &proto.ret) {
            errs.push(format!("{file}:{line}: {name} returns {:?} in C, ccall says {}", proto.ret, parts[1]));
        }
        let tuple = parts[2].trim();
        let types = match tuple.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
            Some(t) => split_top(t),
            None => {
                errs.push(format!("{file}:{line}: {name}: argument types {tuple} are not a tuple"));
                continue;
            }
        };
        if types.len() != proto.params.len() {
            errs.push(format!("{file}:{line}: {name} takes {} arguments in C, ccall declares {}", proto.params.len(), types.len()));
            continue;
        }
        for (i, (jl, c)) in types.iter().zip(&proto.params).enumerate() {
            if !julia_compatible(jl, c) {
                errs.push(format!("{file}:{line}: {name} argument {}: C {c:?} vs Julia {jl}", i + 1));
            }
        }
        if parts.len() - 3 != types.len() {
            errs.push(format!("{file}:{line}: {name}: {} argument types but {} arguments", types.len(), parts.len() - 3));
        }
    }
    // const MARQUET_X = Int32(v)
    for l in src.lines() {
        if let Some(rest) = l.trim().strip_prefix("const MARQUET_") {
            let (n, v) = rest.split_once('=').unwrap_or((rest, ""));
            let name = format!("MARQUET_{}", n.trim());
            let v = v.trim().trim_start_matches("Int32(").trim_end_matches(')');
            match (consts.get(&name), v.parse::<i64>()) {
                (Some(h), Ok(j)) if *h == j => {}
                (h, j) => errs.push(format!("{file}: {name} = {j:?} in Julia, {h:?} in the header")),
            }
        }
    }
    (n, errs)
}

/// One dummy argument of a Fortran interface: its declaration line.
fn fortran_compatible(decl: &str, c: &str) -> bool {
    let d = decl.to_ascii_lowercase().replace(' ', "");
    let by_value = d.contains(",value");
    let array_or_ref = !by_value;
    let ptr_to = |base: &str| c == format!("{base} *") || c == format!("const {base} *");
    let handle = |stars: &str| {
        let t = c.strip_prefix("const ").unwrap_or(c);
        t.strip_suffix(stars).is_some_and(|b| b.trim().starts_with("marquet_") && !b.contains('*'))
    };
    if d.starts_with("type(c_ptr)") {
        // By value: any pointer (handles, or C_NULL_PTR for optional arrays); by
        // reference: a handle output.
        return if by_value { c.ends_with(" *") && !c.ends_with("**") } else { handle(" **") };
    }
    if d.starts_with("character(kind=c_char)") {
        return array_or_ref && ptr_to("char");
    }
    let scalar = |base: &str| if by_value { c == base } else { ptr_to(base) };
    if d.starts_with("integer(c_int32_t)") {
        return scalar("int32_t");
    }
    if d.starts_with("integer(c_int64_t)") {
        return scalar("int64_t");
    }
    if d.starts_with("integer(c_size_t)") {
        return scalar("size_t");
    }
    if d.starts_with("integer(c_int8_t)") {
        return array_or_ref && ptr_to("uint8_t");
    }
    if d.starts_with("real(c_double)") {
        return scalar("double");
    }
    false
}

/// Problems of the `bind(c)` interfaces of a Fortran source, against the header.
fn check_fortran(src: &str, file: &str, funcs: &BTreeMap<String, Proto>) -> (usize, Vec<String>) {
    let mut errs = Vec::new();
    let mut n = 0;
    // Join continuation lines, drop comments.
    let joined = src.lines().map(|l| l.split('!').next().unwrap()).collect::<Vec<_>>().join("\n").replace("&\n", " ");
    let lines: Vec<&str> = joined.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        let lower = l.to_ascii_lowercase();
        let is_sub = lower.starts_with("subroutine ");
        if !(lower.starts_with("function ") || is_sub) || !lower.contains("bind(c") {
            i += 1;
            continue;
        }
        let Some(cname) = l.split("name=\"").nth(1).and_then(|r| r.split('"').next()) else {
            errs.push(format!("{file}: {l}: bind(c) without name="));
            i += 1;
            continue;
        };
        n += 1;
        let fname = l.split_whitespace().nth(1).unwrap().split('(').next().unwrap().to_ascii_lowercase();
        let dummies: Vec<String> = l
            .split_once('(')
            .and_then(|(_, r)| r.split_once(')'))
            .map(|(a, _)| a.split(',').map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()).collect())
            .unwrap_or_default();
        // The declarations up to the end of this interface body.
        let mut decls: BTreeMap<String, String> = BTreeMap::new();
        i += 1;
        while i < lines.len() && !lines[i].trim().to_ascii_lowercase().starts_with("end ") {
            if let Some((ty, names)) = lines[i].split_once("::") {
                for nm in names.split(',') {
                    decls.insert(nm.trim().to_ascii_lowercase(), ty.trim().to_string());
                }
            }
            i += 1;
        }
        let Some(proto) = funcs.get(cname) else {
            errs.push(format!("{file}: {cname} is not declared in include/marquet.h"));
            continue;
        };
        let ret_ok = if is_sub {
            proto.ret == "void"
        } else {
            decls.get(&fname).is_some_and(|t| fortran_compatible(&format!("{t}, value"), &proto.ret))
        };
        if !ret_ok {
            errs.push(format!("{file}: {cname} returns {:?} in C", proto.ret));
        }
        if dummies.len() != proto.params.len() {
            errs.push(format!("{file}: {cname} takes {} arguments in C, the interface has {}", proto.params.len(), dummies.len()));
            continue;
        }
        for (k, (d, c)) in dummies.iter().zip(&proto.params).enumerate() {
            match decls.get(d) {
                Some(t) if fortran_compatible(t, c) => {}
                t => errs.push(format!("{file}: {cname} argument {} ({d}): C {c:?} vs Fortran {t:?}", k + 1)),
            }
        }
    }
    (n, errs)
}

fn header() -> String {
    std::fs::read_to_string(root().join("include/marquet.h")).unwrap()
}

fn sources(dir: &str, ext: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    v.sort();
    v
}

#[test]
fn header_parser_reads_prototypes_and_constants() {
    let h = header();
    let f = header_functions(&h);
    assert_eq!(f["marquet_version"], Proto { ret: "const char *".into(), params: vec![] });
    assert_eq!(
        f["marquet_table_open"],
        Proto {
            ret: "int32_t".into(),
            params: vec!["const marquet_file *".into(), "const char *".into(), "size_t".into(), "marquet_table **".into()]
        }
    );
    assert_eq!(f["marquet_query_result_free"], Proto { ret: "void".into(), params: vec!["marquet_query_result *".into()] });
    // Every entry point of capi/src is found (c_api.rs counts at least 60 there).
    assert!(f.len() >= 80, "{} prototypes", f.len());
    let c = header_constants(&h);
    assert_eq!(c["MARQUET_STATUS_PANIC"], 900);
    assert_eq!(c["MARQUET_PREDICATE_BBOX"], 4);
    assert_eq!(c["MARQUET_FORM_POINT"], 3);
}

#[test]
fn julia_ccalls_match_the_header() {
    let h = header();
    let (funcs, consts) = (header_functions(&h), header_constants(&h));
    let files = sources("examples/julia", "jl");
    assert!(!files.is_empty());
    let mut total = 0;
    for (path, src) in files {
        let (n, errs) = check_julia(&src, &path, &funcs, &consts);
        assert!(errs.is_empty(), "{}", errs.join("\n"));
        total += n;
    }
    // examples/julia/stations.jl: 25 ccalls (writes, reads, queries).
    assert_eq!(total, 25);
}

/// `#define MARQUET_* value` lines of the header (the version macros).
fn header_defines(header: &str) -> BTreeMap<String, String> {
    header
        .lines()
        .filter_map(|l| l.strip_prefix("#define MARQUET_"))
        .filter_map(|l| l.split_once(' '))
        .map(|(n, v)| (format!("MARQUET_{n}"), v.trim().to_string()))
        .collect()
}

/// The C names of a Fortran source's `bind(c, name="...")` interfaces.
fn fortran_bound_names(src: &str) -> Vec<String> {
    src.lines()
        .map(|l| l.split('!').next().unwrap())
        .filter_map(|l| l.split("bind(c, name=\"").nth(1))
        .filter_map(|r| r.split('"').next())
        .filter(|n| n.starts_with("marquet_"))
        .map(str::to_string)
        .collect()
}

/// `MARQUET_*` parameters of a Fortran source: name → value as written.
fn fortran_parameters(src: &str) -> BTreeMap<String, String> {
    src.lines()
        .map(|l| l.split('!').next().unwrap())
        .filter(|l| l.to_ascii_lowercase().contains(", parameter ::"))
        .filter_map(|l| l.split_once("::").map(|(_, r)| r))
        .filter_map(|r| r.split_once('='))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .filter(|(n, _)| n.starts_with("MARQUET_"))
        .collect()
}

/// include/marquet.f90, the Fortran module shipped with the library: an interface for
/// every header function, each matching its prototype, and every header constant and
/// version macro as a parameter of the same value.
#[test]
fn fortran_module_binds_every_function_and_constant() {
    let h = header();
    let funcs = header_functions(&h);
    let path = root().join("include/marquet.f90");
    let src = std::fs::read_to_string(&path).unwrap();
    let (n, errs) = check_fortran(&src, &path.display().to_string(), &funcs);
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    let bound = fortran_bound_names(&src);
    let mut unique = bound.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), bound.len(), "a function is bound twice");
    let missing: Vec<&String> = funcs.keys().filter(|f| !unique.contains(f)).collect();
    assert!(missing.is_empty(), "include/marquet.f90 lacks interfaces for {missing:?}");
    assert_eq!(n, funcs.len());
    assert!(n >= 88, "{n} interfaces");

    let params = fortran_parameters(&src);
    let mut want: BTreeMap<String, String> = header_constants(&h).into_iter().map(|(k, v)| (k, v.to_string())).collect();
    want.extend(header_defines(&h));
    assert!(want.contains_key("MARQUET_VERSION_STRING") && want.contains_key("MARQUET_STATUS_OK"));
    assert_eq!(params, want, "MARQUET_* parameters of include/marquet.f90 vs the header");
}

/// Interfaces the examples declare themselves (none today: they use the module) must
/// match the header too.
#[test]
fn fortran_example_interfaces_match_the_header() {
    let funcs = header_functions(&header());
    let files = sources("examples/fortran", "f90");
    assert!(!files.is_empty());
    for (path, src) in files {
        let (_, errs) = check_fortran(&src, &path, &funcs);
        assert!(errs.is_empty(), "{}", errs.join("\n"));
        assert!(src.contains("use marquet"), "{path} should use the shipped module");
    }
}

#[test]
fn the_checkers_catch_mismatches() {
    let h = header();
    let (funcs, consts) = (header_functions(&h), header_constants(&h));
    let jl = r#"
const MARQUET_FORM_POINT = Int32(2)
ccall((:marquet_table_nrows, lib), Int32, (Ptr{Cvoid},), t)
ccall((:marquet_table_nrows, lib), Int32, (Ptr{Cvoid}, Ref{Int32}), t, n)
ccall((:marquet_table_nrow, lib), Int32, (Ptr{Cvoid}, Ref{Int64}), t, n)
ccall((:marquet_version, lib), Int32, ())
ccall((:marquet_table_nrows, lib), Int32, (Ptr{Cvoid}, Ref{Int64}), t)
ccall((:marquet_table_nrows, lib), Int32, (Ptr{Cvoid}, Ref{Int64}), t, n)
"#;
    let (n, errs) = check_julia(jl, "x.jl", &funcs, &consts);
    assert_eq!(n, 6);
    assert_eq!(
        errs,
        [
            "x.jl:3: marquet_table_nrows takes 2 arguments in C, ccall declares 1",
            "x.jl:4: marquet_table_nrows argument 2: C \"int64_t *\" vs Julia Ref{Int32}",
            "x.jl:5: marquet_table_nrow is not declared in include/marquet.h",
            "x.jl:6: marquet_version returns \"const char *\" in C, ccall says Int32",
            "x.jl:7: marquet_table_nrows: 2 argument types but 1 arguments",
            "x.jl: MARQUET_FORM_POINT = Ok(2) in Julia, Some(3) in the header",
        ]
    );
    let f90 = r#"
    function marquet_table_nrows(table, nrows) bind(c, name="marquet_table_nrows")
      type(c_ptr), value :: table
      integer(c_int64_t), value :: nrows
      integer(c_int32_t) :: marquet_table_nrows
    end function
    subroutine marquet_file_free(file, x) bind(c, name="marquet_file_free")
      type(c_ptr), value :: file
    end subroutine
    function marquet_version() bind(c, name="marquet_version")
      integer(c_int32_t) :: marquet_version
    end function
"#;
    let (n, errs) = check_fortran(f90, "x.f90", &funcs);
    assert_eq!(n, 3);
    assert_eq!(
        errs,
        [
            "x.f90: marquet_table_nrows argument 2 (nrows): C \"int64_t *\" vs Fortran Some(\"integer(c_int64_t), value\")",
            "x.f90: marquet_file_free takes 1 arguments in C, the interface has 2",
            "x.f90: marquet_version returns \"const char *\" in C",
        ]
    );
    assert_eq!(fortran_bound_names(f90), ["marquet_table_nrows", "marquet_file_free", "marquet_version"]);
    let params = fortran_parameters(
        "  integer(c_int32_t), parameter :: MARQUET_FORM_POINT = 2 ! wrong\n  character(len=*), parameter :: MARQUET_VERSION_STRING = \"9.9.9\"\n  integer :: other = 1\n",
    );
    assert_eq!(params.len(), 2);
    assert_eq!(params["MARQUET_FORM_POINT"], "2");
    assert_ne!(params["MARQUET_FORM_POINT"], header_constants(&h)["MARQUET_FORM_POINT"].to_string());
    assert_eq!(params["MARQUET_VERSION_STRING"], "\"9.9.9\"");
}
