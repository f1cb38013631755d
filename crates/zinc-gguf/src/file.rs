//! Memory-mapped GGUF files and split models opened as one.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::error::{GgufError, Result};
use crate::reader::{parse_header, Header, TensorInfo};
use crate::value::Metadata;

pub const KEY_SPLIT_NO: &str = "split.no";
pub const KEY_SPLIT_COUNT: &str = "split.count";
pub const KEY_SPLIT_TENSORS_COUNT: &str = "split.tensors.count";

/// A tensor's info and its bytes, borrowed from the mapped file (no copy).
#[derive(Clone, Copy, Debug)]
pub struct Tensor<'a> {
    pub info: &'a TensorInfo,
    pub data: &'a [u8],
}

/// Bytes of a file: mapped, or owned for data built in memory (tests, fuzzing).
enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// One GGUF file: its parsed header and its bytes.
pub struct GgufFile {
    path: PathBuf,
    bytes: Bytes,
    header: Header,
}

impl GgufFile {
    /// Maps `path` and parses its header; every tensor is checked to lie inside the file.
    pub fn open(path: impl AsRef<Path>) -> Result<GgufFile> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| GgufError::io(path, e))?;
        let len = file.metadata().map_err(|e| GgufError::io(path, e))?.len();
        let bytes = if len == 0 {
            // An empty file cannot be mapped; let the parser name what is missing.
            Bytes::Owned(Vec::new())
        } else {
            // SAFETY: the map is read-only. Another process truncating the file while it is mapped
            // would fault on access; that is outside what a reader can defend against.
            Bytes::Mapped(unsafe { Mmap::map(&file) }.map_err(|e| GgufError::io(path, e))?)
        };
        let header = parse_header(bytes.as_slice()).map_err(|e| e.in_file(path))?;
        Ok(GgufFile {
            path: path.to_path_buf(),
            bytes,
            header,
        })
    }

    /// Parses a GGUF image held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<GgufFile> {
        let header = parse_header(&bytes)?;
        Ok(GgufFile {
            path: PathBuf::from("<memory>"),
            bytes: Bytes::Owned(bytes),
            header,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn metadata(&self) -> &Metadata {
        &self.header.metadata
    }

    pub fn tensor_infos(&self) -> &[TensorInfo] {
        &self.header.tensors
    }

    pub fn file_len(&self) -> u64 {
        self.bytes.as_slice().len() as u64
    }

    /// The bytes of tensor `i` of this file's table.
    pub fn tensor_at(&self, i: usize) -> Option<Tensor<'_>> {
        let info = self.header.tensors.get(i)?;
        // In bounds: parse_header checked data_offset + offset + n_bytes <= file length.
        let start = (self.header.data_offset + info.offset) as usize;
        let data = &self.bytes.as_slice()[start..start + info.n_bytes as usize];
        Some(Tensor { info, data })
    }
}

/// A model: one GGUF file, or every shard of a split model, presented as one tensor table.
///
/// Metadata comes from the first shard (where `llama-gguf-split` and our writer put it); the
/// `split.*` keys are removed from the merged view so a split model and its unsplit original
/// compare equal.
pub struct GgufModel {
    shards: Vec<GgufFile>,
    metadata: Metadata,
    /// (shard, index in that shard's table), in shard order.
    order: Vec<(usize, usize)>,
    by_name: HashMap<String, usize>,
}

/// `prefix-00002-of-00005.gguf` → (`prefix`, 2, 5).
pub fn parse_split_name(path: &Path) -> Option<(String, u32, u32)> {
    let s = path.to_str()?;
    let stem = s.strip_suffix(".gguf")?;
    let (rest, count) = stem.rsplit_once("-of-")?;
    let (prefix, no) = rest.rsplit_once('-')?;
    if no.len() != 5 || count.len() != 5 {
        return None;
    }
    Some((prefix.to_string(), no.parse().ok()?, count.parse().ok()?))
}

/// The path of shard `no` (1-based) of `count`, named as llama.cpp names them.
pub fn split_path(prefix: &str, no: u32, count: u32) -> PathBuf {
    PathBuf::from(format!("{prefix}-{no:05}-of-{count:05}.gguf"))
}

