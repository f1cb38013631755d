//! The reader and writer against independent references:
//! - gguf-py (`scripts/gguf_py_dump.py`) reads the same files and must agree on every key, value,
//!   tensor, offset and (for files we write) tensor bytes;
//! - split models made by llama.cpp's `llama-gguf-split` (fixtures) load as their unsplit original;
//! - both real test models parse completely.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use zinc_gguf::{Array, GgmlType, GgufModel, GgufWriter, Value};
use zinc_testdata::{model, repo_root, TestModel};

fn gguf_py_dump(path: &Path, hash: bool) -> Json {
    serde_json::from_str(&zinc_testdata::gguf_py_dump(path, hash))
        .expect("gguf_py_dump.py prints JSON")
}

fn gguf_py_type_name(v: &Value) -> &'static str {
    match v {
        Value::U8(_) => "UINT8",
        Value::I8(_) => "INT8",
        Value::U16(_) => "UINT16",
        Value::I16(_) => "INT16",
        Value::U32(_) => "UINT32",
        Value::I32(_) => "INT32",
        Value::F32(_) => "FLOAT32",
        Value::Bool(_) => "BOOL",
        Value::String(_) => "STRING",
        Value::Array(_) => "ARRAY",
        Value::U64(_) => "UINT64",
        Value::I64(_) => "INT64",
        Value::F64(_) => "FLOAT64",
    }
}

/// Does a scalar of ours equal gguf-py's JSON rendering of it?
fn scalar_matches(v: &Value, j: &Json) -> bool {
    if let Some(i) = v.as_int() {
        return j.as_i64().map(|x| x as i128 == i).unwrap_or(false)
            || j.as_u64().map(|x| x as i128 == i).unwrap_or(false);
    }
    match v {
        Value::F32(f) => j.as_f64() == Some(*f as f64),
        Value::F64(f) => j.as_f64() == Some(*f),
        Value::Bool(b) => j.as_bool() == Some(*b),
        Value::String(s) => j.as_str() == Some(s.as_str()),
        _ => false,
    }
}

