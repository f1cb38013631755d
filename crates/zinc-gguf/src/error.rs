use std::path::PathBuf;

use zinc_quant::GgmlType;

/// Everything that can be wrong with a GGUF file or a request to read one.
///
/// Parse errors carry the byte offset where the problem was found; `GgufError::InFile` adds the
/// path once the error leaves the file it came from.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    // The inner error is shown inline (not as a `source`) so a message is one line.
    #[error("{}: {err}", path.display())]
    Io { path: PathBuf, err: std::io::Error },
    #[error("{}: {err}", path.display())]
    InFile { path: PathBuf, err: Box<GgufError> },
    #[error("not a GGUF file: magic bytes are {0:02x?}, expected \"GGUF\"")]
    BadMagic([u8; 4]),
    #[error("GGUF version {0} is not supported (versions 2 and 3 are)")]
    UnsupportedVersion(u32),
    #[error(
        "GGUF version field {0:#x} looks byte-swapped: big-endian GGUF files are not supported"
    )]
    WrongEndianness(u32),
    #[error("file is truncated: {what} at byte {offset} needs {needed} bytes, {available} remain")]
    Truncated {
        what: &'static str,
        offset: u64,
        needed: u64,
        available: u64,
    },
    #[error("{what} count {count} at byte {offset} cannot fit in the {available} bytes left in the file")]
    CountTooLarge {
        what: &'static str,
        count: u64,
        offset: u64,
        available: u64,
    },
    #[error("string at byte {offset} is not valid UTF-8")]
    InvalidUtf8 { offset: u64 },
    #[error("metadata key {key:?} has unknown value type {type_id}")]
    UnknownValueType { key: String, type_id: u32 },
    #[error("metadata key {key:?} holds an array of arrays, which GGUF does not allow")]
    NestedArray { key: String },
    #[error("metadata key {0:?} appears twice")]
    DuplicateKey(String),
    #[error("tensor {0:?} appears twice")]
    DuplicateTensor(String),
    #[error("tensor {name:?} has {n_dims} dimensions; at most 4 are allowed")]
    TooManyDims { name: String, n_dims: u32 },
    #[error("tensor {name:?} has a negative dimension {dim}")]
    NegativeDim { name: String, dim: i64 },
    #[error("tensor {name:?}: the element count of shape {dims:?} overflows")]
    ShapeOverflow { name: String, dims: Vec<u64> },
    #[error("tensor {name:?} has unknown type id {type_id}")]
    UnknownTensorType { name: String, type_id: u32 },
    #[error(
        "tensor {name:?}: first dimension {ne0} is not a multiple of the {ty} block size {block}"
    )]
    PartialBlock {
        name: String,
        ty: GgmlType,
        ne0: u64,
        block: usize,
    },
    #[error("general.alignment = {0} is not a power of two")]
    BadAlignment(u64),
    #[error(
        "tensor {name:?}: data offset {offset} is not a multiple of the alignment {alignment}"
    )]
    MisalignedTensor {
        name: String,
        offset: u64,
        alignment: u64,
    },
    #[error(
        "tensor {name:?}: data ends at byte {end}, past the end of the file ({file_len} bytes)"
    )]
    TensorOutOfBounds {
        name: String,
        end: u64,
        file_len: u64,
    },
    #[error("metadata key {0:?} is missing")]
    MissingKey(String),
    #[error("metadata key {key:?} is {found}, expected {expected}")]
    WrongType {
        key: String,
        expected: &'static str,
        found: String,
    },
    #[error("tensor {0:?} is missing")]
    MissingTensor(String),
    #[error("split model: {0}")]
    Split(String),
    #[error("writer: {0}")]
    Writer(String),
}

impl GgufError {
    pub(crate) fn in_file(self, path: &std::path::Path) -> GgufError {
        match self {
            e @ (GgufError::Io { .. } | GgufError::InFile { .. }) => e,
            e => GgufError::InFile {
                path: path.to_path_buf(),
                err: Box::new(e),
            },
        }
    }

    pub(crate) fn io(path: &std::path::Path, err: std::io::Error) -> GgufError {
        GgufError::Io {
            path: path.to_path_buf(),
            err,
        }
    }

    /// The error itself, without the file it was found in.
    pub fn root(&self) -> &GgufError {
        match self {
            GgufError::InFile { err, .. } => err.root(),
            e => e,
        }
    }
}

pub type Result<T, E = GgufError> = std::result::Result<T, E>;
