//! Dequantization is bit-exact against gguf-py (`gguf.quants.dequantize`, gguf 0.19.0).
//! Vectors: `tests/fixtures/quant/`, written by `scripts/gen_quant_golden.py`.

use std::path::PathBuf;
use zinc_quant::{dequantize_to_vec, GgmlType, SUPPORTED};

fn fixture_dir() -> PathBuf {
    // The run-time CARGO_MANIFEST_DIR first: a target dir shared between clones can hold a test
    // binary compiled with another clone's path.
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    dir.join("../../tests/fixtures/quant")
}

#[test]
fn dequantize_is_bit_exact_with_gguf_py() {
    let mut checked = 0;
    for &ty in SUPPORTED {
        if ty == GgmlType::Q8_K {
            continue; // gguf-py has no Q8_K; its layout is tested in zinc-quant's unit tests.
        }
        let dir = fixture_dir();
        let blocks = std::fs::read(dir.join(format!("{ty}.blocks")))
            .unwrap_or_else(|e| panic!("{ty}: golden blocks missing: {e}"));
        let want = std::fs::read(dir.join(format!("{ty}.f32"))).unwrap();
        let n = want.len() / 4;
        let got = dequantize_to_vec(ty, &blocks, n).unwrap();
        let mut mismatches = 0;
        for (i, (g, w)) in got.iter().zip(want.chunks_exact(4)).enumerate() {
            let w = u32::from_le_bytes(w.try_into().unwrap());
            if g.to_bits() != w {
                if mismatches < 5 {
                    eprintln!(
                        "{ty}[{i}]: got {g:e} ({:#010x}), gguf-py {:e} ({w:#010x})",
                        g.to_bits(),
                        f32::from_bits(w)
                    );
                }
                mismatches += 1;
            }
        }
        assert_eq!(
            mismatches, 0,
            "{ty}: {mismatches} of {n} values differ from gguf-py"
        );
        checked += 1;
    }
    assert_eq!(checked, SUPPORTED.len() - 1);
}
