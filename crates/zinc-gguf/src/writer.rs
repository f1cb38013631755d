//! Writing GGUF v3 files, whole or split into shards the way `llama-gguf-split` does.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use zinc_quant::GgmlType;

use crate::error::{GgufError, Result};
use crate::file::{split_path, KEY_SPLIT_COUNT, KEY_SPLIT_NO, KEY_SPLIT_TENSORS_COUNT};
use crate::reader::{DEFAULT_ALIGNMENT, GGUF_MAGIC, MAX_DIMS};
use crate::value::{Array, Metadata, Value};

/// Fills a buffer of exactly a tensor's size with its bytes.
pub type FillFn = Box<dyn Fn(&mut [u8]) + Send + Sync>;

/// Where a tensor's bytes come from when the file is written.
pub enum TensorData {
    Bytes(Vec<u8>),
    /// Called once with a buffer of exactly the tensor's size to fill (for files too large to
    /// hold in memory, such as `zinc synth` output).
    Generated(FillFn),
}

pub(crate) struct PendingTensor {
    pub(crate) name: String,
    dims: Vec<u64>,
    ty: GgmlType,
    n_bytes: u64,
    pub(crate) data: TensorData,
}

/// Builds a GGUF file: metadata in insertion order, tensors packed in insertion order, each
/// aligned to `general.alignment` (32 unless set).
pub struct GgufWriter {
    metadata: Metadata,
    pub(crate) tensors: Vec<PendingTensor>,
    alignment: u64,
}

impl Default for GgufWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl GgufWriter {
    pub fn new() -> GgufWriter {
        GgufWriter {
            metadata: Metadata::new(),
            tensors: Vec::new(),
            alignment: DEFAULT_ALIGNMENT,
        }
    }

    /// Sets a metadata key (replacing an earlier value). Setting `general.alignment` changes the
    /// alignment the file is written with.
    pub fn set(&mut self, key: &str, value: Value) -> Result<&mut Self> {
        if key == "general.alignment" {
            match value.as_int() {
                Some(a) if a > 0 && (a as u64).is_power_of_two() && a <= u32::MAX as i128 => {
                    self.alignment = a as u64
                }
                _ => {
                    return Err(GgufError::Writer(format!(
                        "general.alignment = {value} is not a power of two"
                    )))
                }
            }
        }
        self.metadata.set(key, value);
        Ok(self)
    }

    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// Adds a tensor whose bytes are already encoded in `ty` blocks.
    pub fn add_tensor(
        &mut self,
        name: &str,
        ty: GgmlType,
        dims: &[u64],
        data: Vec<u8>,
    ) -> Result<&mut Self> {
        let n_bytes = self.check_tensor(name, ty, dims)?;
        if data.len() as u64 != n_bytes {
            return Err(GgufError::Writer(format!(
                "tensor {name:?}: {} bytes given, {ty} {dims:?} needs {n_bytes}",
                data.len()
            )));
        }
        self.push(name, ty, dims, n_bytes, TensorData::Bytes(data));
        Ok(self)
    }

    /// Adds a tensor whose bytes are produced by `fill` at write time.
    pub fn add_tensor_generated(
        &mut self,
        name: &str,
        ty: GgmlType,
        dims: &[u64],
        fill: FillFn,
    ) -> Result<&mut Self> {
        let n_bytes = self.check_tensor(name, ty, dims)?;
        self.push(name, ty, dims, n_bytes, TensorData::Generated(fill));
        Ok(self)
    }

    /// Adds an f32 tensor, encoding it as `ty`.
    pub fn add_f32_tensor(
        &mut self,
        name: &str,
        ty: GgmlType,
        dims: &[u64],
        values: &[f32],
    ) -> Result<&mut Self> {
        let data = zinc_quant::quantize_to_vec(ty, values)
            .map_err(|e| GgufError::Writer(format!("tensor {name:?}: {e}")))?;
        self.add_tensor(name, ty, dims, data)
    }

    fn push(&mut self, name: &str, ty: GgmlType, dims: &[u64], n_bytes: u64, data: TensorData) {
        self.tensors.push(PendingTensor {
            name: name.to_string(),
            dims: dims.to_vec(),
            ty,
            n_bytes,
            data,
        });
    }

    fn check_tensor(&self, name: &str, ty: GgmlType, dims: &[u64]) -> Result<u64> {
        if dims.len() > MAX_DIMS {
            return Err(GgufError::Writer(format!(
                "tensor {name:?} has {} dimensions",
                dims.len()
            )));
        }
        if self.tensors.iter().any(|t| t.name == name) {
            return Err(GgufError::DuplicateTensor(name.to_string()));
        }
        let n = dims
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or_else(|| {
                GgufError::Writer(format!("tensor {name:?}: shape {dims:?} overflows"))
            })?;
        if dims.first().copied().unwrap_or(1) % ty.block_size() as u64 != 0 {
            return Err(GgufError::Writer(format!(
                "tensor {name:?}: first dimension of {dims:?} is not a multiple of the {ty} block size {}",
                ty.block_size()
            )));
        }
        ty.row_bytes(n)
            .ok_or_else(|| GgufError::Writer(format!("tensor {name:?}: size overflows")))
    }

    /// Writes the whole model to one file.
    pub fn write_to(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let all: Vec<&PendingTensor> = self.tensors.iter().collect();
        write_file(path, &self.metadata, &all, self.alignment)
    }