/// Compares our view of a model with gguf-py's, key by key and tensor by tensor.
fn assert_matches_gguf_py(ours: &GgufModel, py: &Json, hashes: bool) {
    let kv = py["kv"].as_array().unwrap();
    let shard0 = &ours.shards()[0];
    let md = shard0.metadata();
    let ours_kv: Vec<_> = md.iter().collect();
    assert_eq!(ours_kv.len(), kv.len(), "number of metadata keys");
    for ((k, v), j) in ours_kv.iter().zip(kv) {
        assert_eq!(*k, j["key"].as_str().unwrap(), "key order");
        assert_eq!(
            gguf_py_type_name(v),
            j["type"].as_str().unwrap(),
            "type of {k}"
        );
        match v {
            Value::Array(a) => {
                let items = j["value"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{k}: array"));
                assert_eq!(a.len(), items.len(), "length of {k}");
                let elem = a.get(0).map(|e| gguf_py_type_name(&e));
                if let Some(elem) = elem {
                    assert_eq!(
                        elem,
                        j["elem_type"].as_str().unwrap(),
                        "element type of {k}"
                    );
                }
                for (i, item) in items.iter().enumerate() {
                    let e = a.get(i).unwrap();
                    assert!(
                        scalar_matches(&e, item),
                        "{k}[{i}]: ours {e}, gguf-py {item}"
                    );
                }
            }
            v => assert!(
                scalar_matches(v, &j["value"]),
                "{k}: ours {v}, gguf-py {}",
                j["value"]
            ),
        }
    }
    let tensors = py["tensors"].as_array().unwrap();
    assert_eq!(shard0.tensor_infos().len(), tensors.len(), "tensor count");
    for (i, j) in tensors.iter().enumerate() {
        let t = shard0.tensor_at(i).unwrap();
        let name = &t.info.name;
        assert_eq!(name, j["name"].as_str().unwrap());
        assert_eq!(
            t.info.ty.name(),
            j["type"].as_str().unwrap(),
            "type of {name}"
        );
        let shape: Vec<u64> = j["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(t.info.dims, shape, "shape of {name}");
        assert_eq!(
            shard0.header().data_offset + t.info.offset,
            j["offset"].as_u64().unwrap(),
            "offset of {name}"
        );
        assert_eq!(
            t.info.n_bytes,
            j["n_bytes"].as_u64().unwrap(),
            "size of {name}"
        );
        if hashes {
            let h = hex::encode(Sha256::digest(t.data));
            assert_eq!(h, j["sha256"].as_str().unwrap(), "bytes of {name}");
        }
    }
}

/// A file with one metadata value of every type and tensors of every supported format.
fn everything_writer() -> GgufWriter {
    let mut w = GgufWriter::new();
    let set = |w: &mut GgufWriter, k: &str, v: Value| {
        w.set(k, v).unwrap();
    };
    set(
        &mut w,
        "general.architecture",
        Value::String("llama".into()),
    );
    set(
        &mut w,
        "general.name",
        Value::String("zinc writer test — ünïcödé 中文".into()),
    );
    set(&mut w, "x.u8", Value::U8(255));
    set(&mut w, "x.i8", Value::I8(-128));
    set(&mut w, "x.u16", Value::U16(65535));
    set(&mut w, "x.i16", Value::I16(-32768));
    set(&mut w, "x.u32", Value::U32(u32::MAX));
    set(&mut w, "x.i32", Value::I32(i32::MIN));
    set(&mut w, "x.f32", Value::F32(3.25e-7));
    set(&mut w, "x.bool", Value::Bool(false));
    set(&mut w, "x.u64", Value::U64(u64::MAX));
    set(&mut w, "x.i64", Value::I64(i64::MIN));
    set(&mut w, "x.f64", Value::F64(std::f64::consts::PI));
    set(
        &mut w,
        "x.strs",
        Value::Array(Array::String(vec![
            "<s>".into(),
            "▁the".into(),
            "".into(),
            "😀".into(),
        ])),
    );
    set(&mut w, "x.u8s", Value::Array(Array::U8(vec![0, 1, 255])));
    set(&mut w, "x.i8s", Value::Array(Array::I8(vec![-1, 1])));
    set(&mut w, "x.u16s", Value::Array(Array::U16(vec![7])));
    set(&mut w, "x.i16s", Value::Array(Array::I16(vec![-7, 7])));
    set(&mut w, "x.u32s", Value::Array(Array::U32(vec![1, 2, 3])));
    set(&mut w, "x.i32s", Value::Array(Array::I32(vec![-1, 0, 1])));
    set(
        &mut w,
        "x.f32s",
        Value::Array(Array::F32(vec![0.1, -2.5, 1e30])),
    );
    set(
        &mut w,
        "x.bools",
        Value::Array(Array::Bool(vec![true, false, true])),
    );
    set(
        &mut w,
        "x.u64s",
        Value::Array(Array::U64(vec![u64::MAX, 0])),
    );
    set(
        &mut w,
        "x.i64s",
        Value::Array(Array::I64(vec![i64::MAX, -5])),
    );
    set(
        &mut w,
        "x.f64s",
        Value::Array(Array::F64(vec![1e-300, 2.0])),
    );
    let vals: Vec<f32> = (0..1024)
        .map(|i| ((i * 7919) % 1000) as f32 / 250.0 - 2.0)
        .collect();
    for (i, &ty) in zinc_quant::SUPPORTED.iter().enumerate() {
        if ty == GgmlType::Q8_K {
            continue; // not a storage type: llama.cpp refuses it in files
        }
        let ne0 = ty.block_size().max(32) as u64;
        let rows = 3u64;
        w.add_f32_tensor(
            &format!("blk.{i}.w_{ty}.weight"),
            ty,
            &[ne0, rows],
            &vals[..(ne0 * rows) as usize],
        )
        .unwrap();
    }
    w
}

#[test]
fn gguf_py_reads_what_we_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("everything.gguf");
    everything_writer().write_to(&path).unwrap();
    let py = gguf_py_dump(&path, true);
    let ours = GgufModel::open(&path).unwrap();
    assert_matches_gguf_py(&ours, &py, true);
}

#[test]
fn real_models_match_gguf_py_and_every_tensor_is_in_the_file() {
    for m in [TestModel::Gemma3, TestModel::Qwen2] {
        let path = model(m);
        let ours = GgufModel::open(&path).unwrap();
        let file_len = std::fs::metadata(&path).unwrap().len();
        let f = &ours.shards()[0];
        let mut last_end = 0;
        for t in ours.tensors() {
            let want = t.info.ty.row_bytes(t.info.n_elements).unwrap();
            assert_eq!(t.data.len() as u64, want, "{}", t.info.name);
            last_end = last_end.max(f.header().data_offset + t.info.offset + t.info.n_bytes);
        }
        assert!(
            last_end <= file_len,
            "{m:?}: last tensor ends at {last_end}, file is {file_len}"
        );
        assert!(
            ours.n_tensors() > 100,
            "{m:?}: only {} tensors",
            ours.n_tensors()
        );
        assert_matches_gguf_py(&ours, &gguf_py_dump(&path, false), false);
    }
}

fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/gguf").join(name)
}

