//! The CRS in the Parquet GEOMETRY / GEOGRAPHY logical type of a GeoParquet 2.0 export
//! (issue #22).
//!
//! The Parquet writer turns the `geoarrow.wkb` field metadata into the logical type, but
//! leaves the CRS out for OGC:CRS84 / EPSG:4326 (Parquet's default). Readers that take the
//! CRS from the logical type alone then see none (DuckDB's `ST_CRS` is NULL). So the export
//! writes it explicitly, as the PROJJSON document of HEP002 §8.4, inline, as DuckDB's own
//! writer does. Other CRSs already reach the logical type as their PROJJSON text.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::Schema;
use parquet::arrow::ArrowSchemaConverter;
use parquet::basic::LogicalType;
use parquet::schema::types::{SchemaDescriptor, Type};

use crate::convert::err_at;
use crate::error::Result;
use crate::marquet::types::CRS84_PROJJSON;
use crate::marquet::{Crs, GeometryColumnInfo};

/// The Parquet schema of `schema` with the OGC:CRS84 PROJJSON in the logical type of every
/// geometry column whose CRS is the default (or an equivalent); `None` when no column
/// needs it.
pub(crate) fn schema_with_lonlat_crs(schema: &Schema, infos: &HashMap<String, GeometryColumnInfo>, path: &str) -> Result<Option<SchemaDescriptor>> {
    let descr = ArrowSchemaConverter::new().convert(schema).map_err(|e| err_at(path, e))?;
    let root = descr.root_schema();
    let mut changed = false;
    let mut fields = Vec::with_capacity(root.get_fields().len());
    for f in root.get_fields() {
        // The default CRS as HEP002 §8.4's document; a PROJJSON whose id is OGC:CRS84 or
        // EPSG:4326 (which the writer also drops) as itself, the same document as in `geo`.
        let doc = match infos.get(f.name()).map(|i| &i.crs) {
            Some(Crs::Default) => Some(CRS84_PROJJSON.to_string()),
            Some(c @ Crs::ProjJson(d)) if crate::crs::is_crs84(c) => Some(d.clone()),
            _ => None,
        };
        let lt = if f.is_primitive() && doc.is_some() { f.get_basic_info().logical_type_ref().cloned() } else { None };
        let new_lt = match lt {
            Some(LogicalType::Geometry(g)) if g.crs.is_none() => LogicalType::geometry(doc),
            Some(LogicalType::Geography(g)) if g.crs.is_none() => LogicalType::geography(doc, g.algorithm),
            _ => {
                fields.push(f.clone());
                continue;
            }
        };
        let info = f.get_basic_info();
        let t = Type::primitive_type_builder(f.name(), f.get_physical_type())
            .with_repetition(info.repetition())
            .with_logical_type(Some(new_lt))
            .with_id(info.has_id().then(|| info.id()))
            .build()
            .map_err(|e| err_at(path, e))?;
        fields.push(Arc::new(t));
        changed = true;
    }
    if !changed {
        return Ok(None);
    }
    let root = Type::group_type_builder(root.name()).with_fields(fields).build().map_err(|e| err_at(path, e))?;
    Ok(Some(SchemaDescriptor::new(Arc::new(root))))
}
