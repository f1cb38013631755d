use super::*;
use proptest::prelude::*;

/// A hand-assembled GGUF image, so tests can write headers the writer would refuse to.
struct Raw {
    buf: Vec<u8>,
}

impl Raw {
    fn header(version: u32, n_tensors: u64, n_kv: u64) -> Raw {
        let mut buf = b"GGUF".to_vec();
        buf.extend_from_slice(&version.to_le_bytes());
        buf.extend_from_slice(&n_tensors.to_le_bytes());
        buf.extend_from_slice(&n_kv.to_le_bytes());
        Raw { buf }
    }
    fn u32(mut self, v: u32) -> Raw {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(mut self, v: u64) -> Raw {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn str(self, s: &str) -> Raw {
        let mut r = self.u64(s.len() as u64);
        r.buf.extend_from_slice(s.as_bytes());
        r
    }
    fn kv_u32(self, k: &str, v: u32) -> Raw {
        self.str(k).u32(ValueType::U32 as u32).u32(v)
    }
    fn tensor(self, name: &str, dims: &[u64], ty: u32, offset: u64) -> Raw {
        let mut r = self.str(name).u32(dims.len() as u32);
        for &d in dims {
            r = r.u64(d);
        }
        r.u32(ty).u64(offset)
    }
    fn pad_and_data(mut self, data_len: usize) -> Vec<u8> {
        let p = self.buf.len().div_ceil(32) * 32;
        self.buf.resize(p + data_len, 0);
        self.buf
    }
}

fn parse(bytes: Vec<u8>) -> GgufError {
    match GgufFile::from_bytes(bytes) {
        Ok(_) => panic!("a malformed file parsed"),
        Err(e) => e,
    }
}

/// A writer holding one value of every metadata type and a few tensors.
fn sample_writer() -> GgufWriter {
    let mut w = GgufWriter::new();
    w.set("general.architecture", Value::String("llama".into()))
        .unwrap();
    w.set("general.name", Value::String("tiny ✓ ünïcode".into()))
        .unwrap();
    w.set("t.u8", Value::U8(200)).unwrap();
    w.set("t.i8", Value::I8(-100)).unwrap();
    w.set("t.u16", Value::U16(60000)).unwrap();
    w.set("t.i16", Value::I16(-30000)).unwrap();
    w.set("t.u32", Value::U32(4_000_000_000)).unwrap();
    w.set("t.i32", Value::I32(-2_000_000_000)).unwrap();
    w.set("t.f32", Value::F32(0.125)).unwrap();
    w.set("t.bool", Value::Bool(true)).unwrap();
    w.set("t.u64", Value::U64(u64::MAX)).unwrap();
    w.set("t.i64", Value::I64(i64::MIN)).unwrap();
    w.set("t.f64", Value::F64(-1e300)).unwrap();
    w.set(
        "t.arr_str",
        Value::Array(Array::String(vec!["a".into(), "".into(), "ßλ中".into()])),
    )
    .unwrap();
    w.set("t.arr_i32", Value::Array(Array::I32(vec![1, -2, 3])))
        .unwrap();
    w.set("t.arr_f32", Value::Array(Array::F32(vec![0.5, -0.25])))
        .unwrap();
    w.set("t.arr_u8", Value::Array(Array::U8(vec![]))).unwrap();
    w.set("t.arr_bool", Value::Array(Array::Bool(vec![true, false])))
        .unwrap();
    w.set("t.arr_f64", Value::Array(Array::F64(vec![1.5])))
        .unwrap();
    let vals: Vec<f32> = (0..512).map(|i| (i as f32 * 0.37).sin()).collect();
    w.add_f32_tensor("token_embd.weight", GgmlType::Q4_K, &[256, 2], &vals)
        .unwrap();
    w.add_f32_tensor("blk.0.attn_norm.weight", GgmlType::F32, &[7], &vals[..7])
        .unwrap();
    w.add_f32_tensor(
        "blk.0.ffn_up.weight",
        GgmlType::Q8_0,
        &[64, 3],
        &vals[..192],
    )
    .unwrap();
    w.add_f32_tensor("output.weight", GgmlType::F16, &[5, 3, 2], &vals[..30])
        .unwrap();
    w
}

#[test]
fn writer_output_reads_back_identically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    let w = sample_writer();
    w.write_to(&path).unwrap();
    let f = GgufFile::open(&path).unwrap();
    assert_eq!(f.header().version, 3);
    let md = f.metadata();
    let want: Vec<_> = w.metadata().iter().collect();
    let got: Vec<_> = md.iter().collect();
    assert_eq!(got, want);
    assert_eq!(md.get_u32("t.u32").unwrap(), 4_000_000_000);
    assert_eq!(md.get_u64("t.u8").unwrap(), 200, "widening integer access");
    assert!(md.get_u8("t.u16").is_err(), "60000 does not fit in u8");
    assert_eq!(md.get_str_array("t.arr_str").unwrap()[2], "ßλ中");
    assert!(matches!(
        md.get_u32("missing"),
        Err(GgufError::MissingKey(_))
    ));
    assert!(matches!(
        md.get_str("t.u32"),
        Err(GgufError::WrongType { .. })
    ));
    let infos = f.tensor_infos();
    assert_eq!(infos.len(), 4);
    assert_eq!(infos[3].dims, vec![5, 3, 2]);
    assert_eq!(infos[0].n_bytes, 2 * 144);
    for (i, t) in w.tensors.iter().enumerate() {
        let view = f.tensor_at(i).unwrap();
        assert_eq!(view.info.name, t.name);
        assert_eq!(view.info.offset % 32, 0);
        match &t.data {
            TensorData::Bytes(b) => assert_eq!(view.data, &b[..]),
            TensorData::Generated(_) => unreachable!(),
        }
    }
}

#[test]
fn custom_alignment_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.gguf");
    let mut w = sample_writer();
    w.set("general.alignment", Value::U32(256)).unwrap();
    w.write_to(&path).unwrap();
    let f = GgufFile::open(&path).unwrap();
    assert_eq!(f.header().alignment, 256);
    assert_eq!(f.header().data_offset % 256, 0);
    for t in f.tensor_infos() {
        assert_eq!(t.offset % 256, 0);
    }
    assert!(w.set("general.alignment", Value::U32(48)).is_err());
}

