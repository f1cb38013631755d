//! The release binary on `--backend vulkan` (lavapipe in CI) against `--backend cpu`:
//! perplexity on two chunks of the GPL text, Qwen2.5 within 1.5%, Gemma 3 within 5%.

use std::process::Command;

use zinc_testdata::{model, repo_root, TestModel};

fn perplexity(m: TestModel, backend: &str) -> f64 {
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
        .arg(model(m))
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

/// The bounds are the backends' arithmetic, not slack for bugs (a wrong kernel moves perplexity
/// by far more): mat-vec products are bit-identical (integer dots on the same 8-bit activations),
/// but exp, sin/cos and summation orders differ in the last bits, and through the f16 KV cache
/// and 8-bit activations that moves logits. Gemma 3 270M is the sensitive one: the CPU backend's
/// own two attention paths (f16 under 64 rows, f32 above, same math) put its logits 0.4–0.7 apart
/// (RMS) on the same tokens, and its perplexity on 2 × 128 tokens moves by several percent with
/// such noise (measured: Vulkan +3.9% with integer dots, +0.35% with float mat-vecs). Qwen2.5
/// moves less (measured −0.6% / +0.65%).
#[test]
fn vulkan_perplexity_follows_the_cpu() {
    for (m, name, bound) in [
        (TestModel::Qwen2, "Qwen2.5 0.5B", 0.015),
        (TestModel::Gemma3, "Gemma 3 270M", 0.05),
    ] {
        let cpu = perplexity(m, "cpu");
        let vk = perplexity(m, "vulkan");
        let rel = (vk - cpu).abs() / cpu;
        eprintln!(
            "{name}, 2 chunks of 128: cpu {cpu:.4}, vulkan {vk:.4} ({:+.3}%)",
            100.0 * (vk - cpu) / cpu
        );
        assert!(rel <= bound, "{name}: cpu {cpu} vulkan {vk}");
    }
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

/// `zinc bench --ablate`: after the test, the same test once without each kernel it ran; the
/// table lists every kernel of a generation step with its calls a token (a tiny Qwen3: two
/// layers, so two norms a layer's pre-norms and one attention a layer). The CPU backend says
/// it cannot.
#[test]
fn bench_ablate_measures_each_kernel_left_out() {
    let tiny = repo_root().join("tests/fixtures/tiny/qwen3-tiny.gguf");
    let bench = |backend: &str| {
        Command::new(env!("CARGO_BIN_EXE_zinc"))
            .args([
                "bench",
                "--backend",
                backend,
                "-p",
                "0",
                "-n",
                "2",
                "-r",
                "1",
                "--ablate",
                "-m",
            ])
            .arg(&tiny)
            .output()
            .expect("run zinc")
    };
    let out = bench("vulkan");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let table = err
        .split("What each kernel costs (tg2, ")
        .nth(1)
        .unwrap_or_else(|| panic!("no ablation table in {err}"));
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(3)
        .take_while(|l| l.starts_with("| "))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    let calls = |name: &str| {
        rows.iter()
            .find(|r| r[0] == name)
            .map(|r| r[1].parse::<f64>().unwrap())
            .unwrap_or_else(|| panic!("no {name} row in {table}"))
    };
    let layers = 2.0;
    assert_eq!(calls("attention"), layers, "{table}");
    // The device's share of the timed run (its two timestamps a step against the wall clock):
    // some, and not more than all of it.
    let share: f64 = err
        .split("the device spanned steps ")
        .nth(1)
        .and_then(|t| t.split('%').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no device share in {err}"));
    assert!(share > 0.0 && share <= 101.0, "{err}");
    // The device's idle µs between tokens, and the host's part of them in parts that add up to
    // no more than it (`Backend::host_gaps`).
    let idle_text = err
        .split(" µs idle between tokens, ")
        .nth(1)
        .unwrap_or_else(|| panic!("no idle time in {err}"));
    let num = |after: &str| -> f64 {
        idle_text
            .split(after)
            .next()
            .and_then(|t| t.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no figure before {after:?} in {idle_text}"))
    };
    let (host, copying, before) = (
        num(" of them on the host"),
        num(" copying the logits"),
        num(" more before the next step's first command"),
    );
    assert!(host > 0.0 && copying >= 0.0 && before >= 0.0, "{idle_text}");
    assert!(copying + before <= host + 0.2, "{idle_text}");
    assert_eq!(calls("qk_prep"), layers, "{table}");
    for r in &rows {
        let tps: f64 = r[2].parse().unwrap();
        assert!(tps > 0.0, "{table}");
        assert!(!r[0].starts_with("moe_route"), "{table}");
    }
    let out = bench("cpu");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("cannot leave kernels out"), "{err}");
}

/// `zinc bench -o json` on Vulkan: each test carries the host's waiting share and the share the
/// device's steps spanned (fractions of the timed runs), and generation the device's idle µs
/// between tokens; the CPU backend tells none of them.
#[test]
fn bench_json_reports_where_the_time_went() {
    let tiny = repo_root().join("tests/fixtures/tiny/qwen3-tiny.gguf");
    let bench = |backend: &str| -> serde_json::Value {
        let out = Command::new(env!("CARGO_BIN_EXE_zinc"))
            .args([
                "bench",
                "--backend",
                backend,
                "-p",
                "8",
                "-n",
                "4",
                "-r",
                "1",
            ])
            .args(["-o", "json", "-m"])
            .arg(&tiny)
            .output()
            .expect("run zinc");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("one JSON document")
    };
    let doc = bench("vulkan");
    let results = doc["results"].as_array().expect("results");
    assert_eq!(results.len(), 2, "{doc}");
    for r in results {
        for k in ["host_wait_share", "device_span_share"] {
            let v = r[k].as_f64().unwrap_or_else(|| panic!("no {k} in {r}"));
            assert!(v > 0.0 && v <= 1.01, "{k} {v} in {r}");
        }
    }
    let idle = |r: &serde_json::Value| r["idle_us_per_token"].as_f64();
    assert_eq!(
        idle(&results[0]),
        None,
        "a prompt has no tokens between steps: {doc}"
    );
    assert!(idle(&results[1]).is_some_and(|u| u >= 0.0), "{doc}");
    // Dependent stages: a decode step of this 2-layer model has at least a norm, the
    // projections, the attention, the out-projection, a norm and the FFN's two stages a layer
    // (lavapipe's kernels); four tokens from an empty context keep one plan, so each takes the
    // same count (a whole number a token).
    let stages = |r: &serde_json::Value| r["stages_per_step"].as_f64();
    let tg = stages(&results[1]).unwrap_or_else(|| panic!("no stages in {doc}"));
    assert!(
        tg >= 2.0 * 7.0 && tg.fract() == 0.0,
        "{tg} stages a token: {doc}"
    );
    assert!(stages(&results[0]).is_some_and(|p| p >= tg), "{doc}");
    // The host's recording of a step takes time. The first generated step goes in pieces (the
    // first after 8 commands); each later one was recorded ahead, while the device ran the one
    // before, and went whole (`--vk-step-ahead`).
    let rec = results[1]["recording_us_per_token"].as_f64();
    assert!(rec.is_some_and(|u| u > 0.0), "{doc}");
    let pieces = results[1]["pieces_per_token"].as_f64();
    assert!(pieces.is_some_and(|p| p >= 0.25), "{doc}");
    assert_eq!(results[1]["ahead_share"].as_f64(), Some(0.75), "{doc}");
    assert!(results[0].get("recording_us_per_token").is_none(), "{doc}");
    let doc = bench("cpu");
    for r in doc["results"].as_array().expect("results") {
        assert!(r.get("device_span_share").is_none(), "{r}");
        assert!(r.get("stages_per_step").is_none(), "{r}");
    }
}

/// `zinc bench --profile`: besides the profile of every run, a table a test over its timed runs
/// alone. The tiny 2-layer Qwen3 on lavapipe, `-p 8 -n 4 -r 2`: a timed generation run's kernels
/// each run a whole number of times a token (the four tokens repeat one step), a prompt run's
/// q/k prep (`qk_prep`, or `qk_prep_rows` where a prompt takes a subgroup a head) once a layer;
/// and the whole profile's q/k prep calls are the per-run counts times each test's runs,
/// warm-ups (counted from the log) and timed runs both — so the timed tables left the warm-ups
/// out.
#[test]
fn bench_profile_of_the_timed_runs_leaves_warm_ups_out() {
    let tiny = repo_root().join("tests/fixtures/tiny/qwen3-tiny.gguf");
    let out = Command::new(env!("CARGO_BIN_EXE_zinc"))
        .args([
            "bench",
            "--backend",
            "vulkan",
            "-p",
            "8",
            "-n",
            "4",
            "-r",
            "2",
            "--profile",
        ])
        .arg("-m")
        .arg(&tiny)
        .output()
        .expect("run zinc");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Kernel rows of the table under `header`: (name, its fourth column).
    let rows = |header: &str| -> Vec<(String, f64)> {
        let table = err
            .split(header)
            .nth(1)
            .unwrap_or_else(|| panic!("no table {header} in {err}"));
        table
            .lines()
            .skip(3)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let c: Vec<&str> = l.split('|').map(str::trim).collect();
                (c[1].to_string(), c[4].parse().expect("a count"))
            })
            .collect()
    };
    let tg = rows("one timed tg4 run (the mean of 2 runs");
    let pp = rows("one timed pp8 run (the mean of 2 runs");
    assert!(!tg.is_empty() && !pp.is_empty(), "{err}");
    for (k, calls) in &tg {
        assert!(
            *calls >= 4.0 && calls % 4.0 == 0.0,
            "{k}: {calls} calls a 4-token run\n{err}"
        );
    }
    // The q/k prep's calls, whichever of its two kernels ran.
    let calls_of = |t: &[(String, f64)]| -> f64 {
        t.iter()
            .filter(|r| r.0 == "qk_prep" || r.0 == "qk_prep_rows")
            .map(|r| r.1)
            .sum()
    };
    let (pp_qk, tg_qk) = (calls_of(&pp), calls_of(&tg));
    assert_eq!(pp_qk, 2.0, "a prompt run: the q/k prep once a layer\n{err}");
    assert!(tg_qk > 0.0, "{err}");
    let warmups = |t: &str| {
        err.matches(&format!("zinc bench: {t} run 0 (warm-up)"))
            .count()
    };
    let (wp, wt) = (warmups("pp8"), warmups("tg4"));
    assert!(wp >= 1 && wt >= 1, "{err}");
    let all = rows("GPU time per kernel over every run above (warm-ups included):");
    let whole = calls_of(&all);
    assert_eq!(
        whole,
        (wp + 2) as f64 * pp_qk + (wt + 2) as f64 * tg_qk,
        "{wp} + 2 prompt runs, {wt} + 2 generation runs\n{err}"
    );
}

/// `zinc sync-cost` (hidden, timing): both kinds of stage measured on the device, one
/// workgroup by default on a CPU device; bad counts refused by name.
/// The last column's figures of the rows starting with any of `rows` in `text`'s table under
/// `header` (up to the blank line after it).
fn table_figures(text: &str, header: &str, rows: &[&str]) -> Vec<f64> {
    let table = text
        .split(header)
        .nth(1)
        .unwrap_or_else(|| panic!("no table {header} in {text}"));
    table
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| rows.iter().any(|r| l.starts_with(r)))
        .map(|l| {
            let cell = l.trim_end_matches(" |").rsplit("| ").next().unwrap();
            cell.parse().unwrap_or_else(|_| panic!("not a figure: {l}"))
        })
        .collect()
}

#[test]
fn sync_cost_measures_both_kinds_of_stage() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_zinc"))
            .args(["sync-cost", "--backend", "vulkan"])
            .args(args)
            .output()
            .expect("run zinc")
    };
    let out = run(&["--rounds", "8", "--groups", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("| pipeline barrier between one-workgroup dispatches |"),
        "{text}"
    );
    assert!(
        text.contains("| 1 workgroups meeting inside one dispatch |") && !text.contains("did not"),
        "{text}"
    );
    // The host's recording, by its parts: four rows, each a positive figure.
    let host = table_figures(&text, "| the host recording | µs a command |", &["| a "]);
    assert!(host.len() == 4 && host.iter().all(|&us| us > 0.0), "{text}");
    // The round trip: a submit and the wait for its fence, each a positive figure.
    let rows = ["| submitting ", "| from that submit "];
    let trip = table_figures(&text, "| the host's round trip (medians) | µs |", &rows);
    assert!(trip.len() == 2 && trip.iter().all(|&us| us > 0.0), "{text}");
    for bad in [
        &["--rounds", "1"][..],
        &["--groups", "0"][..],
        &["--vk-skip", "barrier"][..],
    ] {
        let out = run(bad);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(bad[0]), "{err}");
    }
}
