//! The GGUF container: a memory-mapped reader with zero-copy tensor views, typed metadata,
//! split models opened as one, and a writer (`ARCHITECTURES.md §1`).
//!
//! Reading never trusts the header: every count and length is checked against the bytes left in
//! the file before anything is allocated, and every tensor must lie inside the file.

mod error;
mod file;
mod reader;
mod value;
mod writer;

pub use error::{GgufError, Result};
pub use file::{
    parse_split_name, split_path, GgufFile, GgufModel, Tensor, KEY_SPLIT_COUNT, KEY_SPLIT_NO,
    KEY_SPLIT_TENSORS_COUNT,
};
pub use reader::{parse_header, Header, TensorInfo, DEFAULT_ALIGNMENT, GGUF_MAGIC};
pub use value::{Array, Metadata, Value, ValueType};
pub use writer::{FillFn, GgufWriter, TensorData};
pub use zinc_quant::GgmlType;

#[cfg(test)]
mod tests;
