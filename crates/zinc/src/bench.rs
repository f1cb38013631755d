//! `zinc bench`: prompt processing and generation speed, measured as llama-bench does: each test
//! from an empty cache (after `-d` tokens of depth when asked), a warm-up run (repeated until
//! the warm-ups took a second and stopped getting faster: a GPU's first short runs can be
//! slow), then `-r` repetitions;
//! random tokens, end-of-sequence ignored.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use rand::{Rng, SeedableRng};
use serde::Serialize;
use zinc_backend::Backend;
use zinc_engine::Logits;

use crate::load::{self, ModelArgs};

#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Prompt tokens (0 skips the test).
    #[arg(short = 'p', long = "n-prompt", default_value_t = 512)]
    pub n_prompt: usize,
    /// Generated tokens (0 skips the test).
    #[arg(short = 'n', long = "n-gen", default_value_t = 128)]
    pub n_gen: usize,
    /// Tokens already in the cache before each test.
    #[arg(short = 'd', long, default_value_t = 0)]
    pub depth: usize,
    /// Repetitions.
    #[arg(short = 'r', long, default_value_t = 5)]
    pub reps: usize,
    /// Output: `md` (a table) or `json` (one document on stdout).
    #[arg(short = 'o', long, default_value = "md")]
    pub output: String,
    /// Vulkan: also measure what each kernel costs, by running each test again without it, one
    /// kernel at a time (those runs' results are wrong; their timing is real). Tables on stderr.
    #[arg(long)]
    pub ablate: bool,
    /// With `--ablate`: each kernel run twice instead of left out (the second after a barrier
    /// of its own), so what a run loses is what the kernel takes on its own, without the
    /// overlap of its neighbours that leaving it out allows.
    #[arg(long, requires = "ablate")]
    pub twice: bool,
    /// Generation copies each token's logits into a new vector (as the read before
    /// `Session::eval_last_with` did; comparisons).
    #[arg(long, hide = true)]
    pub copy_logits: bool,
    /// With `--vk-clock`: also write each clocked generated token's stages to this file (JSON:
    /// a list of tokens, each a list of stages with their label, workgroups that wrote a
    /// record and that were dispatched of clocked kernels, first start, last
    /// start and last end, workgroups' median and largest duration in ns, median SM cycles,
    /// and the kernel's marks in ns from a workgroup's start); `scripts/plot_clock.py` draws
    /// them.
    #[arg(long, requires = "vk_clock")]
    pub clock_out: Option<std::path::PathBuf>,
}

/// A clocked stage as `--clock-out` writes it.
#[derive(Serialize)]
struct ClockStageOut<'a> {
    label: &'a str,
    groups: u64,
    expected: u64,
    first_start: f64,
    last_start: f64,
    last_end: f64,
    wg_median: f64,
    wg_max: f64,
    cycles_median: f64,
    end90: f64,
    marks: [f64; zinc_backend::CLOCK_MARKS],
}

#[derive(Serialize)]
struct TestResult {
    test: String,
    n_prompt: usize,
    n_gen: usize,
    depth: usize,
    reps: usize,
    /// Mean tokens per second over the repetitions, and its standard deviation.
    avg_ts: f64,
    stddev_ts: f64,
    samples_ts: Vec<f64>,
    /// Share of the timed runs the host waited for the device, and the share the device's
    /// steps spanned (first command to last), where the backend tells; µs the device sat idle
    /// between generated tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    host_wait_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device_span_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idle_us_per_token: Option<f64>,
    /// Of the idle time, µs a generated token the host spent between seeing a step finish and
    /// sending the next one's first work (`Backend::host_gaps`); of that, µs copying the
    /// logits out, and µs more before the next step's first command.
    #[serde(skip_serializing_if = "Option::is_none")]
    host_gap_us_per_token: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_us_per_token: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    before_recording_us_per_token: Option<f64>,
    /// The host's µs a generated token recording the step (first command to last submit, its
    /// waits left out), and the pieces a step went to the device in before its last submit.
    #[serde(skip_serializing_if = "Option::is_none")]
    recording_us_per_token: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pieces_per_token: Option<f64>,
    /// The share of generated tokens whose step was recorded ahead and sent whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    ahead_share: Option<f64>,
    /// Dependent stages (barriers) a generated token or a prompt run took, where the backend
    /// tells (`Backend::dependent_stages`).
    #[serde(skip_serializing_if = "Option::is_none")]
    stages_per_step: Option<f64>,
}