impl GgufModel {
    /// Opens a GGUF file; when it is one shard of a split model, opens every shard.
    pub fn open(path: impl AsRef<Path>) -> Result<GgufModel> {
        let path = path.as_ref();
        let first = GgufFile::open(path)?;
        let count = first
            .metadata()
            .opt_u32(KEY_SPLIT_COUNT)
            .map_err(|e| e.in_file(path))?
            .unwrap_or(0);
        if count <= 1 {
            return Self::from_shards(vec![first]);
        }
        let (prefix, _, named_count) = parse_split_name(path).ok_or_else(|| {
            GgufError::Split(format!(
                "{} has split.count = {count} but its name is not of the form NAME-00001-of-{count:05}.gguf",
                path.display()
            ))
        })?;
        if named_count != count {
            return Err(GgufError::Split(format!(
                "{} says split.count = {count} but is named as one of {named_count}",
                path.display()
            )));
        }
        let mut shards = Vec::with_capacity(count as usize);
        for no in 1..=count {
            let p = split_path(&prefix, no, count);
            if p == path {
                // Keep the already-open file; order is fixed up below.
                continue;
            }
            shards.push(GgufFile::open(&p)?);
        }
        let no = first
            .metadata()
            .opt_u32(KEY_SPLIT_NO)
            .map_err(|e| e.in_file(path))?
            .unwrap_or(0) as usize;
        if no > shards.len() {
            return Err(GgufError::Split(format!(
                "{}: split.no = {no} is out of range",
                path.display()
            )));
        }
        shards.insert(no, first);
        Self::from_shards(shards)
    }

    /// Builds the merged view over shards given in order.
    pub fn from_shards(shards: Vec<GgufFile>) -> Result<GgufModel> {
        let n = shards.len();
        let mut expected_tensors = None;
        if n > 1 {
            for (i, s) in shards.iter().enumerate() {
                let md = s.metadata();
                let in_file = |e: GgufError| e.in_file(s.path());
                let no = md.get_u32(KEY_SPLIT_NO).map_err(in_file)?;
                let count = md.get_u32(KEY_SPLIT_COUNT).map_err(in_file)?;
                if no as usize != i || count as usize != n {
                    return Err(GgufError::Split(format!(
                        "{}: split.no = {no}, split.count = {count}, expected {i} of {n}",
                        s.path().display()
                    )));
                }
                if i == 0 {
                    expected_tensors = Some(md.get_u64(KEY_SPLIT_TENSORS_COUNT).map_err(in_file)?);
                }
            }
        }
        let mut metadata = shards
            .first()
            .ok_or_else(|| GgufError::Split("no shards".into()))?
            .metadata()
            .clone();
        for k in [KEY_SPLIT_NO, KEY_SPLIT_COUNT, KEY_SPLIT_TENSORS_COUNT] {
            metadata.remove(k);
        }
        let mut order = Vec::new();
        let mut by_name = HashMap::new();
        for (si, s) in shards.iter().enumerate() {
            for (ti, t) in s.tensor_infos().iter().enumerate() {
                if by_name.insert(t.name.clone(), order.len()).is_some() {
                    return Err(GgufError::DuplicateTensor(t.name.clone()).in_file(s.path()));
                }
                order.push((si, ti));
            }
        }
        if let Some(expected) = expected_tensors {
            if expected != order.len() as u64 {
                return Err(GgufError::Split(format!(
                    "split.tensors.count = {expected} but the {n} shards hold {} tensors",
                    order.len()
                )));
            }
        }
        Ok(GgufModel {
            shards,
            metadata,
            order,
            by_name,
        })
    }

    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    pub fn shards(&self) -> &[GgufFile] {
        &self.shards
    }

    /// GGUF version of the first shard.
    pub fn version(&self) -> u32 {
        self.shards[0].header().version
    }

    pub fn n_tensors(&self) -> usize {
        self.order.len()
    }

    /// Total bytes of every shard.
    pub fn file_size(&self) -> u64 {
        self.shards.iter().map(|s| s.file_len()).sum()
    }

    /// Tensors in file order (shard by shard).
    pub fn tensors(&self) -> impl Iterator<Item = Tensor<'_>> {
        self.order
            .iter()
            .filter_map(|&(s, t)| self.shards[s].tensor_at(t))
    }

    /// The shard index holding each tensor, in `tensors()` order.
    pub fn tensor_shards(&self) -> impl Iterator<Item = usize> + '_ {
        self.order.iter().map(|&(s, _)| s)
    }

    /// Position of a tensor in `tensors()` order.
    pub fn tensor_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The tensor at a position of `tensors()` order.
    pub fn tensor_by_index(&self, i: usize) -> Option<Tensor<'_>> {
        let &(s, t) = self.order.get(i)?;
        self.shards[s].tensor_at(t)
    }

    pub fn get(&self, name: &str) -> Option<Tensor<'_>> {
        let &i = self.by_name.get(name)?;
        let (s, t) = self.order[i];
        self.shards[s].tensor_at(t)
    }

    /// A tensor that must exist; the error names it.
    pub fn tensor(&self, name: &str) -> Result<Tensor<'_>> {
        self.get(name)
            .ok_or_else(|| GgufError::MissingTensor(name.to_string()))
    }
}