#[test]
fn split_model_loads_like_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("m.gguf");
    let w = sample_writer();
    w.write_to(&whole).unwrap();
    let prefix = dir.path().join("m").to_str().unwrap().to_string();
    let paths = w.write_split(&prefix, 3).unwrap();
    assert_eq!(paths.len(), 2);
    assert!(paths[1]
        .to_str()
        .unwrap()
        .ends_with("m-00002-of-00002.gguf"));
    let a = GgufModel::open(&whole).unwrap();
    for p in &paths {
        // Any shard opens the whole model.
        let b = GgufModel::open(p).unwrap();
        assert_eq!(b.shards().len(), 2);
        assert_models_equal(&a, &b);
    }
}

pub(crate) fn assert_models_equal(a: &GgufModel, b: &GgufModel) {
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

#[test]
fn a_missing_shard_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("m").to_str().unwrap().to_string();
    let paths = sample_writer().write_split(&prefix, 1).unwrap();
    std::fs::remove_file(&paths[2]).unwrap();
    let err = GgufModel::open(&paths[0])
        .err()
        .expect("a shard is missing");
    assert!(err.to_string().contains("m-00003-of-00004.gguf"), "{err}");
}

#[test]
fn split_names_parse() {
    let p = std::path::Path::new("/x/qwen-7b-00002-of-00010.gguf");
    assert_eq!(parse_split_name(p), Some(("/x/qwen-7b".into(), 2, 10)));
    assert_eq!(parse_split_name(std::path::Path::new("model.gguf")), None);
}

#[test]
fn tensor_lookup_names_the_missing_one() {
    let f = GgufFile::from_bytes(Raw::header(3, 0, 0).pad_and_data(0)).unwrap();
    let m = GgufModel::from_shards(vec![f]).unwrap();
    let e = m.tensor("output.weight").err().unwrap();
    assert_eq!(e.to_string(), "tensor \"output.weight\" is missing");
}

// ---------------------------------------------------------------------------------------------
// Bad input: each malformation gives its own typed error.
// ---------------------------------------------------------------------------------------------

#[test]
fn wrong_magic() {
    let mut b = Raw::header(3, 0, 0).pad_and_data(0);
    b[0] = b'X';
    assert!(matches!(parse(b), GgufError::BadMagic(m) if &m == b"XGUF"));
}

