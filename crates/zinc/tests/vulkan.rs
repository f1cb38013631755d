//! The release binary on `--backend vulkan` (lavapipe in CI) against `--backend cpu`:
//! perplexity within 0.5% on two chunks of the GPL text.

use std::process::Command;

use zinc_testdata::{model, repo_root, TestModel};

fn perplexity(backend: &str) -> f64 {
    let out = Command::new(env!("CARGO_BIN_EXE_zinc"))
        .args([
            "perplexity",
            "--backend",
            backend,
            "-c",
            "128",
            "--chunks",
            "2",
            "-m",
        ])
        .arg(model(TestModel::Gemma3))
        .arg("-f")
        .arg(repo_root().join("tests/fixtures/text/gpl-3.0.txt"))
        .output()
        .expect("run zinc");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{backend}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.split("PPL = ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no PPL in {text}"))
}

#[test]
fn vulkan_perplexity_is_within_half_a_percent_of_the_cpu() {
    let cpu = perplexity("cpu");
    let vk = perplexity("vulkan");
    let rel = (vk - cpu).abs() / cpu;
    eprintln!(
        "Gemma 3 270M, 2 chunks of 128: cpu {cpu:.4}, vulkan {vk:.4} ({:+.3}%)",
        100.0 * (vk - cpu) / cpu
    );
    assert!(rel <= 0.005, "cpu {cpu} vulkan {vk}");
}

/// Without a Vulkan driver: `--backend vulkan` fails with one clear line, `auto` runs on the CPU
/// and says why.
#[test]
fn without_a_vulkan_driver_auto_falls_back_to_the_cpu() {
    let run = |backend: &str| {
        Command::new(env!("CARGO_BIN_EXE_zinc"))
            .args([
                "run",
                "--backend",
                backend,
                "-n",
                "2",
                "--temp",
                "0",
                "-p",
                "Hi",
                "-m",
            ])
            .arg(model(TestModel::Gemma3))
            .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
            .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
            .output()
            .expect("run zinc")
    };
    let out = run("vulkan");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("no usable Vulkan device"), "{err}");
    let out = run("auto");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("running on the CPU"), "{err}");
}