/// `tests/fixtures/gguf/README.md` says how these were made: `tiny.gguf` by our writer,
/// `tiny-llama-split-0000k-of-00003.gguf` from it by llama.cpp's `llama-gguf-split`.
#[test]
fn llama_gguf_split_shards_load_like_the_original() {
    let whole = GgufModel::open(fixture("tiny.gguf")).unwrap();
    for shard in 1..=3 {
        let split = GgufModel::open(fixture(&format!(
            "tiny-llama-split-0000{shard}-of-00003.gguf"
        )))
        .unwrap();
        assert_eq!(split.shards().len(), 3);
        assert_models_equal(&whole, &split);
    }
    // Our own split of the same file loads identically too.
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("tiny-zinc").to_str().unwrap().to_string();
    let ours = zinc_gguf_writer_from(&whole);
    let paths = ours.write_split(&prefix, 2).unwrap();
    let split = GgufModel::open(&paths[0]).unwrap();
    assert_models_equal(&whole, &split);
}

/// The fixture is our writer's output: rebuilding a writer from it must reproduce it byte for byte.
#[test]
fn writer_reproduces_the_fixture() {
    let whole = GgufModel::open(fixture("tiny.gguf")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("again.gguf");
    zinc_gguf_writer_from(&whole).write_to(&p).unwrap();
    assert_eq!(
        std::fs::read(&p).unwrap(),
        std::fs::read(fixture("tiny.gguf")).unwrap()
    );
}

fn zinc_gguf_writer_from(m: &GgufModel) -> GgufWriter {
    let mut w = GgufWriter::new();
    for (k, v) in m.metadata().iter() {
        w.set(k, v.clone()).unwrap();
    }
    for t in m.tensors() {
        w.add_tensor(&t.info.name, t.info.ty, &t.info.dims, t.data.to_vec())
            .unwrap();
    }
    w
}

fn assert_models_equal(a: &GgufModel, b: &GgufModel) {
    let ma: Vec<_> = a.metadata().iter().collect();
    let mb: Vec<_> = b.metadata().iter().collect();
    assert_eq!(ma, mb);
    assert_eq!(a.n_tensors(), b.n_tensors());
    for (ta, tb) in a.tensors().zip(b.tensors()) {
        assert_eq!(ta.info.name, tb.info.name);
        assert_eq!(ta.info.dims, tb.info.dims);
        assert_eq!(ta.info.ty, tb.info.ty);
        assert_eq!(ta.data, tb.data, "{}", ta.info.name);
    }
}
