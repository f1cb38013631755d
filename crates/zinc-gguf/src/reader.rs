//! Parsing a GGUF header from bytes (`ARCHITECTURES.md §1`).
//!
//! Invariant: nothing is allocated with a size read from the file before that size has been checked
//! against the bytes that remain. Every count is bounded by `remaining / smallest encoding`, every
//! string length by `remaining`, so a hostile header cannot make us reserve more memory than the
//! file itself occupies.

use std::collections::HashSet;

use zinc_quant::GgmlType;

use crate::error::{GgufError, Result};
use crate::value::{Array, Metadata, Value, ValueType};

pub const GGUF_MAGIC: [u8; 4] = *b"GGUF";
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// Smallest possible tensor-info record: name length, n_dims, type, offset (name and dims empty).
const MIN_TENSOR_INFO: u64 = 8 + 4 + 4 + 8;
/// Smallest possible key/value record: key length, value type, a one-byte value.
const MIN_KV: u64 = 8 + 4 + 1;
pub const MAX_DIMS: usize = 4;

/// One entry of the tensor table.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    /// Shape in ggml order: `dims[0]` is the contiguous (innermost) dimension.
    pub dims: Vec<u64>,
    pub ty: GgmlType,
    /// Offset of the data relative to the start of the data section.
    pub offset: u64,
    pub n_elements: u64,
    pub n_bytes: u64,
}

impl TensorInfo {
    /// Rows of `dims[0]` elements (the product of the outer dimensions).
    pub fn n_rows(&self) -> u64 {
        self.dims.iter().skip(1).product()
    }

    /// Bytes of one row of `dims[0]` elements.
    pub fn row_bytes(&self) -> u64 {
        self.ty
            .row_bytes(self.dims.first().copied().unwrap_or(1))
            .unwrap_or(0)
    }
}

/// Everything before the data section.
#[derive(Clone, Debug)]
pub struct Header {
    pub version: u32,
    pub metadata: Metadata,
    pub tensors: Vec<TensorInfo>,
    pub alignment: u64,
    /// Absolute byte offset of the data section.
    pub data_offset: u64,
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn remaining(&self) -> u64 {
        (self.buf.len() - self.pos) as u64
    }

    fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(GgufError::Truncated {
                what,
                offset: self.pos as u64,
                needed: n,
                available: self.remaining(),
            });
        }
        let n = n as usize;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let s = self.take(N as u64, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A count of items that each take at least `min_size` bytes.
    fn count(&mut self, what: &'static str, min_size: u64) -> Result<u64> {
        let offset = self.pos as u64;
        let count = self.u64(what)?;
        if count
            .checked_mul(min_size)
            .is_none_or(|b| b > self.remaining())
        {
            return Err(GgufError::CountTooLarge {
                what,
                count,
                offset,
                available: self.remaining(),
            });
        }
        Ok(count)
    }

    fn string(&mut self, what: &'static str) -> Result<String> {
        let len = self.u64(what)?;
        let offset = self.pos as u64;
        let bytes = self.take(len, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| GgufError::InvalidUtf8 { offset })
    }

    fn scalar(&mut self, ty: ValueType) -> Result<Value> {
        const W: &str = "metadata value";
        Ok(match ty {
            ValueType::U8 => Value::U8(self.array::<1>(W)?[0]),
            ValueType::I8 => Value::I8(self.array::<1>(W)?[0] as i8),
            ValueType::U16 => Value::U16(u16::from_le_bytes(self.array(W)?)),
            ValueType::I16 => Value::I16(i16::from_le_bytes(self.array(W)?)),
            ValueType::U32 => Value::U32(u32::from_le_bytes(self.array(W)?)),
            ValueType::I32 => Value::I32(i32::from_le_bytes(self.array(W)?)),
            ValueType::F32 => Value::F32(f32::from_le_bytes(self.array(W)?)),
            // Any non-zero byte is true, as in gguf.cpp.
            ValueType::Bool => Value::Bool(self.array::<1>(W)?[0] != 0),
            ValueType::String => Value::String(self.string("metadata string")?),
            ValueType::U64 => Value::U64(u64::from_le_bytes(self.array(W)?)),
            ValueType::I64 => Value::I64(i64::from_le_bytes(self.array(W)?)),
            ValueType::F64 => Value::F64(f64::from_le_bytes(self.array(W)?)),
            ValueType::Array => unreachable!("arrays are read by Cursor::value"),
        })
    }

    fn value(&mut self, key: &str, ty: ValueType) -> Result<Value> {
        if ty != ValueType::Array {
            return self.scalar(ty);
        }
        let type_id = self.u32("array element type")?;
        let elem = ValueType::from_id(type_id).ok_or_else(|| GgufError::UnknownValueType {
            key: key.to_string(),
            type_id,
        })?;
        if elem == ValueType::Array {
            return Err(GgufError::NestedArray {
                key: key.to_string(),
            });
        }
        // A string element is at least its 8-byte length.
        let min = elem.fixed_size().unwrap_or(8) as u64;
        let n = self.count("array element", min)? as usize;
        macro_rules! read_vec {
            ($variant:ident, $t:ty) => {{
                let bytes = self.take((n * std::mem::size_of::<$t>()) as u64, "array")?;
                Array::$variant(
                    bytes
                        .chunks_exact(std::mem::size_of::<$t>())
                        .map(|c| <$t>::from_le_bytes(c.try_into().expect("chunk size")))
                        .collect(),
                )
            }};
        }
        let array = match elem {
            ValueType::U8 => Array::U8(self.take(n as u64, "array")?.to_vec()),
            ValueType::I8 => Array::I8(
                self.take(n as u64, "array")?
                    .iter()
                    .map(|&b| b as i8)
                    .collect(),
            ),
            ValueType::Bool => Array::Bool(
                self.take(n as u64, "array")?
                    .iter()
                    .map(|&b| b != 0)
                    .collect(),
            ),
            ValueType::U16 => read_vec!(U16, u16),
            ValueType::I16 => read_vec!(I16, i16),
            ValueType::U32 => read_vec!(U32, u32),
            ValueType::I32 => read_vec!(I32, i32),
            ValueType::F32 => read_vec!(F32, f32),
            ValueType::U64 => read_vec!(U64, u64),
            ValueType::I64 => read_vec!(I64, i64),
            ValueType::F64 => read_vec!(F64, f64),
            ValueType::String => {
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(self.string("array string")?);
                }
                Array::String(v)
            }
            ValueType::Array => unreachable!("rejected above"),
        };
        Ok(Value::Array(array))
    }
}

