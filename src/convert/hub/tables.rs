//! Finding the Marquet tables of a file.

use crate::error::{MarquetError, Result};
use crate::h5col::File;

/// The only Marquet table of `file`, or an error listing them.
pub fn single_table_of(file: &File) -> Result<String> {
    let mut marquet = Vec::new();
    for t in file.tables()? {
        if let Ok(tab) = file.table(&t) {
            if crate::marquet::is_marquet_table(&tab)? {
                marquet.push(t);
            }
        }
    }
    match marquet.len() {
        1 => Ok(marquet.remove(0)),
        0 => Err(MarquetError::InvalidArgument(format!("{}: no Marquet table in the file", file.filename()))),
        _ => Err(MarquetError::InvalidArgument(format!(
            "{}: several Marquet tables ({}); choose one with --table (Rust: ConvertOptions::table)",
            file.filename(),
            marquet.join(", ")
        ))),
    }
}