    /// Writes `prefix-0000k-of-0000N.gguf` shards of at most `max_tensors` tensors each, as
    /// `llama-gguf-split --split-max-tensors` does: the first shard carries all metadata, every
    /// shard carries `split.no`, `split.count` and `split.tensors.count`.
    pub fn write_split(&self, prefix: &str, max_tensors: usize) -> Result<Vec<PathBuf>> {
        if max_tensors == 0 {
            return Err(GgufError::Writer("max_tensors must be at least 1".into()));
        }
        let groups: Vec<Vec<&PendingTensor>> = if self.tensors.is_empty() {
            vec![Vec::new()]
        } else {
            self.tensors
                .chunks(max_tensors)
                .map(|c| c.iter().collect())
                .collect()
        };
        let count = groups.len();
        if count > u16::MAX as usize {
            return Err(GgufError::Writer(format!(
                "{count} shards exceed the 65535 that split.count holds"
            )));
        }
        let mut paths = Vec::with_capacity(count);
        for (no, group) in groups.iter().enumerate() {
            let mut md = if no == 0 {
                self.metadata.clone()
            } else {
                let mut m = Metadata::new();
                if self.alignment != DEFAULT_ALIGNMENT {
                    m.set("general.alignment", Value::U32(self.alignment as u32));
                }
                m
            };
            md.set(KEY_SPLIT_NO, Value::U16(no as u16));
            md.set(KEY_SPLIT_COUNT, Value::U16(count as u16));
            md.set(
                KEY_SPLIT_TENSORS_COUNT,
                Value::I32(self.tensors.len() as i32),
            );
            let path = split_path(prefix, no as u32 + 1, count as u32);
            write_file(&path, &md, group, self.alignment)?;
            paths.push(path);
        }
        Ok(paths)
    }
}

/// Writes to `<path>.partial` and renames it into place, so an interrupted write never leaves a
/// truncated file under the final name.
fn write_file(
    path: &Path,
    md: &Metadata,
    tensors: &[&PendingTensor],
    alignment: u64,
) -> Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    write_unrenamed(&partial, md, tensors, alignment)?;
    std::fs::rename(&partial, path).map_err(|e| GgufError::io(path, e))
}

fn write_unrenamed(
    path: &Path,
    md: &Metadata,
    tensors: &[&PendingTensor],
    alignment: u64,
) -> Result<()> {
    let io = |e| GgufError::io(path, e);
    // The header (metadata and tensor table) is small next to the data: assemble it in memory.
    let mut head = Vec::new();
    head.extend_from_slice(&GGUF_MAGIC);
    head.extend_from_slice(&3u32.to_le_bytes());
    head.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    head.extend_from_slice(&(md.len() as u64).to_le_bytes());
    for (k, v) in md.iter() {
        encode_string(&mut head, k);
        head.extend_from_slice(&(v.value_type() as u32).to_le_bytes());
        encode_value(&mut head, v);
    }
    let mut offset = 0u64;
    for t in tensors {
        encode_string(&mut head, &t.name);
        head.extend_from_slice(&(t.dims.len() as u32).to_le_bytes());
        for d in &t.dims {
            head.extend_from_slice(&d.to_le_bytes());
        }
        head.extend_from_slice(&t.ty.id().to_le_bytes());
        head.extend_from_slice(&offset.to_le_bytes());
        offset += t.n_bytes.div_ceil(alignment) * alignment;
    }
    let padding = |len: u64| vec![0u8; (len.div_ceil(alignment) * alignment - len) as usize];
    head.extend_from_slice(&padding(head.len() as u64));

    let file = File::create(path).map_err(io)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    w.write_all(&head).map_err(io)?;
    let mut scratch = Vec::new();
    for t in tensors {
        match &t.data {
            TensorData::Bytes(b) => w.write_all(b).map_err(io)?,
            TensorData::Generated(fill) => {
                scratch.clear();
                scratch.resize(t.n_bytes as usize, 0);
                fill(&mut scratch);
                w.write_all(&scratch).map_err(io)?;
            }
        }
        w.write_all(&padding(t.n_bytes)).map_err(io)?;
    }
    w.flush().map_err(io)?;
    Ok(())
}

fn encode_string(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(&(s.len() as u64).to_le_bytes());
    buf.extend_from_slice(s.as_bytes());
}

fn encode_value(buf: &mut Vec<u8>, v: &Value) {
    match v {
        Value::U8(x) => buf.push(*x),
        Value::I8(x) => buf.push(*x as u8),
        Value::U16(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::I16(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::U32(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::I32(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::F32(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::Bool(x) => buf.push(*x as u8),
        Value::String(s) => encode_string(buf, s),
        Value::U64(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::I64(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::F64(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::Array(a) => {
            buf.extend_from_slice(&(a.elem_type() as u32).to_le_bytes());
            buf.extend_from_slice(&(a.len() as u64).to_le_bytes());
            macro_rules! each {
                ($v:expr) => {
                    for x in $v {
                        buf.extend_from_slice(&x.to_le_bytes());
                    }
                };
            }
            match a {
                Array::U8(v) => buf.extend_from_slice(v),
                Array::I8(v) => buf.extend(v.iter().map(|&x| x as u8)),
                Array::Bool(v) => buf.extend(v.iter().map(|&x| x as u8)),
                Array::U16(v) => each!(v),
                Array::I16(v) => each!(v),
                Array::U32(v) => each!(v),
                Array::I32(v) => each!(v),
                Array::F32(v) => each!(v),
                Array::U64(v) => each!(v),
                Array::I64(v) => each!(v),
                Array::F64(v) => each!(v),
                Array::String(v) => {
                    for s in v {
                        encode_string(buf, s);
                    }
                }
            }
        }
    }
}
