//! Struct columns flattened on import (`parent.child` columns whose `arrow_field`
//! attribute records the field names from the root, [`crate::spec::names::ARROW_FIELD`])
//! nested again into Arrow structs on export (issue #22).
//!
//! The children keep their column order; a struct field sits where its first child was. A
//! struct row is null when every child is null (import gives a null struct's children
//! nulls, so a null struct and one whose fields are all null come back the same: null).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields};

use crate::error::{MarquetError, Result};

/// One output field: a flat column, or a struct of nodes.
#[derive(Debug, Clone)]
pub enum Node {
    /// Flat column `index`, as `field`.
    Leaf(usize, Field),
    /// A struct field of `name`.
    Struct(String, Vec<Node>),
}

impl Node {
    /// The Arrow field of this node.
    pub fn field(&self) -> Field {
        match self {
            Node::Leaf(_, f) => f.clone(),
            Node::Struct(name, kids) => Field::new(name, DataType::Struct(kids.iter().map(Node::field).collect::<Fields>()), true),
        }
    }

    /// The array of this node from the flat columns' arrays.
    pub fn array(&self, flat: &[ArrayRef]) -> Result<ArrayRef> {
        match self {
            Node::Leaf(i, _) => flat.get(*i).cloned().ok_or_else(|| MarquetError::InvalidArgument(format!("no flat column {i}"))),
            Node::Struct(name, kids) => {
                let arrays: Vec<ArrayRef> = kids.iter().map(|k| k.array(flat)).collect::<Result<_>>()?;
                let fields: Fields = kids.iter().map(Node::field).collect();
                let n = arrays.first().map(|a| a.len()).unwrap_or(0);
                let valid: Vec<bool> = (0..n).map(|r| arrays.iter().any(|a| a.is_valid(r))).collect();
                let nulls = valid.iter().any(|v| !v).then(|| NullBuffer::from(valid));
                let s = StructArray::try_new(fields, arrays, nulls)
                    .map_err(|e| MarquetError::Unsupported(format!("struct column {name:?}: {e}")))?;
                Ok(Arc::new(s))
            }
        }
    }
}

/// The nodes of flat `fields` whose struct paths are `paths` (`None`, or a path of one
/// name: a column of its own): children of the same parent are gathered into one struct,
/// named by the last name of their path.
///
/// A struct is never given the name of a field of its own at the same level (issue #32: an
/// Overture `bbox` struct imported as `bbox.xmin` … columns next to a covering column
/// `bbox`): children whose path runs through another column's full path stay flat
/// columns, so no level of the result has two fields with one name.
pub fn nest(fields: &[Field], paths: &[Option<Vec<String>>]) -> Vec<Node> {
    let full = |i: usize, f: &Field| -> Vec<String> {
        match paths.get(i).cloned().flatten() {
            Some(p) if !p.is_empty() => p,
            _ => vec![f.name().clone()],
        }
    };
    let all: std::collections::HashSet<Vec<String>> = fields.iter().enumerate().map(|(i, f)| full(i, f)).collect();
    let mut top: Vec<Node> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        match paths.get(i).cloned().flatten() {
            Some(p) if p.len() > 1 && !(1..p.len()).any(|k| all.contains(&p[..k])) => insert(&mut top, &p, i, f),
            _ => top.push(Node::Leaf(i, f.clone())),
        }
    }
    top
}

fn insert(level: &mut Vec<Node>, path: &[String], i: usize, f: &Field) {
    if path.len() == 1 {
        level.push(Node::Leaf(i, f.clone().with_name(path[0].clone())));
        return;
    }
    let pos = level.iter().position(|n| matches!(n, Node::Struct(name, _) if *name == path[0]));
    let pos = match pos {
        Some(p) => p,
        None => {
            level.push(Node::Struct(path[0].clone(), Vec::new()));
            level.len() - 1
        }
    };
    if let Node::Struct(_, kids) = &mut level[pos] {
        insert(kids, &path[1..], i, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::{Int32Array, StringArray};

    #[test]
    fn a_struct_never_takes_the_name_of_a_column() {
        let p = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let fields = [
            Field::new("bbox", DataType::Int32, true),
            Field::new("bbox.xmin", DataType::Utf8, true),
            Field::new("names.primary", DataType::Utf8, true),
        ];
        let nodes = nest(&fields, &[None, p(&["bbox", "xmin"]), p(&["names", "primary"])]);
        let names: Vec<String> = nodes.iter().map(|n| n.field().name().clone()).collect();
        assert_eq!(names, ["bbox", "bbox.xmin", "names"]);
    }

    #[test]
    fn children_gathered_under_their_parents() {
        let fields = vec![
            Field::new("id", DataType::Int32, true),
            Field::new("names.primary", DataType::Utf8, true),
            Field::new("names.x.y", DataType::Int32, true),
            Field::new("names.common", DataType::Utf8, true),
        ];
        let p = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let nodes = nest(&fields, &[None, p(&["names", "primary"]), p(&["names", "x", "y"]), p(&["names", "common"])]);
        assert_eq!(nodes.len(), 2);
        let f = nodes[1].field();
        assert_eq!(f.to_string().matches("primary").count(), 1);
        let DataType::Struct(kids) = f.data_type() else { panic!() };
        assert_eq!(kids.iter().map(|k| k.name().as_str()).collect::<Vec<_>>(), ["primary", "x", "common"]);
        let flat: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![1, 2])),
            Arc::new(StringArray::from(vec![Some("a"), None])),
            Arc::new(Int32Array::from(vec![Some(5), None])),
            Arc::new(StringArray::from(vec![None::<&str>, None])),
        ];
        let a = nodes[1].array(&flat).unwrap();
        let s = a.as_struct();
        assert!(s.is_valid(0) && s.is_null(1));
        assert_eq!(s.column(0).as_string::<i32>().value(0), "a");
        assert_eq!(s.column(1).as_struct().column(0).as_primitive::<arrow_array::types::Int32Type>().value(0), 5);
    }
}