#[test]
fn unsupported_versions() {
    assert!(matches!(
        parse(Raw::header(1, 0, 0).pad_and_data(0)),
        GgufError::UnsupportedVersion(1)
    ));
    assert!(matches!(
        parse(Raw::header(0xFFFF, 0, 0).pad_and_data(0)),
        GgufError::UnsupportedVersion(0xFFFF)
    ));
    assert!(matches!(
        parse(Raw::header(3u32.swap_bytes(), 0, 0).pad_and_data(0)),
        GgufError::WrongEndianness(_)
    ));
    // Version 2 parses.
    GgufFile::from_bytes(Raw::header(2, 0, 0).pad_and_data(0)).unwrap();
}

#[test]
fn truncated_files_fail_at_every_length() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    sample_writer().write_to(&path).unwrap();
    let full = std::fs::read(&path).unwrap();
    let f = GgufFile::open(&path).unwrap();
    let last = f.tensor_infos().last().unwrap();
    // The trailing alignment padding after the last tensor is not needed.
    let data_end = (f.header().data_offset + last.offset + last.n_bytes) as usize;
    for len in 0..data_end {
        let r = GgufFile::from_bytes(full[..len].to_vec());
        assert!(r.is_err(), "a file cut to {len} of {data_end} bytes parsed");
    }
    GgufFile::from_bytes(full[..data_end].to_vec()).unwrap();
    assert!(matches!(
        parse(Vec::new()),
        GgufError::Truncated { what: "magic", .. }
    ));
}

#[test]
fn huge_counts_are_rejected_before_allocating() {
    let e = parse(Raw::header(3, 1 << 60, 0).pad_and_data(0));
    assert!(
        matches!(e, GgufError::CountTooLarge { what: "tensor", count, .. } if count == 1 << 60),
        "{e}"
    );
    let e = parse(Raw::header(3, 0, 1 << 60).pad_and_data(0));
    assert!(
        matches!(
            e,
            GgufError::CountTooLarge {
                what: "metadata key",
                ..
            }
        ),
        "{e}"
    );
    // A string length of 2^60.
    let e = parse(Raw::header(3, 0, 1).u64(1 << 60).pad_and_data(64));
    assert!(
        matches!(e, GgufError::Truncated { what: "metadata key", needed, .. } if needed == 1 << 60),
        "{e}"
    );
    // An array of 2^60 u32.
    let e = parse(
        Raw::header(3, 0, 1)
            .str("k")
            .u32(9)
            .u32(4)
            .u64(1 << 60)
            .pad_and_data(64),
    );
    assert!(
        matches!(
            e,
            GgufError::CountTooLarge {
                what: "array element",
                ..
            }
        ),
        "{e}"
    );
    // An array of 2^61 strings (8 bytes each at least).
    let e = parse(
        Raw::header(3, 0, 1)
            .str("k")
            .u32(9)
            .u32(8)
            .u64(1 << 61)
            .pad_and_data(64),
    );
    assert!(matches!(e, GgufError::CountTooLarge { .. }), "{e}");
}

#[test]
fn overflowing_dims() {
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[1 << 32, 1 << 32, 1 << 32], 0, 0)
        .pad_and_data(0);
    assert!(matches!(parse(b), GgufError::ShapeOverflow { .. }));
    // i64::MAX elements of f32 overflow the byte count.
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[1 << 62], 0, 0)
        .pad_and_data(0);
    assert!(matches!(parse(b), GgufError::ShapeOverflow { .. }));
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[u64::MAX], 0, 0)
        .pad_and_data(0);
    assert!(matches!(parse(b), GgufError::NegativeDim { .. }));
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[1, 1, 1, 1, 1], 0, 0)
        .pad_and_data(0);
    assert!(matches!(parse(b), GgufError::TooManyDims { n_dims: 5, .. }));
}

#[test]
fn offsets_past_the_end() {
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[8], 0, 0)
        .pad_and_data(31);
    let e = parse(b);
    assert!(
        matches!(&e, GgufError::TensorOutOfBounds { name, .. } if name == "w"),
        "{e}"
    );
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[8], 0, u64::MAX - 31)
        .pad_and_data(64);
    assert!(matches!(
        parse(b),
        GgufError::TensorOutOfBounds { .. } | GgufError::MisalignedTensor { .. }
    ));
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[8], 0, 1 << 40)
        .pad_and_data(64);
    assert!(matches!(parse(b), GgufError::TensorOutOfBounds { .. }));
    // Exactly at the end is fine.
    GgufFile::from_bytes(
        Raw::header(3, 1, 0)
            .tensor("w", &[8], 0, 0)
            .pad_and_data(32),
    )
    .unwrap();
}

