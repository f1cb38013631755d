//! `zinc serve`: the OpenAI-compatible server; `zinc chat`: the same, opened in the browser.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use zinc_server::{Metrics, ServedModel, ServerConfig, Worker};
use zinc_tokenizer::{ChatTemplate, TemplateSource, Tokenizer};

use crate::load::{self, ModelArgs};
use crate::run::default_ctx;

#[derive(clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Address to listen on (0.0.0.0 for every interface).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Require `Authorization: Bearer KEY` on API requests (or set ZINC_API_KEY).
    #[arg(long, env = "ZINC_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Context size in tokens (default: the model's training context, at most 4096).
    #[arg(short = 'c', long)]
    pub ctx: Option<usize>,
    /// The model's name in the API (default: the file name without .gguf).
    #[arg(long)]
    pub alias: Option<String>,
    /// Largest request body accepted, in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    pub max_body: usize,
    /// A Jinja chat template to use instead of the model's.
    #[arg(long)]
    pub chat_template_file: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
pub struct ChatArgs {
    #[command(flatten)]
    pub serve: ServeArgs,
    /// Print the address instead of opening a browser.
    #[arg(long)]
    pub no_browser: bool,
}

/// The API name of a model file: its stem, without a split suffix (`-00001-of-00003`).
fn model_id(path: &Path) -> String {
    let stem = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let stem = stem.strip_suffix(".gguf").unwrap_or(&stem).to_string();
    match stem.rsplit_once("-of-") {
        Some((head, tail)) if tail.len() == 5 && tail.chars().all(|c| c.is_ascii_digit()) => {
            match head.rsplit_once('-') {
                Some((name, n)) if n.len() == 5 && n.chars().all(|c| c.is_ascii_digit()) => {
                    name.to_string()
                }
                _ => stem,
            }
        }
        _ => stem,
    }
}

pub fn serve(args: &ServeArgs) -> Result<()> {
    start(args, |addr| {
        eprintln!("zinc: listening on http://{addr} (chat UI at /, API under /v1)");
    })
}

pub fn chat(args: &ChatArgs) -> Result<()> {
    let open = !args.no_browser;
    start(&args.serve, move |addr| {
        let host = if addr.ip().is_unspecified() {
            "127.0.0.1".to_string()
        } else {
            addr.ip().to_string()
        };
        let url = format!("http://{host}:{}/", addr.port());
        eprintln!("zinc: listening on http://{addr} (chat UI at {url})");
        if open {
            if let Err(e) = open_browser(&url) {
                eprintln!("zinc: cannot open a browser ({e}); open {url} yourself");
            }
        }
    })
}

fn open_browser(url: &str) -> std::io::Result<()> {
    let mut cmd = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut c = std::process::Command::new("cmd");
        c.args(["/C", "start", ""]);
        c
    } else {
        std::process::Command::new("xdg-open")
    };
    cmd.arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
}

fn start(args: &ServeArgs, on_listening: impl FnOnce(SocketAddr)) -> Result<()> {
    let file = load::open_file(&args.model.model)?;
    let md = file.metadata();
    let tokenizer = Tokenizer::from_metadata(md)
        .with_context(|| format!("{}: cannot build the tokenizer", args.model.model.display()))?;
    let (template, template_text) = match &args.chat_template_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the chat template {}", path.display()))?;
            let token = |id: Option<u32>| {
                id.and_then(|i| tokenizer.token_text(i))
                    .unwrap_or("")
                    .to_string()
            };
            let t = ChatTemplate::new(
                &text,
                TemplateSource::User,
                token(tokenizer.bos()),
                token(tokenizer.eos()),
            )
            .with_context(|| format!("{}: not a usable chat template", path.display()))?;
            (Ok(t), Some(text))
        }
        None => (
            ChatTemplate::from_metadata(md, &tokenizer).map_err(|e| e.to_string()),
            md.opt_str("tokenizer.chat_template")
                .ok()
                .flatten()
                .map(str::to_string),
        ),
    };
    // Output is split into reasoning and answer when the model can think at all.
    let thinking = tokenizer.token_id("<think>").is_some()
        || template_text.is_some_and(|t| t.contains("<think>"));
    let metrics = Arc::new(Metrics::default());
    let margs = args.model.clone();
    let ctx = args.ctx;
    let n_ctx = move |hp: &zinc_models::HParams| ctx.unwrap_or_else(|| default_ctx(hp.n_ctx_train));
    // The engine is built on its own thread, on the chosen backend.
    let (worker, info) = match load::choose(&args.model)? {
        load::BackendChoice::Cpu => Worker::spawn(
            move || {
                let b = load::cpu_backend(&margs).map_err(|e| format!("{e:#}"))?;
                let e = load::build(b, &margs, file).map_err(|e| format!("{e:#}"))?;
                let n = n_ctx(e.model.hparams());
                Ok((e, n))
            },
            metrics.clone(),
        ),
        load::BackendChoice::Vulkan(o) => Worker::spawn(
            move || {
                let b = load::vulkan_backend(&o).map_err(|e| format!("{e:#}"))?;
                let e = load::build(b, &margs, file).map_err(|e| format!("{e:#}"))?;
                let n = n_ctx(e.model.hparams());
                Ok((e, n))
            },
            metrics.clone(),
        ),
    }
    .map_err(anyhow::Error::msg)?;
    let model = ServedModel {
        id: args
            .alias
            .clone()
            .unwrap_or_else(|| model_id(&args.model.model)),
        tokenizer,
        template,
        thinking,
        info,
    };
    let cfg = ServerConfig {
        host: args.host.clone(),
        port: args.port,
        api_key: args.api_key.clone().filter(|k| !k.is_empty()),
        max_body: args.max_body,
    };
    eprintln!(
        "zinc: serving {} ({} tokens of context){}",
        model.id,
        model.info.n_ctx,
        if cfg.api_key.is_some() {
            ", API key required"
        } else {
            ""
        }
    );
    zinc_server::serve_blocking(cfg, model, worker, metrics, on_listening)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::model_id;
    use std::path::Path;

    #[test]
    fn model_ids_drop_extension_and_shard_suffix() {
        assert_eq!(
            model_id(Path::new("/m/Qwen3-8B-Q4_K_M.gguf")),
            "Qwen3-8B-Q4_K_M"
        );
        assert_eq!(model_id(Path::new("big-00001-of-00003.gguf")), "big");
        assert_eq!(model_id(Path::new("a-of-b.gguf")), "a-of-b");
    }
}
