//! Any byte string given to the GGUF parser yields a header or a typed error; never a panic, and
//! never a tensor view outside the input. Valid results are also dequantized where supported, so
//! the quant kernels see arbitrary block bytes too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zinc_gguf::{GgufFile, GgufModel};

fuzz_target!(|data: &[u8]| {
    let Ok(file) = GgufFile::from_bytes(data.to_vec()) else {
        return;
    };
    let md = file.metadata();
    for (k, v) in md.iter() {
        let _ = (k.len(), v.to_string().len());
    }
    let _ = md.opt_u32("general.alignment");
    let n = file.tensor_infos().len();
    let Ok(model) = GgufModel::from_shards(vec![file]) else {
        return;
    };
    assert_eq!(model.n_tensors(), n);
    for t in model.tensors() {
        assert_eq!(t.data.len() as u64, t.info.n_bytes);
        // Bound the work: dequantize only small tensors.
        if t.info.n_elements <= 1 << 16 && t.info.ty.is_supported() {
            let out = zinc_quant::dequantize_to_vec(t.info.ty, t.data, t.info.n_elements as usize);
            assert!(out.is_ok(), "{}: {:?}", t.info.name, out.err());
        }
    }
});