#[derive(Serialize)]
struct BenchReport {
    model: String,
    model_size: u64,
    n_params: u64,
    backend: String,
    threads: usize,
    results: Vec<TestResult>,
}

fn stats(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// Warm-up runs of each test: repeated until together they took this long, at most WARMUPS.
const WARMUP_SECS: f64 = 1.0;
const WARMUPS: usize = 20;

pub fn bench(args: &BenchArgs) -> Result<()> {
    if args.output != "md" && args.output != "json" {
        bail!("-o must be md or json");
    }
    if args.reps == 0 {
        bail!("-r must be at least 1");
    }
    let (engine, file) = load::engine(&args.model)?;
    crate::with_engine!(engine, e => bench_with(args, e, &file))
}

/// One test of a bench: `n` prompt tokens at once (`pp`) or `n` generated one by one (`tg`),
/// after the depth tokens.
struct Test<'a> {
    kind: &'static str,
    n: usize,
    n_ctx: usize,
    reps: usize,
    depth_tokens: &'a [u32],
    copy_logits: bool,
}

/// A test's timed repetitions.
struct Measured {
    /// Tokens per second of each repetition.
    samples: Vec<f64>,
    /// Wall time of every evaluation, warm-ups and depth included.
    run_secs: f64,
    /// Host time blocked on the device during the repetitions, and their wall time.
    timed_wait: f64,
    timed_secs: f64,
    /// The device's time on the repetitions' steps (`Backend::device_busy`), where it tells.
    timed_busy: Option<f64>,
    /// Dependent stages over the repetitions (`Backend::dependent_stages`), where it tells.
    timed_stages: Option<u64>,
    /// The host's gaps between steps over the repetitions (`Backend::host_gaps`).
    timed_gaps: Option<zinc_backend::HostGaps>,
    /// Each timed generated token as the kernels' clock saw it (`Backend::clock_step`), where
    /// the backend clocks them.
    clocks: Vec<zinc_backend::ClockStep>,
    /// The kernels' profile (`Backend::profile_report`) over the repetitions alone: per
    /// kernel, ms and calls (warm-ups and depth prefills left out), where the backend profiles.
    timed_profile: Option<BTreeMap<String, (f64, u64)>>,
}