#[test]
fn unknown_types() {
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[8], 4, 0)
        .pad_and_data(64);
    assert!(matches!(
        parse(b),
        GgufError::UnknownTensorType { type_id: 4, .. }
    ));
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[8], 9999, 0)
        .pad_and_data(64);
    assert!(matches!(
        parse(b),
        GgufError::UnknownTensorType { type_id: 9999, .. }
    ));
    let b = Raw::header(3, 0, 1).str("k").u32(13).u32(0).pad_and_data(0);
    assert!(matches!(
        parse(b),
        GgufError::UnknownValueType { type_id: 13, .. }
    ));
    let b = Raw::header(3, 0, 1)
        .str("k")
        .u32(9)
        .u32(9)
        .u64(0)
        .pad_and_data(0);
    assert!(matches!(parse(b), GgufError::NestedArray { .. }));
}

#[test]
fn duplicates() {
    let b = Raw::header(3, 0, 2)
        .kv_u32("a", 1)
        .kv_u32("a", 2)
        .pad_and_data(0);
    assert!(matches!(parse(b), GgufError::DuplicateKey(k) if k == "a"));
    let b = Raw::header(3, 2, 0)
        .tensor("w", &[8], 0, 0)
        .tensor("w", &[8], 0, 32)
        .pad_and_data(64);
    assert!(matches!(parse(b), GgufError::DuplicateTensor(n) if n == "w"));
}

#[test]
fn misalignment() {
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[8], 0, 4)
        .pad_and_data(64);
    assert!(matches!(
        parse(b),
        GgufError::MisalignedTensor {
            offset: 4,
            alignment: 32,
            ..
        }
    ));
    let b = Raw::header(3, 0, 1)
        .kv_u32("general.alignment", 24)
        .pad_and_data(0);
    assert!(matches!(parse(b), GgufError::BadAlignment(24)));
    let b = Raw::header(3, 0, 1)
        .kv_u32("general.alignment", 0)
        .pad_and_data(0);
    assert!(matches!(parse(b), GgufError::BadAlignment(0)));
    let b = Raw::header(3, 0, 1)
        .str("general.alignment")
        .u32(8)
        .str("x")
        .pad_and_data(0);
    assert!(matches!(parse(b), GgufError::WrongType { .. }));
    // A block type whose first dimension is not a whole number of blocks.
    let b = Raw::header(3, 1, 0)
        .tensor("w", &[33], GgmlType::Q4_0.id(), 0)
        .pad_and_data(64);
    assert!(matches!(parse(b), GgufError::PartialBlock { ne0: 33, .. }));
}

#[test]
fn invalid_utf8_is_an_error() {
    let mut r = Raw::header(3, 0, 1).u64(2);
    r.buf.extend_from_slice(&[0xff, 0xfe]);
    let b = r.u32(4).u32(1).pad_and_data(0);
    assert!(matches!(parse(b), GgufError::InvalidUtf8 { .. }));
}

#[test]
fn errors_from_files_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.gguf");
    std::fs::write(&path, b"GGUF\x01\x00\x00\x00").unwrap();
    let msg = GgufFile::open(&path).err().unwrap().to_string();
    assert!(
        msg.contains("bad.gguf") && msg.contains("version 1"),
        "{msg}"
    );
    let msg = GgufFile::open(dir.path().join("nope.gguf"))
        .err()
        .unwrap()
        .to_string();
    assert!(msg.contains("nope.gguf"), "{msg}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    /// Any corruption of a valid file gives an error or a file whose tensors lie inside it;
    /// never a panic.
    #[test]
    fn corrupted_files_never_panic(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        static FULL: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        let full = FULL.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("m.gguf");
            sample_writer().write_to(&path).unwrap();
            std::fs::read(&path).unwrap()
        });
        let mut b = full.clone();
        for (i, v) in edits {
            let at = i.index(b.len());
            b[at] = v;
        }
        if let Ok(f) = GgufFile::from_bytes(b) {
            for i in 0..f.tensor_infos().len() {
                let t = f.tensor_at(i).unwrap();
                prop_assert_eq!(t.data.len() as u64, t.info.n_bytes);
            }
        }
    }
}
