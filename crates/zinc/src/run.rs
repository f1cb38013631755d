//! `zinc run`: stream a completion; `zinc logits`: every position's logits for given tokens.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use zinc_backend::Backend;
use zinc_engine::{Finish, GenerateParams, SamplerConfig};
use zinc_tokenizer::{ChatMessage, ChatTemplate, RenderOptions, TemplateSource};

use crate::load::{self, ModelArgs};

#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// The prompt (special tokens such as <|im_start|> are parsed unless --no-special).
    #[arg(short, long)]
    pub prompt: String,
    /// Tokens to generate at most.
    #[arg(short = 'n', long, default_value_t = 256)]
    pub n_predict: usize,
    /// Context size in tokens (default: the model's training context, at most 4096).
    #[arg(short = 'c', long)]
    pub ctx: Option<usize>,
    /// Temperature; 0 is greedy.
    #[arg(long, default_value_t = 0.8)]
    pub temp: f32,
    #[arg(long, default_value_t = 40)]
    pub top_k: usize,
    #[arg(long, default_value_t = 0.95)]
    pub top_p: f32,
    #[arg(long, default_value_t = 0.05)]
    pub min_p: f32,
    #[arg(long, default_value_t = 1.0)]
    pub repeat_penalty: f32,
    #[arg(long, default_value_t = 64)]
    pub repeat_last_n: usize,
    #[arg(long, default_value_t = 0.0)]
    pub presence_penalty: f32,
    #[arg(long, default_value_t = 0.0)]
    pub frequency_penalty: f32,
    /// Random seed (default: a fresh one each run).
    #[arg(short, long)]
    pub seed: Option<u64>,
    /// Stop when this text is generated (repeatable); it is not printed.
    #[arg(long)]
    pub stop: Vec<String>,
    /// Render the prompt with the model's chat template as a user message.
    #[arg(long)]
    pub chat: bool,
    /// System prompt for --chat.
    #[arg(long, requires = "chat")]
    pub system: Option<String>,
    /// Treat special-token text in the prompt as plain text.
    #[arg(long)]
    pub no_special: bool,
    /// Keep generating past end-of-generation tokens.
    #[arg(long)]
    pub ignore_eos: bool,
}

pub fn default_ctx(n_ctx_train: usize) -> usize {
    if n_ctx_train == 0 {
        4096
    } else {
        n_ctx_train.min(4096)
    }
}

pub fn run(args: &RunArgs) -> Result<()> {
    load::no_clock(&args.model, "run")?;
    let (engine, file) = load::engine(&args.model)?;
    crate::with_engine!(engine, e => run_with(args, e, &file))
}