impl Test<'_> {
    /// The test's evaluation of `toks` (after the depth): all at once, or one by one.
    /// With `clocks`, each generated token's stages by the kernels' clock are pushed there.
    fn run<B: Backend>(
        &self,
        session: &mut zinc_engine::Session<'_, B>,
        toks: &[u32],
        mut clocks: Option<(&B, &mut Vec<zinc_backend::ClockStep>)>,
    ) -> Result<()> {
        if self.kind == "pp" {
            session.eval(toks, Logits::Last)?;
        } else {
            // Each token's logits in host memory, as llama-bench leaves them (read in place,
            // not copied into a vector nobody reads).
            for &t in toks {
                if self.copy_logits {
                    session.eval(&[t], Logits::Last)?;
                } else {
                    session.eval_last_with(&[t], |_| ())?;
                }
                if let Some((b, out)) = &mut clocks {
                    out.extend(b.clock_step());
                }
            }
        }
        Ok(())
    }

    /// Warm-ups, then the repetitions (`log`: each run's speed on stderr).
    fn measure<B: Backend>(
        &self,
        engine: &zinc_engine::Engine<B>,
        random: &mut dyn FnMut(usize) -> Vec<u32>,
        log: bool,
    ) -> Result<Measured> {
        let (kind, n) = (self.kind, self.n);
        let mut m = Measured {
            samples: Vec::new(),
            run_secs: 0.0,
            timed_wait: 0.0,
            timed_secs: 0.0,
            timed_busy: None,
            timed_stages: None,
            timed_gaps: None,
            clocks: Vec::new(),
            timed_profile: None,
        };
        // Clocked kernels: what ran before this test is let go.
        let clocking = engine.backend.clock_reset();
        // Warm-ups (rep 0) repeat until they have run for a second and the last was no more
        // than 5% faster than the one before (at most WARMUPS times): after one short warm-up,
        // the H200's prompt-512 runs climbed 3,429, 5,257, 7,007, 7,883 tok/s (the cause was
        // not pinned down; clocks ramping up after the idle model load is the likely one), and
        // a first warm-up that makes one-time copies of weights can take the second alone.
        let mut warm = 0.0f64;
        let mut warmups = 0;
        let mut last_speed = 0.0f64;
        let mut rep = 0;
        while rep <= self.reps {
            let mut session = engine.session(self.n_ctx);
            if !self.depth_tokens.is_empty() {
                let t0 = Instant::now();
                session.eval(self.depth_tokens, Logits::Last)?;
                m.run_secs += t0.elapsed().as_secs_f64();
            }
            let toks = random(n);
            let waited0 = engine.backend.host_waited();
            let busy0 = engine.backend.device_busy();
            let stages0 = engine.backend.dependent_stages();
            let gaps0 = engine.backend.host_gaps();
            // The clock's records of the timed generated tokens (the depth's let go first).
            let clocks = (clocking && rep > 0 && kind == "tg").then(|| {
                engine.backend.clock_reset();
                (&engine.backend, &mut m.clocks)
            });
            let prof0 = (rep > 0).then(|| engine.backend.profile_report()).flatten();
            let t0 = Instant::now();
            self.run(&mut session, &toks, clocks)?;
            let secs = t0.elapsed().as_secs_f64();
            m.run_secs += secs;
            if let (Some(a), Some(b)) = (prof0, engine.backend.profile_report()) {
                let before: BTreeMap<String, (f64, u64)> =
                    a.into_iter().map(|(k, ms, n)| (k, (ms, n))).collect();
                let acc = m.timed_profile.get_or_insert_with(BTreeMap::new);
                for (k, ms, calls) in b {
                    let (ms0, calls0) = before.get(&k).copied().unwrap_or((0.0, 0));
                    if calls > calls0 {
                        let e = acc.entry(k).or_insert((0.0, 0));
                        e.0 += ms - ms0;
                        e.1 += calls - calls0;
                    }
                }
            }
            if rep > 0 {
                m.samples.push(n as f64 / secs);
                if let (Some(a), Some(b)) = (waited0, engine.backend.host_waited()) {
                    m.timed_wait += (b - a).as_secs_f64();
                    m.timed_secs += secs;
                    if let (Some(a), Some(b)) = (busy0, engine.backend.device_busy()) {
                        *m.timed_busy.get_or_insert(0.0) += (b - a).as_secs_f64();
                    }
                    if let (Some(a), Some(b)) = (stages0, engine.backend.dependent_stages()) {
                        *m.timed_stages.get_or_insert(0) += b - a;
                    }
                    if let (Some(a), Some(b)) = (gaps0, engine.backend.host_gaps()) {
                        let g = m.timed_gaps.get_or_insert_with(Default::default);
                        g.between += b.between - a.between;
                        g.reading += b.reading - a.reading;
                        g.before_recording += b.before_recording - a.before_recording;
                        g.recording += b.recording - a.recording;
                        g.pieces += b.pieces - a.pieces;
                        g.ahead += b.ahead - a.ahead;
                    }
                }
            }
            if log {
                eprintln!(
                    "zinc bench: {kind}{n} run {rep}{}: {:.1} tok/s",
                    if rep == 0 { " (warm-up)" } else { "" },
                    n as f64 / secs
                );
            }
            if rep == 0 {
                warm += secs;
                warmups += 1;
                let speed = n as f64 / secs;
                let climbing = warmups < 2 || speed > 1.05 * last_speed;
                last_speed = speed;
                if (warm < WARMUP_SECS || climbing) && warmups < WARMUPS {
                    continue;
                }
            }
            rep += 1;
        }
        Ok(m)
    }
}

/// A profile's kernels (name, ms, calls; entries in parentheses, which are not kernels, left
/// out by the caller) as a table of one run's mean over `runs` runs (1: their sums) — ms, share,
/// calls and µs a call, the costliest first.
fn kernel_table(kernels: &mut [(String, f64, u64)], runs: usize) -> String {
    kernels.sort_by(|a, b| b.1.total_cmp(&a.1));
    let per = if runs == 1 { "" } else { " a run" };
    let runs = runs.max(1) as f64;
    let total: f64 = kernels.iter().map(|k| k.1).sum();
    let mut out = format!(
        "| kernel | ms{per} | share | calls{per} | µs/call |\n| --- | ---: | ---: | ---: | ---: |"
    );
    for (name, ms, calls) in kernels.iter() {
        out.push_str(&format!(
            "\n| {name} | {:.3} | {:.1}% | {} | {:.1} |",
            ms / runs,
            100.0 * ms / total.max(1e-9),
            *calls as f64 / runs,
            1000.0 * ms / (*calls).max(1) as f64
        ));
    }
    out
}