/// Parses the header of a GGUF file held in `buf` (the whole file) and checks every tensor against
/// the file's length.
pub fn parse_header(buf: &[u8]) -> Result<Header> {
    let mut c = Cursor { buf, pos: 0 };
    let magic: [u8; 4] = c.array("magic")?;
    if magic != GGUF_MAGIC {
        return Err(GgufError::BadMagic(magic));
    }
    let version = c.u32("version")?;
    match version {
        2 | 3 => {}
        v if v & 0xFFFF == 0 => return Err(GgufError::WrongEndianness(v)),
        v => return Err(GgufError::UnsupportedVersion(v)),
    }
    let n_tensors = c.count("tensor", MIN_TENSOR_INFO)?;
    let n_kv = c.count("metadata key", MIN_KV)?;

    let mut metadata = Metadata::new();
    for _ in 0..n_kv {
        let key = c.string("metadata key")?;
        let type_id = c.u32("metadata value type")?;
        let ty = ValueType::from_id(type_id).ok_or_else(|| GgufError::UnknownValueType {
            key: key.clone(),
            type_id,
        })?;
        let value = c.value(&key, ty)?;
        metadata.insert(key, value)?;
    }

    let alignment = match metadata.get("general.alignment") {
        None => DEFAULT_ALIGNMENT,
        Some(v) => match v.as_int() {
            Some(a) if a > 0 && (a as u64).is_power_of_two() && a <= u32::MAX as i128 => a as u64,
            Some(a) => return Err(GgufError::BadAlignment(a.clamp(0, u64::MAX as i128) as u64)),
            None => {
                return Err(GgufError::WrongType {
                    key: "general.alignment".into(),
                    expected: "u32",
                    found: v.type_description(),
                })
            }
        },
    };

    let mut tensors = Vec::with_capacity(n_tensors as usize);
    let mut names = HashSet::with_capacity(n_tensors as usize);
    for _ in 0..n_tensors {
        let name = c.string("tensor name")?;
        let n_dims = c.u32("tensor dimension count")?;
        if n_dims as usize > MAX_DIMS {
            return Err(GgufError::TooManyDims { name, n_dims });
        }
        let mut dims = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            let d = c.u64("tensor dimension")? as i64;
            if d < 0 {
                return Err(GgufError::NegativeDim { name, dim: d });
            }
            dims.push(d as u64);
        }
        let type_id = c.u32("tensor type")?;
        let offset = c.u64("tensor offset")?;
        let ty = GgmlType::from_id(type_id).ok_or_else(|| GgufError::UnknownTensorType {
            name: name.clone(),
            type_id,
        })?;
        let n_elements = dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .filter(|&n| n <= i64::MAX as u64)
            .ok_or_else(|| GgufError::ShapeOverflow {
                name: name.clone(),
                dims: dims.clone(),
            })?;
        let ne0 = dims.first().copied().unwrap_or(1);
        let block = ty.block_size();
        if ne0 % block as u64 != 0 {
            return Err(GgufError::PartialBlock {
                name,
                ty,
                ne0,
                block,
            });
        }
        let n_bytes = ty
            .row_bytes(n_elements)
            .ok_or_else(|| GgufError::ShapeOverflow {
                name: name.clone(),
                dims: dims.clone(),
            })?;
        if !names.insert(name.clone()) {
            return Err(GgufError::DuplicateTensor(name));
        }
        tensors.push(TensorInfo {
            name,
            dims,
            ty,
            offset,
            n_elements,
            n_bytes,
        });
    }

    let header_end = c.pos as u64;
    let data_offset = header_end.div_ceil(alignment) * alignment;
    let file_len = buf.len() as u64;
    for t in &tensors {
        if t.offset % alignment != 0 {
            return Err(GgufError::MisalignedTensor {
                name: t.name.clone(),
                offset: t.offset,
                alignment,
            });
        }
        let end = data_offset
            .checked_add(t.offset)
            .and_then(|s| s.checked_add(t.n_bytes));
        match end {
            Some(end) if end <= file_len => {}
            end => {
                return Err(GgufError::TensorOutOfBounds {
                    name: t.name.clone(),
                    end: end.unwrap_or(u64::MAX),
                    file_len,
                })
            }
        }
    }

    Ok(Header {
        version,
        metadata,
        tensors,
        alignment,
        data_offset,
    })
}