fn run_with<B: Backend>(
    args: &RunArgs,
    engine: zinc_engine::Engine<B>,
    file: &zinc_gguf::GgufModel,
) -> Result<()> {
    let tok = &engine.tokenizer;
    let prompt_text = if args.chat {
        let t = ChatTemplate::from_metadata(file.metadata(), tok)?;
        if let TemplateSource::Fallback(f) = t.source() {
            eprintln!(
                "zinc: the model has no chat template; using the {f} format for its architecture"
            );
        }
        let mut msgs = Vec::new();
        if let Some(s) = &args.system {
            msgs.push(ChatMessage::new("system", s));
        }
        msgs.push(ChatMessage::new("user", &args.prompt));
        t.render(
            &msgs,
            &RenderOptions {
                add_generation_prompt: true,
                ..Default::default()
            },
        )?
    } else {
        args.prompt.clone()
    };
    // Special-token text is parsed (and a doubled BOS dropped) unless --no-special.
    let prompt = if args.chat || !args.no_special {
        tok.encode_chat(&prompt_text)
    } else {
        tok.encode(&prompt_text, true, false)
    };
    if prompt.is_empty() {
        bail!("the prompt is empty");
    }
    let n_ctx = args
        .ctx
        .unwrap_or_else(|| default_ctx(engine.model.hparams().n_ctx_train));
    let params = GenerateParams {
        max_tokens: args.n_predict,
        sampler: SamplerConfig {
            temperature: args.temp,
            top_k: args.top_k,
            top_p: args.top_p,
            min_p: args.min_p,
            repeat_penalty: args.repeat_penalty,
            presence_penalty: args.presence_penalty,
            frequency_penalty: args.frequency_penalty,
            penalty_last_n: args.repeat_last_n,
            seed: args.seed.unwrap_or_else(rand::random),
        },
        stop: args.stop.clone(),
        ignore_eos: args.ignore_eos,
        ..Default::default()
    };
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        // A second Ctrl-C (handler already set, e.g. in tests) is not an error worth failing on.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    let mut session = engine.session(n_ctx);
    let mut out = std::io::stdout().lock();
    let mut write_failed = None;
    let gen = session.generate(&prompt, &params, |text| {
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
            write_failed = Some(e);
            return false;
        }
        !interrupted.load(Ordering::SeqCst)
    })?;
    if let Some(e) = write_failed {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    writeln!(out)?;
    let pp = gen.prompt_tokens as f64 / gen.prompt_time.as_secs_f64().max(1e-9);
    let tg = gen.tokens.len() as f64 / gen.gen_time.as_secs_f64().max(1e-9);
    let why = match gen.finish {
        Finish::Stop => "stop",
        Finish::Length => "length",
        Finish::Cancelled => "interrupted",
    };
    eprintln!(
        "zinc: prompt {} tokens in {:.2} s ({pp:.1} tok/s); generated {} tokens in {:.2} s ({tg:.1} tok/s); finish: {why}",
        gen.prompt_tokens,
        gen.prompt_time.as_secs_f64(),
        gen.tokens.len(),
        gen.gen_time.as_secs_f64()
    );
    Ok(())
}

#[derive(clap::Args)]
pub struct LogitsArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Token ids, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub tokens: Vec<u32>,
    /// Write the JSON here instead of stdout.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

#[derive(serde::Serialize)]
struct LogitsReport {
    tokens: Vec<u32>,
    n_vocab: usize,
    /// One row of `n_vocab` logits per position.
    logits: Vec<Vec<f32>>,
}

/// Runs without a tokenizer: only the token ids and the model are needed.
pub fn logits(args: &LogitsArgs) -> Result<()> {
    load::no_clock(&args.model, "logits")?;
    let file = load::open_file(&args.model.model)?;
    match load::choose(&args.model)? {
        load::BackendChoice::Cpu => logits_with(args, load::cpu_backend(&args.model)?, file),
        load::BackendChoice::Vulkan(o) => logits_with(args, load::vulkan_backend(&o)?, file),
    }
}

fn logits_with<B: Backend + 'static>(
    args: &LogitsArgs,
    b: B,
    file: std::sync::Arc<zinc_gguf::GgufModel>,
) -> Result<()> {
    let model = zinc_models::load(&b, file)
        .with_context(|| format!("cannot load {}", args.model.model.display()))?;
    let n_vocab = model.hparams().n_vocab;
    if let Some(&bad) = args.tokens.iter().find(|&&t| t as usize >= n_vocab) {
        bail!("token id {bad} is outside the vocabulary of {n_vocab}");
    }
    let n = args.tokens.len();
    let mut cache = model.new_cache(&b, n);
    let positions: Vec<u32> = (0..n as u32).collect();
    let rows: Vec<usize> = (0..n).collect();
    let out = model.forward(&b, &mut cache, &args.tokens, &positions, &rows)?;
    let flat = b.read(&out);
    let report = LogitsReport {
        tokens: args.tokens.clone(),
        n_vocab,
        logits: flat.chunks_exact(n_vocab).map(<[f32]>::to_vec).collect(),
    };
    match &args.output {
        Some(p) => {
            let f = std::fs::File::create(p)
                .with_context(|| format!("cannot write {}", p.display()))?;
            serde_json::to_writer(std::io::BufWriter::new(f), &report)?;
        }
        None => {
            let mut out = std::io::stdout().lock();
            serde_json::to_writer(&mut out, &report)?;
            writeln!(out)?;
        }
    }
    Ok(())
}