/// `--profile`: a test's kernels over its `runs` timed runs alone (`Measured::timed_profile`),
/// as one run's mean (`kernel_table`); the spans of whole command buffers (entries in
/// parentheses) on lines after it.
fn timed_profile_table(p: &BTreeMap<String, (f64, u64)>, runs: usize, test: &str) -> String {
    let (other, mut kernels): (Vec<_>, Vec<_>) = (p.iter())
        .map(|(k, &(ms, calls))| (k.clone(), ms, calls))
        .partition(|k| k.0.starts_with('('));
    let mut out = format!(
        "GPU time per kernel in one timed {test} run (the mean of {runs} runs; warm-ups and \
         depth left out):\n{}",
        kernel_table(&mut kernels, runs)
    );
    let runs = runs.max(1) as f64;
    for (name, ms, calls) in &other {
        out.push_str(&format!(
            "\n{name}: {:.3} ms a run over {:.1} submits",
            ms / runs,
            *calls as f64 / runs
        ));
    }
    out
}

/// `--ablate`: the test again without each kernel a run of it dispatches, one at a time. What
/// a run gains without a kernel is what it costs, barriers and launch included (the results
/// are wrong; the timing is real). A table, most costly first.
fn ablation<B: Backend>(
    engine: &zinc_engine::Engine<B>,
    test: &Test,
    random: &mut dyn FnMut(usize) -> Vec<u32>,
    name: &str,
    base: f64,
    twice: bool,
) -> Result<String> {
    // The kernels of one run (the depth's prefill not counted), and how often each ran.
    let mut session = engine.session(test.n_ctx);
    if !test.depth_tokens.is_empty() {
        session.eval(test.depth_tokens, Logits::Last)?;
    }
    engine.backend.ablation(Some(&[]));
    test.run(&mut session, &random(test.n), None)?;
    drop(session);
    let counts = engine.backend.ablation(Some(&[])).unwrap_or_default();
    // The table's title, how each run differs from the base, and its speed column.
    let (title, how, col) = if twice {
        ("takes on its own", "with it run twice", "with twice")
    } else {
        ("costs", "without it", "without")
    };
    let mut rows = Vec::new();
    for (kernel, calls) in &counts {
        let asked = if twice {
            format!("+{kernel}")
        } else {
            kernel.clone()
        };
        engine.backend.ablation(Some(std::slice::from_ref(&asked)));
        let m = test.measure(engine, random, false)?;
        let (tps, _) = stats(&m.samples);
        eprintln!("zinc bench: {name} {col} {kernel}: {tps:.1} tok/s");
        let us = if twice {
            1e6 / tps - 1e6 / base
        } else {
            1e6 / base - 1e6 / tps
        };
        rows.push((kernel.clone(), *calls, tps, us));
    }
    engine.backend.ablation(Some(&[]));
    rows.sort_by(|a, b| b.3.total_cmp(&a.3));
    let per = if test.kind == "pp" {
        "a run"
    } else {
        "a token"
    };
    let mut t = format!(
        "What each kernel {title} ({name}, {base:.1} tok/s): the test {how}\n\
         | kernel | calls {per} | tok/s {col} | µs a token | share |\n\
         | --- | ---: | ---: | ---: | ---: |"
    );
    let token_us = 1e6 / base;
    for (k, calls, tps, us) in rows {
        let calls = match test.kind {
            "pp" => calls as f64,
            _ => calls as f64 / test.n.max(1) as f64,
        };
        t.push_str(&format!(
            "\n| {k} | {calls:.1} | {tps:.1} | {us:.2} | {:.1}% |",
            100.0 * us / token_us
        ));
    }
    Ok(t)
}

