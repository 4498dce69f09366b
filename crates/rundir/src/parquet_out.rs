//! Writing column tables as Parquet files.

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use traffic::Column;

/// Rows per row group: bounded memory for long series.
const ROW_GROUP: usize = 1 << 20;

pub fn write(path: &Path, columns: &[(&str, &Column)]) -> Result<(), String> {
    let fields: Vec<String> = columns
        .iter()
        .map(|(name, c)| {
            let t = match c {
                Column::F64(_) => "DOUBLE",
                Column::I64(_) => "INT64",
                Column::Bool(_) => "BOOLEAN",
                Column::Str(_) => "BYTE_ARRAY",
            };
            let ann = if matches!(c, Column::Str(_)) { " (UTF8)" } else { "" };
            format!("REQUIRED {t} {name}{ann};")
        })
        .collect();
    let schema = parse_message_type(&format!("message records {{ {} }}", fields.join(" "))).map_err(|e| e.to_string())?;
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).set_created_by("undertow".into()).build();
    let file = File::create(path).map_err(|e| e.to_string())?;
    let mut w = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).map_err(|e| e.to_string())?;
    let rows = columns.first().map_or(0, |(_, c)| c.len());
    let mut at = 0;
    loop {
        let end = (at + ROW_GROUP).min(rows);
        let mut rg = w.next_row_group().map_err(|e| e.to_string())?;
        for (_, c) in columns {
            let mut col = rg.next_column().map_err(|e| e.to_string())?.ok_or("schema has fewer columns than data")?;
            match c {
                Column::F64(v) => col.typed::<DoubleType>().write_batch(&v[at..end], None, None),
                Column::I64(v) => col.typed::<Int64Type>().write_batch(&v[at..end], None, None),
                Column::Bool(v) => col.typed::<BoolType>().write_batch(&v[at..end], None, None),
                Column::Str(v) => {
                    let b: Vec<ByteArray> = v[at..end].iter().map(|s| ByteArray::from(s.as_str())).collect();
                    col.typed::<ByteArrayType>().write_batch(&b, None, None)
                }
            }
            .map_err(|e| e.to_string())?;
            col.close().map_err(|e| e.to_string())?;
        }
        rg.close().map_err(|e| e.to_string())?;
        at = end;
        if at >= rows {
            break;
        }
    }
    w.close().map_err(|e| e.to_string())?;
    Ok(())
}
