//! What the validator reads and how it names it, shared by the HEP001 and HEP002 checks:
//! attributes read with a finding on failure, datatype descriptions, tokens, references,
//! links, and which datatypes are Marquet's own.

use super::checks::Check;
use super::{lower, n, read_err, Ctx};
use crate::h5::{self, Dtype, RawAttr, Space};
use crate::spec::GeometryType;

/// Read an attribute; a reading error becomes a finding under `rule`.
pub(crate) fn attr(ctx: &mut Ctx, id: hdf5_sys::h5i::hid_t, path: &str, name: &str, rule: &'static str) -> Option<RawAttr> {
    match h5::attr_read(id, name) {
        Ok(a) => a,
        Err(e) => {
            ctx.sink.unreadable(rule, path, format!("attribute {name}: {}", read_err(&e)));
            None
        }
    }
}

/// Is `d` the exact null-terminated fixed-length ASCII string a producer writes for `value`?
pub(crate) fn is_strict_ascii(d: &Dtype, value: &str) -> bool {
    matches!(d, Dtype::FixedString { size, utf8: false, nullterm: true, .. } if *size == value.len() + 1)
}

pub(crate) fn describe(d: &Dtype) -> String {
    match d {
        Dtype::Int { size, signed, big_endian } => {
            format!("{}int{}{}", if *signed { "" } else { "u" }, size * 8, if *big_endian { " big-endian" } else { "" })
        }
        Dtype::Float { size, .. } => format!("float{}", size * 8),
        Dtype::FixedString { size, utf8, nullterm, .. } => format!(
            "fixed-length {} string of {size} bytes ({})",
            if *utf8 { "utf-8" } else { "ascii" },
            if *nullterm { "null-terminated" } else { "padded" }
        ),
        Dtype::VarString { .. } => "variable-length string".into(),
        Dtype::Enum { base, members } => format!("enumeration over {} with {} members", describe(base), members.len()),
        Dtype::Compound { fields, .. } => format!(
            "compound {{{}}}",
            fields.iter().map(|f| format!("{}: {}", f.name, describe(&f.dtype))).collect::<Vec<_>>().join(", ")
        ),
        Dtype::Opaque { size, tag } => format!("opaque of {size} bytes tagged {tag:?}"),
        Dtype::StdRef => "h5t_std_ref".into(),
        Dtype::ObjRef => "deprecated h5t_std_ref_obj".into(),
        Dtype::Other { class, .. } => class.to_lowercase(),
    }
}

/// A scalar unsigned-integer token (uint64 strictly; other unsigned widths warned, R3).
/// Returns the value when usable.
pub(crate) fn read_u64_token(
    ctx: &mut Ctx,
    id: hdf5_sys::h5i::hid_t,
    path: &str,
    name: &str,
    check: Check,
    required: bool,
) -> Option<u64> {
    let rule = check.rule;
    let Some(a) = attr(ctx, id, path, name, rule) else {
        if required {
            ctx.sink.error(check, path, format!("{} attribute is missing; expected a scalar uint64", name.to_lowercase()));
        }
        return None;
    };
    match (&a.dtype, &a.space) {
        (Dtype::Int { signed: false, size, .. }, Space::Scalar) => {
            if *size != 8 {
                ctx.sink.warn(rule, path, format!("{name} is {}, expected uint64 (accepted leniently, ruling r3)", describe(&a.dtype)));
            }
            a.as_u64()
        }
        (Dtype::Int { signed: true, .. }, Space::Scalar) if a.as_u64().is_some() => {
            ctx.sink.warn(rule, path, format!("{name} is {}, expected uint64 (accepted leniently, ruling r3)", describe(&a.dtype)));
            a.as_u64()
        }
        _ => {
            ctx.sink.error(
                check,
                path,
                format!("{} is {} {}, expected a scalar uint64", name.to_lowercase(), describe(&a.dtype), describe_space(&a.space)),
            );
            None
        }
    }
}

/// Read a reference attribute; checks `H5T_STD_REF` (HEP001 §5). Returns the element paths.
pub(crate) fn read_refs(
    ctx: &mut Ctx,
    id: hdf5_sys::h5i::hid_t,
    path: &str,
    name: &str,
    type_check: Check,
    rule: &'static str,
) -> Option<(Vec<Option<String>>, Space)> {
    match h5::attr_read_refs(id, name) {
        Ok(None) => None,
        Ok(Some((refs, dtype, space))) => {
            if dtype != Dtype::StdRef {
                ctx.sink.error(type_check, path, format!("{} has datatype {}, expected h5t_std_ref", name.to_lowercase(), describe(&dtype)));
            }
            Some((refs, space))
        }
        Err(e) => {
            ctx.sink.unreadable(rule, path, format!("{}: {}", name.to_lowercase(), read_err(&e)));
            None
        }
    }
}

/// The links of group `g`, with their kinds.
pub(crate) fn links(g: &hdf5::Group) -> Result<Vec<(String, Link)>, String> {
    let mut out = Vec::new();
    g.iter_visit_default(|name, info| {
        let k = match info.link_type {
            hdf5::LinkType::Soft => Link::Soft,
            hdf5::LinkType::External => Link::External,
            hdf5::LinkType::Hard => match g.loc_type_by_name(name) {
                Ok(hdf5::LocationType::Group) => Link::Group,
                Ok(hdf5::LocationType::Dataset) => Link::Dataset,
                Ok(hdf5::LocationType::NamedDatatype) => Link::Datatype,
                Ok(other) => Link::Unknown(format!("{other:?}").to_lowercase()),
                Err(e) => Link::Unknown(lower(&e.to_string())),
            },
        };
        out.push((name.to_string(), k));
        Ok(())
    })
    .map_err(|e| lower(&e.to_string()))?;
    Ok(out)
}

/// Is `d` a datatype HEP002 defines (req 17)?
pub(crate) fn is_marquet_datatype(d: &Dtype) -> bool {
    let box_field = |f: &str| {
        ["x", "y", "z", "m", "xmin", "ymin", "zmin", "mmin", "xmax", "ymax", "zmax", "mmax", "n", "null_count", "empty_count", "index"].contains(&f)
    };
    match d {
        Dtype::Enum { members, .. } => {
            !members.is_empty()
                && (members.iter().all(|(m, _)| GeometryType::from_name(m).is_some())
                    || members.iter().all(|(m, _)| n::EDGES_MEMBERS.iter().any(|(e, _)| e == m))
                    || members.iter().all(|(m, _)| m == n::ORIENTATION_COUNTERCLOCKWISE.0))
        }
        Dtype::Compound { fields, .. } => !fields.is_empty() && fields.iter().all(|f| box_field(&f.name)),
        Dtype::Opaque { tag, .. } => tag == n::OPAQUE_TAG_WKB,
        _ => false,
    }
}

/// Kind of a link below a group.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Link {
    Group,
    Dataset,
    Datatype,
    Soft,
    External,
    Unknown(String),
}

pub(crate) fn describe_space(s: &Space) -> String {
    match s {
        Space::Scalar => "scalar".into(),
        Space::Null => "null dataspace".into(),
        Space::Simple(d) => format!("shape {d:?}"),
    }
}
