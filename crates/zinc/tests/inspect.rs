//! `zinc inspect` against gguf-py's reading of the same files (what gguf-dump prints).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value as Json;
use zinc_testdata::{gguf_py_dump, model, TestModel};

fn zinc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zinc"))
        .args(args)
        .output()
        .expect("run zinc")
}

fn inspect_json(path: &Path) -> Json {
    let out = zinc(&["inspect", "--json", path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // stdout is exactly one JSON document.
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

#[test]
fn inspect_agrees_with_gguf_py_on_both_real_models() {
    for (m, arch, tokenizer) in [
        (TestModel::Gemma3, "gemma3", "llama"),
        (TestModel::Qwen2, "qwen2", "gpt2"),
    ] {
        let path = model(m);
        let ours = inspect_json(&path);
        let py: Json = serde_json::from_str(&gguf_py_dump(&path, false)).unwrap();
        let py_tensors = py["tensors"].as_array().unwrap();
        let tensors = ours["tensors"].as_array().unwrap();
        assert_eq!(
            ours["tensor_count"].as_u64().unwrap() as usize,
            py_tensors.len()
        );
        assert_eq!(tensors.len(), py_tensors.len());
        for (t, p) in tensors.iter().zip(py_tensors) {
            assert_eq!(t["name"], p["name"]);
            assert_eq!(t["type"], p["type"], "{}", t["name"]);
            assert_eq!(t["shape"], p["shape"], "{}", t["name"]);
            assert_eq!(t["offset"], p["offset"], "{}", t["name"]);
            assert_eq!(t["n_bytes"], p["n_bytes"], "{}", t["name"]);
        }
        let keys: Vec<&Json> = ours["metadata"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["key"])
            .collect();
        let py_keys: Vec<&Json> = py["kv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["key"])
            .collect();
        assert_eq!(keys, py_keys);
        assert_eq!(ours["architecture"], arch);
        assert_eq!(ours["tokenizer"]["model"], tokenizer);
        let n_tokens = py["kv"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"] == "tokenizer.ggml.tokens")
            .unwrap()["value"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(
            ours["tokenizer"]["tokens"].as_u64().unwrap() as usize,
            n_tokens
        );
        let hist_total: u64 = ours["type_histogram"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(hist_total as usize, py_tensors.len());
        assert_eq!(
            ours["file_size"].as_u64().unwrap(),
            std::fs::metadata(&path).unwrap().len()
        );
    }
}

#[test]
fn chat_template_presence_is_reported() {
    // Qwen2.5 ships a template; our Gemma 3 270M file does not.
    assert_eq!(
        inspect_json(&model(TestModel::Qwen2))["chat_template"],
        true
    );
    assert_eq!(
        inspect_json(&model(TestModel::Gemma3))["chat_template"],
        false
    );
}

#[test]
fn text_output_names_the_essentials() {
    let out = zinc(&["inspect", model(TestModel::Gemma3).to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "architecture  gemma3",
        "tensors       236",
        "token_embd.weight",
        "gemma3.block_count",
        "SentencePiece",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn a_corrupt_file_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.gguf");
    let mut bytes =
        std::fs::read(zinc_testdata::repo_root().join("tests/fixtures/gguf/tiny.gguf")).unwrap();
    bytes.truncate(5000);
    std::fs::write(&path, &bytes).unwrap();
    let out = zinc(&["inspect", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: ")
            && err.contains("broken.gguf")
            && err.contains("past the end of the file"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty());
}