fn bench_with<B: Backend>(
    args: &BenchArgs,
    engine: zinc_engine::Engine<B>,
    file: &zinc_gguf::GgufModel,
) -> Result<()> {
    let hp = engine.model.hparams().clone();
    let n_ctx = args.depth + args.n_prompt.max(args.n_gen) + 1;
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let mut random = |n: usize| -> Vec<u32> {
        (0..n)
            .map(|_| rng.gen_range(0..hp.n_vocab as u32))
            .collect()
    };
    let depth_tokens = random(args.depth);
    let mut results = Vec::new();
    let mut tests = Vec::new();
    if args.n_prompt > 0 {
        tests.push(("pp", args.n_prompt));
    }
    if args.n_gen > 0 {
        tests.push(("tg", args.n_gen));
    }
    // Wall time of every timed evaluation (warm-ups and depth prefills too), for the profile.
    let mut run_secs = 0.0f64;
    let mut ablations = Vec::new();
    // Each test's kernels over its timed runs alone (`--profile`).
    let mut profiles = Vec::new();
    for (kind, n) in tests {
        let test = Test {
            kind,
            n,
            n_ctx,
            reps: args.reps,
            depth_tokens: &depth_tokens,
            copy_logits: args.copy_logits,
        };
        let ablate = args.ablate && engine.backend.ablation(Some(&[])).is_some();
        if args.ablate && !ablate {
            bail!(
                "--ablate: the {} backend cannot leave kernels out",
                engine.backend.name()
            );
        }
        let m = test.measure(&engine, &mut random, true)?;
        run_secs += m.run_secs;
        // Near 0% waited: the device outran the host's recording (host-bound). The device's
        // share runs from each step's first command to its last (its waits for a later piece of
        // the step included): the rest of the time it sat idle between steps.
        let timed = m.timed_secs > 0.0;
        let host_wait_share = timed.then(|| m.timed_wait / m.timed_secs);
        let device_span_share = m.timed_busy.filter(|_| timed).map(|b| b / m.timed_secs);
        // The timed generated tokens (for prompts, the timed runs).
        let steps = (m.samples.len() * if kind == "tg" { n } else { 1 }).max(1) as f64;
        let idle_us_per_token = m
            .timed_busy
            .filter(|_| timed && kind == "tg")
            .map(|b| 1e6 * (m.timed_secs - b).max(0.0) / steps);
        // A generated token's stages (a prompt run's, for prompts), and the step time each
        // stands for.
        let stages_per_step = m.timed_stages.filter(|_| timed).map(|s| s as f64 / steps);
        if let Some(s) = stages_per_step.filter(|&s| s > 0.0) {
            let per = if kind == "tg" { "a token" } else { "a prompt" };
            eprintln!(
                "zinc bench: {kind}{n}: {s:.0} dependent stages {per}, {:.1} µs of the step each",
                1e6 * m.timed_secs / steps / s
            );
        }
        let gaps = m.timed_gaps.filter(|_| timed && kind == "tg");
        let per_token = |d: std::time::Duration| 1e6 * d.as_secs_f64() / steps;
        let host_gap_us_per_token = gaps.map(|g| per_token(g.between));
        let read_us_per_token = gaps.map(|g| per_token(g.reading));
        let before_recording_us_per_token = gaps.map(|g| per_token(g.before_recording));
        let recording_us_per_token = gaps.map(|g| per_token(g.recording));
        let pieces_per_token = gaps.map(|g| g.pieces as f64 / steps);
        let ahead_share = gaps.map(|g| g.ahead as f64 / steps);
        if let (Some(r), Some(p), Some(a)) = (recording_us_per_token, pieces_per_token, ahead_share)
        {
            eprintln!(
                "zinc bench: {kind}{n}: the host recorded a step in {r:.1} µs, sent in {p:.1} \
                 pieces before its last submit; {:.0}% of steps recorded ahead and sent whole",
                100.0 * a
            );
        }
        if let Some(w) = host_wait_share {
            let span = device_span_share.map_or(String::new(), |d| {
                let host = match (
                    host_gap_us_per_token,
                    read_us_per_token,
                    before_recording_us_per_token,
                ) {
                    (Some(h), Some(r), Some(b)) => format!(
                        ", {h:.1} of them on the host: {r:.1} copying the logits, {b:.1} more \
                         before the next step's first command, the rest recording its first \
                         piece or launching a step recorded ahead"
                    ),
                    _ => String::new(),
                };
                let idle = idle_us_per_token.map_or(String::new(), |u| {
                    format!(" ({u:.1} µs idle between tokens{host})")
                });
                format!("; the device spanned steps {:.0}% of it{idle}", 100.0 * d)
            });
            eprintln!(
                "zinc bench: {kind}{n}: the host waited for the device {:.0}% of the timed runs{span}",
                100.0 * w
            );
        }
        if !m.clocks.is_empty() {
            eprintln!(
                "zinc bench: {kind}{n}: with --vk-clock the figures above include reading the \
                 clock after every token (a copy, a wait and two barriers): take speeds from a \
                 run without it"
            );
            eprintln!(
                "{}",
                crate::clock_report::table(&m.clocks, &format!("{kind}{n}"))
            );
            if let Some(path) = &args.clock_out {
                let steps: Vec<Vec<ClockStageOut>> = (m.clocks.iter())
                    .map(|step| {
                        (step.stages.iter())
                            .map(|s| ClockStageOut {
                                label: &s.label,
                                groups: s.groups,
                                expected: s.expected,
                                first_start: s.first_start,
                                last_start: s.last_start,
                                last_end: s.last_end,
                                wg_median: s.wg_median,
                                wg_max: s.wg_max,
                                cycles_median: s.cycles_median,
                                end90: s.end90,
                                marks: s.marks,
                            })
                            .collect()
                    })
                    .collect();
                std::fs::write(path, serde_json::to_string(&steps)?)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
        if let Some(p) = &m.timed_profile {
            profiles.push(timed_profile_table(
                p,
                m.samples.len(),
                &format!("{kind}{n}"),
            ));
        }
        let (avg, sd) = stats(&m.samples);
        let depth = if args.depth > 0 {
            format!(" @ d{}", args.depth)
        } else {
            String::new()
        };
        let name = format!("{kind}{n}{depth}");
        if ablate {
            ablations.push(ablation(
                &engine,
                &test,
                &mut random,
                &name,
                avg,
                args.twice,
            )?);
        }
        results.push(TestResult {
            test: name,
            n_prompt: if kind == "pp" { n } else { 0 },
            n_gen: if kind == "tg" { n } else { 0 },
            depth: args.depth,
            reps: args.reps,
            avg_ts: avg,
            stddev_ts: sd,
            samples_ts: m.samples,
            host_wait_share,
            device_span_share,
            idle_us_per_token,
            host_gap_us_per_token,
            read_us_per_token,
            before_recording_us_per_token,
            recording_us_per_token,
            pieces_per_token,
            ahead_share,
            stages_per_step,
        });
    }
    let n_params: u64 = file.tensors().map(|t| t.info.n_elements).sum();
    let report = BenchReport {
        model: args.model.model.display().to_string(),
        model_size: file.file_size(),
        n_params,
        backend: engine.backend.name(),
        threads: rayon::current_num_threads(),
        results,
    };
    if let Some(lines) = engine.backend.kernel_stats() {
        eprintln!("Kernels as the driver compiled them (shader [specialization constants]):");
        for l in lines {
            eprintln!("  {l}");
        }
    }
    if let Some(prof) = engine.backend.profile_report() {
        // Entries in parentheses are not kernels (the span of whole command buffers).
        let (other, mut prof): (Vec<_>, Vec<_>) =
            prof.into_iter().partition(|p| p.0.starts_with('('));
        let total: f64 = prof.iter().map(|p| p.1).sum();
        eprintln!("GPU time per kernel over every run above (warm-ups included):");
        eprintln!("{}", kernel_table(&mut prof, 1));
        for (name, ms, n) in &other {
            if name == zinc_vulkan::PROFILE_SPAN {
                eprintln!(
                    "{name}: {ms:.1} ms over {n} submits, kernels busy {:.1}% of it; wall time of the runs {:.1} ms",
                    100.0 * total / ms.max(1e-9),
                    1000.0 * run_secs
                );
            } else {
                eprintln!("{name}: {ms:.1} ms over {n} submits");
            }
        }
    }
    for table in profiles.iter().chain(&ablations) {
        eprintln!("{table}");
    }
    if args.output == "json" {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("| model | size | params | backend | threads | test | t/s |");
        println!("| --- | ---: | ---: | --- | ---: | ---: | ---: |");
        for r in &report.results {
            println!(
                "| {} | {:.2} MiB | {:.2} M | {} | {} | {} | {:.2} ± {:.2} |",
                hp.arch,
                report.model_size as f64 / (1024.0 * 1024.0),
                report.n_params as f64 / 1e6,
                report.backend,
                report.threads,
                r.test,
                r.avg_ts,
                r.stddev_ts
            );
        }
    }
    Ok(())
}
