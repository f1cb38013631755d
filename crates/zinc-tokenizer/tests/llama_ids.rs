//! Token ids equal llama.cpp's (`llama-tokenize`, commit 0c1e570) on both real test models for
//! the corpus in `tests/fixtures/tokenizer/` (see `scripts/gen_tokenizer_fixtures.py`), with and
//! without special-token parsing, and decoding gives the text back.

use serde_json::Value as Json;
use zinc_gguf::GgufModel;
use zinc_testdata::{model, repo_root, TestModel};
use zinc_tokenizer::Tokenizer;

fn load(m: TestModel) -> Tokenizer {
    let model = GgufModel::open(model(m)).unwrap();
    Tokenizer::from_metadata(model.metadata()).unwrap()
}

fn fixture(name: &str) -> Json {
    let p = repo_root()
        .join("tests/fixtures/tokenizer")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn ids(v: &Json) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

fn check(m: TestModel, name: &str) {
    let tok = load(m);
    let fx = fixture(name);
    let mut failures = Vec::new();
    for case in fx["cases"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let want = ids(&case["ids"]);
        let got = tok.encode(text, false, true);
        if got != want {
            failures.push(format!(
                "special   {text:?}\n   llama.cpp {want:?}\n   zinc      {got:?}"
            ));
        }
        let want_plain = ids(&case["ids_no_special"]);
        let got_plain = tok.encode(text, false, false);
        if got_plain != want_plain {
            failures.push(format!(
                "plain     {text:?}\n   llama.cpp {want_plain:?}\n   zinc      {got_plain:?}"
            ));
        }
        for ids in [&want, &want_plain] {
            let back = tok.decode(ids, true).unwrap();
            if back != text {
                failures.push(format!("round trip {text:?} came back as {back:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} mismatches\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn gemma3_spm_matches_llama_cpp() {
    check(TestModel::Gemma3, "gemma3");
}

#[test]
fn qwen2_bpe_matches_llama_cpp() {
    check(TestModel::Qwen2, "qwen2");
}

#[test]
fn bos_and_special_flags_follow_the_vocabulary() {
    let g = load(TestModel::Gemma3);
    assert_eq!(g.bos(), Some(2));
    assert!(g.add_bos());
    assert_eq!(g.encode("Hello", true, true)[0], 2);
    assert_eq!(g.encode("", true, true), vec![2]);
    assert!(g.encode("", false, true).is_empty());
    assert!(g.is_eog(g.token_id("<end_of_turn>").unwrap()));
    assert!(g.is_eog(1), "<eos>");
    let q = load(TestModel::Qwen2);
    assert!(!q.add_bos(), "Qwen2.5 adds no BOS");
    assert_eq!(
        q.encode("Hello", true, true),
        q.encode("Hello", false, true)
    );
    let im_end = q.token_id("<|im_end|>").unwrap();
    assert!(q.is_eog(im_end));
    assert!(q.is_eog(q.token_id("<|endoftext|>").unwrap()));
    assert!(!q.is_eog(q.token_id("<|im_start|>").unwrap()));
    // Control tokens vanish from user-visible text.
    assert_eq!(q.decode(&[im_end], false).unwrap(), "");
    assert_eq!(q.decode(&[im_end], true).unwrap(), "<|im_end|>");
}
