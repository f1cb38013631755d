//! `zinc tokenize` and `zinc template` from the command line, against the llama.cpp fixtures.

use std::process::{Command, Output};

use serde_json::Value as Json;
use zinc_testdata::{model, repo_root, TestModel};

fn zinc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zinc"))
        .args(args)
        .output()
        .expect("run zinc")
}

fn fixture(name: &str) -> Json {
    let p = repo_root()
        .join("tests/fixtures/tokenizer")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn tokenize_ids_match_llama_tokenize() {
    for (m, name) in [(TestModel::Gemma3, "gemma3"), (TestModel::Qwen2, "qwen2")] {
        let path = model(m);
        let fx = fixture(name);
        // A few cases through the binary (the library test covers them all).
        for case in fx["cases"].as_array().unwrap().iter().step_by(7) {
            let text = case["text"].as_str().unwrap();
            let out = zinc(&[
                "tokenize",
                "-m",
                path.to_str().unwrap(),
                "--ids",
                "--no-bos",
                "--special",
                text,
            ]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let got: Json = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(got, case["ids"], "{name}: {text:?}");
            let out = zinc(&[
                "tokenize",
                "-m",
                path.to_str().unwrap(),
                "--ids",
                "--no-bos",
                text,
            ]);
            let got: Json = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                got, case["ids_no_special"],
                "{name} without --special: {text:?}"
            );
        }
    }
}

#[test]
fn tokenize_adds_bos_unless_told_not_to() {
    let path = model(TestModel::Gemma3);
    let out = zinc(&[
        "tokenize",
        "-m",
        path.to_str().unwrap(),
        "--ids",
        "Hello world",
    ]);
    let ids: Vec<u32> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids, vec![2, 9259, 1902]);
}

#[test]
fn template_prints_the_rendered_prompt() {
    let fx = fixture("qwen2-templates");
    let path = model(TestModel::Qwen2);
    for case in fx["cases"].as_array().unwrap() {
        let msgs = case["messages"].to_string();
        let out = zinc(&[
            "template",
            "-m",
            path.to_str().unwrap(),
            "--messages",
            &msgs,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            case["prompt"].as_str().unwrap()
        );
    }
    let out = zinc(&[
        "template",
        "-m",
        model(TestModel::Gemma3).to_str().unwrap(),
        "--messages",
        r#"[{"role":"user","content":"Hi"}]"#,
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no chat template; using the gemma format")
    );
    let out = zinc(&[
        "template",
        "-m",
        path.to_str().unwrap(),
        "--messages",
        "not json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: --messages is not valid JSON"));
}
