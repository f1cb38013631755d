//! Every pre-tokenizer splits text exactly as Python's `regex` package does with the published
//! pattern (`scripts/regex_split.py`), on the tokenizer corpus and on random strings drawn from
//! the character classes the patterns distinguish.

use std::io::Write;
use std::process::{Command, Stdio};

use rand::{Rng, SeedableRng};
use zinc_testdata::{python, repo_root};
use zinc_tokenizer::Pre;

fn python_split(patterns: &[&str], texts: &[String]) -> Vec<Vec<String>> {
    let mut child = Command::new(python())
        .arg(repo_root().join("scripts/regex_split.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run regex_split.py");
    let req = serde_json::json!({ "patterns": patterns, "texts": texts });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(req.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "regex_split.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Characters from every class the patterns care about.
const ALPHABET: &[&str] = &[
    "a", "Z", "é", "ß", "Σ", "ς", "Ж", "ж", "ǅ", "ʰ", "中", "あ", "ア", "한", "ก", "अ", "ि",
    "\u{301}", "\u{64b}", "א", "ب", "0", "7", "٣", "৫", "½", "Ⅻ", "²", " ", "  ", "\t", "\n", "\r",
    "\r\n", "\u{a0}", "\u{3000}", "\u{2028}", "\u{b}", "\u{c}", "\u{1c}", "\u{85}", "\u{200b}",
    "'", "'s", "'S", "'ll", "'Re", "’", ".", ",", "!", "?", "-", "_", "/", "\\", "(", ")", "$",
    "+", "<", "=", ">", "^", "~", "|", "`", "@", "#", "%", "&", "*", "😀", "👍🏽", "‍", "🇫🇷",
    "\u{fe0f}", "\u{1}", "\u{7f}",
];

fn random_texts(n: usize, seed: u64) -> Vec<String> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let len = rng.gen_range(1..40);
            (0..len)
                .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())])
                .collect()
        })
        .collect()
}

fn corpus() -> Vec<String> {
    let p = repo_root().join("tests/fixtures/tokenizer/corpus.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn pre_tokenizers_split_like_python_regex() {
    let mut texts = corpus();
    texts.extend(random_texts(3000, 42));
    for name in ["gpt2", "llama3", "qwen2", "qwen35", "gpt-4o", "default"] {
        let pre = Pre::for_name(name).unwrap();
        let patterns = Pre::expressions(name).unwrap();
        let want = python_split(patterns, &texts);
        let mut bad = Vec::new();
        for (t, w) in texts.iter().zip(&want) {
            let got: Vec<&str> = pre.split(t);
            if got != *w {
                bad.push(format!("{t:?}\n  python {w:?}\n  zinc   {got:?}"));
            }
        }
        assert!(
            bad.is_empty(),
            "{name}: {} of {} texts split differently\n{}",
            bad.len(),
            texts.len(),
            bad[..bad.len().min(5)].join("\n")
        );
    }
}

#[test]
fn unknown_pre_tokenizers_are_named() {
    let err = Pre::for_name("chameleon").err().unwrap().to_string();
    assert!(err.contains("chameleon"), "{err}");
}
