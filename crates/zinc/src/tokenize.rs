//! `zinc tokenize` and `zinc template`: the tokenizer and chat template of a model, on their own.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use zinc_gguf::GgufModel;
use zinc_tokenizer::{ChatTemplate, RenderOptions, TemplateSource, Tokenizer};

#[derive(clap::Args)]
pub struct TokenizeArgs {
    /// The model whose vocabulary to use.
    #[arg(short, long)]
    pub model: PathBuf,
    /// Print the ids as one JSON list.
    #[arg(long)]
    pub ids: bool,
    /// Do not add BOS even when the model asks for it.
    #[arg(long)]
    pub no_bos: bool,
    /// Turn control tokens written in the text (`<|im_start|>`) into their ids.
    #[arg(long)]
    pub special: bool,
    /// Read the text from this file instead (bytes as they are; must be UTF-8).
    #[arg(short, long, conflicts_with = "text")]
    pub file: Option<PathBuf>,
    /// The text to tokenize.
    #[arg(required_unless_present = "file")]
    pub text: Option<String>,
}

#[derive(clap::Args)]
pub struct TemplateArgs {
    #[arg(short, long)]
    pub model: PathBuf,
    /// The conversation: a JSON list of {"role", "content"} messages.
    #[arg(long)]
    pub messages: String,
    /// Leave out the assistant header that invites the model to answer.
    #[arg(long)]
    pub no_generation_prompt: bool,
    /// For Qwen3-style templates: turn thinking on or off.
    #[arg(long)]
    pub enable_thinking: Option<bool>,
}

fn load_tokenizer(path: &PathBuf) -> Result<(GgufModel, Tokenizer)> {
    let model = GgufModel::open(path)?;
    let tok = Tokenizer::from_metadata(model.metadata())
        .with_context(|| format!("{}: cannot build the tokenizer", path.display()))?;
    Ok((model, tok))
}

pub fn tokenize(args: &TokenizeArgs) -> Result<()> {
    let (_, tok) = load_tokenizer(&args.model)?;
    let text = match (&args.file, &args.text) {
        (Some(f), _) => {
            let bytes = std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?;
            String::from_utf8(bytes).map_err(|e| {
                anyhow::anyhow!(
                    "{} is not UTF-8 (byte {})",
                    f.display(),
                    e.utf8_error().valid_up_to()
                )
            })?
        }
        (None, Some(t)) => t.clone(),
        (None, None) => bail!("give the text or --file"),
    };
    let ids = tok.encode(&text, !args.no_bos, args.special);
    let mut out = std::io::stdout().lock();
    if args.ids {
        serde_json::to_writer(&mut out, &ids)?;
        writeln!(out)?;
    } else {
        for id in ids {
            let piece = String::from_utf8_lossy(tok.piece(id, true)?).into_owned();
            writeln!(out, "{id:>7} -> {piece:?}")?;
        }
    }
    Ok(())
}

pub fn template(args: &TemplateArgs) -> Result<()> {
    let (model, tok) = load_tokenizer(&args.model)?;
    let messages: serde_json::Value =
        serde_json::from_str(&args.messages).context("--messages is not valid JSON")?;
    let Some(messages) = messages.as_array() else {
        bail!("--messages must be a JSON list of messages");
    };
    for (i, m) in messages.iter().enumerate() {
        if !m.is_object() || !m.get("role").is_some_and(|r| r.is_string()) {
            bail!("message {i} must be an object with a string \"role\"");
        }
    }
    let t = ChatTemplate::from_metadata(model.metadata(), &tok)?;
    if let TemplateSource::Fallback(family) = t.source() {
        eprintln!(
            "note: the model has no chat template; using the {family} format for its architecture"
        );
    }
    let opts = RenderOptions {
        add_generation_prompt: !args.no_generation_prompt,
        enable_thinking: args.enable_thinking,
        ..Default::default()
    };
    let prompt = t.render_json(messages, &opts)?;
    let mut out = std::io::stdout().lock();
    out.write_all(prompt.as_bytes())?;
    Ok(())
}
