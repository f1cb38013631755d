//! `zinc run`, `perplexity`, `bench`, `logits` end to end on the real test models, and the
//! errors a user gets for models or prompts we cannot run.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value as Json;
use zinc_gguf::{GgufModel, GgufWriter, Value};
use zinc_testdata::{model, repo_root, TestModel};

fn zinc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zinc"))
        .args(args)
        .output()
        .expect("run zinc")
}

fn fixture(name: &str) -> Json {
    let p = repo_root()
        .join("tests/fixtures/inference")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Perplexity over the first 4 chunks of 512 tokens of the GPL text, within 1% of
/// `llama-perplexity --chunks 4` (the full text is checked by hand; see the closing notes).
#[test]
fn perplexity_is_within_one_percent_of_llama_cpp() {
    let text = repo_root().join("tests/fixtures/text/gpl-3.0.txt");
    for (m, name) in [(TestModel::Qwen2, "qwen2"), (TestModel::Gemma3, "gemma3")] {
        let want = fixture(name)["perplexity"][0]["ppl"].as_f64().unwrap();
        let path = model(m);
        let out = zinc(&[
            "perplexity",
            "-m",
            path.to_str().unwrap(),
            "-f",
            text.to_str().unwrap(),
            "-c",
            "512",
            "--chunks",
            "4",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let s = String::from_utf8(out.stdout.clone()).unwrap();
        let got: f64 = s
            .split("PPL = ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no PPL in {s:?}"));
        let rel = (got - want).abs() / want;
        eprintln!(
            "{name}: zinc {got:.4}, llama.cpp {want:.4} ({:.3}%)",
            rel * 100.0
        );
        assert!(rel < 0.01, "{name}: PPL {got} vs llama.cpp {want}");
        assert!(
            stderr(&out).contains("[4]"),
            "running estimates are printed"
        );
    }
}

#[test]
fn run_streams_llama_cpps_greedy_text() {
    let fx = fixture("qwen2");
    let case = &fx["greedy"][0];
    let prompt = case["prompt"].as_str().unwrap();
    let raw = case["text"].as_str().unwrap();
    let want = raw.strip_suffix("\n\n").unwrap_or(raw);
    let path = model(TestModel::Qwen2);
    let out = zinc(&[
        "run",
        "-m",
        path.to_str().unwrap(),
        "-p",
        prompt,
        "-n",
        "40",
        "--temp",
        "0",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(got.strip_suffix('\n').unwrap_or(&got), want);
    let err = stderr(&out);
    assert!(
        err.contains("tok/s") && err.contains("finish: length"),
        "{err}"
    );
}

#[test]
fn chat_mode_applies_the_template_and_stops_at_end_of_turn() {
    let path = model(TestModel::Qwen2);
    let out = zinc(&[
        "run",
        "-m",
        path.to_str().unwrap(),
        "--chat",
        "-p",
        "Reply with one word: hello",
        "-n",
        "48",
        "--temp",
        "0",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(!text.trim().is_empty());
    assert!(
        !text.contains("<|im_end|>") && !text.contains("<|im_start|>"),
        "{text:?}"
    );
    assert!(stderr(&out).contains("finish: stop"), "{}", stderr(&out));
    // Gemma has no template: the fallback is announced.
    let out = zinc(&[
        "run",
        "-m",
        model(TestModel::Gemma3).to_str().unwrap(),
        "--chat",
        "-p",
        "Hi",
        "-n",
        "4",
        "--temp",
        "0",
    ]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("using the gemma format"));
}

#[test]
fn same_seed_same_text() {
    let path = model(TestModel::Gemma3);
    let run = |seed: &str| {
        let out = zinc(&[
            "run",
            "-m",
            path.to_str().unwrap(),
            "-p",
            "Once upon a time",
            "-n",
            "24",
            "--temp",
            "1.0",
            "--seed",
            seed,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8(out.stdout.clone()).unwrap()
    };
    assert_eq!(run("5"), run("5"));
    assert_ne!(run("5"), run("6"));
}

#[test]
fn a_prompt_longer_than_the_context_is_refused() {
    let path = model(TestModel::Qwen2);
    let out = zinc(&[
        "run",
        "-m",
        path.to_str().unwrap(),
        "-c",
        "8",
        "-p",
        "one two three four five six seven eight nine ten",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("the prompt has") && err.contains("the context holds 8"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn bench_json_is_one_document_with_both_tests() {
    let path = model(TestModel::Gemma3);
    let out = zinc(&[
        "bench",
        "-m",
        path.to_str().unwrap(),
        "-p",
        "16",
        "-n",
        "4",
        "-r",
        "1",
        "-o",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Json = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    let tests: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["test"].as_str().unwrap())
        .collect();
    assert_eq!(tests, ["pp16", "tg4"]);
    assert!(doc["results"][0]["avg_ts"].as_f64().unwrap() > 0.0);
}

#[test]
fn logits_prints_every_position() {
    let path = repo_root().join("tests/fixtures/tiny/qwen3-tiny.gguf");
    let out = zinc(&[
        "logits",
        "-m",
        path.to_str().unwrap(),
        "--tokens",
        "256,72,101",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["logits"].as_array().unwrap().len(), 3);
    assert_eq!(
        doc["logits"][0].as_array().unwrap().len(),
        doc["n_vocab"].as_u64().unwrap() as usize
    );
    let out = zinc(&["logits", "-m", path.to_str().unwrap(), "--tokens", "99999"]);
    assert!(stderr(&out).contains("outside the vocabulary"));
}

/// Rewrites the tiny qwen3 model with `edit` applied to its metadata and tensor list.
fn edited_tiny(dir: &Path, name: &str, edit: impl Fn(&mut GgufWriter, &str) -> bool) -> String {
    let src = GgufModel::open(repo_root().join("tests/fixtures/tiny/qwen3-tiny.gguf")).unwrap();
    let mut w = GgufWriter::new();
    for (k, v) in src.metadata().iter() {
        w.set(k, v.clone()).unwrap();
    }
    for t in src.tensors() {
        if edit(&mut w, &t.info.name) {
            w.add_tensor(&t.info.name, t.info.ty, &t.info.dims, t.data.to_vec())
                .unwrap();
        }
    }
    let p = dir.join(name);
    w.write_to(&p).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn unsupported_or_incomplete_models_fail_at_load_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let missing = edited_tiny(dir.path(), "missing.gguf", |_, n| {
        n != "blk.1.ffn_up.weight"
    });
    let extra = edited_tiny(dir.path(), "extra.gguf", |w, n| {
        if n == "output.weight" {
            w.add_f32_tensor(
                "blk.0.mystery.weight",
                zinc_gguf::GgmlType::F32,
                &[4],
                &[0.0; 4],
            )
            .unwrap();
        }
        true
    });
    let arch = edited_tiny(dir.path(), "arch.gguf", |w, _| {
        w.set("general.architecture", Value::String("mamba".into()))
            .unwrap();
        true
    });
    let iq2 = edited_tiny(dir.path(), "iq2.gguf", |w, n| {
        if n == "blk.0.ffn_up.weight" {
            // IQ2_XXS: 66 bytes per 256 values; we read the format's id but cannot run it.
            w.add_tensor(
                n,
                zinc_gguf::GgmlType::IQ2_XXS,
                &[256, 512],
                vec![0u8; 66 * 512],
            )
            .unwrap();
            return false;
        }
        true
    });
    let cases = [
        (iq2, "tensor \"blk.0.ffn_up.weight\" has type IQ2_XXS, which the cpu backend does not support"),
        (missing, "tensor \"blk.1.ffn_up.weight\" is missing"),
        (extra, "blk.0.mystery.weight"),
        (arch, "architecture \"mamba\" is not supported"),
    ];
    for (path, needle) in cases {
        let out = zinc(&["logits", "-m", &path, "--tokens", "1"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(needle), "expected {needle:?} in {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
