//! `zinc inspect FILE [--json]`: what a GGUF holds, like gguf-dump.
//!
//! With `--json`, stdout is exactly one JSON document (`InspectReport`); nothing else is printed
//! there.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;
use zinc_gguf::{Array, GgufModel, Metadata, Value};

#[derive(clap::Args)]
pub struct InspectArgs {
    /// A GGUF file, or any shard of a split model.
    pub file: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Leave the per-tensor table out of the text output.
    #[arg(long)]
    pub no_tensors: bool,
}

#[derive(Serialize)]
pub struct InspectReport {
    pub path: String,
    pub shards: Vec<String>,
    pub file_size: u64,
    pub gguf_version: u32,
    pub alignment: u64,
    pub architecture: Option<String>,
    pub name: Option<String>,
    /// Every `{architecture}.*` key.
    pub hyperparameters: BTreeMap<String, serde_json::Value>,
    pub tokenizer: Option<TokenizerSummary>,
    pub chat_template: bool,
    /// Every key in file order; arrays are summarised by element type and length.
    pub metadata: Vec<MetadataEntry>,
    pub tensor_count: usize,
    pub type_histogram: BTreeMap<String, usize>,
    pub tensors: Vec<TensorEntry>,
}

#[derive(Serialize)]
pub struct TokenizerSummary {
    /// `tokenizer.ggml.model`: `llama` (SentencePiece), `gpt2` (byte-level BPE), …
    pub model: String,
    pub kind: &'static str,
    pub pre: Option<String>,
    pub tokens: usize,
    pub merges: usize,
    pub bos_token_id: Option<u32>,
    pub eos_token_id: Option<u32>,
}

#[derive(Serialize)]
pub struct MetadataEntry {
    pub key: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub value: serde_json::Value,
}

#[derive(Serialize)]
pub struct TensorEntry {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    /// ggml order: `shape[0]` is the contiguous dimension.
    pub shape: Vec<u64>,
    /// Absolute offset of the data in its shard.
    pub offset: u64,
    pub n_bytes: u64,
    pub shard: usize,
}

/// Arrays longer than this are summarised rather than listed.
const ARRAY_INLINE_MAX: usize = 16;

fn json_value(v: &Value) -> serde_json::Value {
    use serde_json::json;
    match v {
        Value::U8(x) => json!(x),
        Value::I8(x) => json!(x),
        Value::U16(x) => json!(x),
        Value::I16(x) => json!(x),
        Value::U32(x) => json!(x),
        Value::I32(x) => json!(x),
        Value::U64(x) => json!(x),
        Value::I64(x) => json!(x),
        Value::F32(x) => json!(x),
        Value::F64(x) => json!(x),
        Value::Bool(x) => json!(x),
        Value::String(s) => json!(s),
        Value::Array(a) if a.len() <= ARRAY_INLINE_MAX => serde_json::Value::Array(
            (0..a.len())
                .filter_map(|i| a.get(i))
                .map(|e| json_value(&e))
                .collect(),
        ),
        Value::Array(a) => json!({ "elem_type": a.elem_type().name(), "len": a.len() }),
    }
}

fn tokenizer_summary(md: &Metadata) -> Result<Option<TokenizerSummary>> {
    let Some(model) = md.opt_str("tokenizer.ggml.model")? else {
        return Ok(None);
    };
    let kind = match model {
        "llama" => "SentencePiece",
        "gpt2" => "byte-level BPE",
        "bert" => "WordPiece",
        "t5" => "Unigram",
        "rwkv" => "RWKV",
        "plamo2" => "PLaMo-2",
        "none" => "none",
        _ => "unknown",
    };
    let len = |k: &str| -> Result<usize> { Ok(md.opt_array(k)?.map(Array::len).unwrap_or(0)) };
    Ok(Some(TokenizerSummary {
        model: model.to_string(),
        kind,
        pre: md.opt_str("tokenizer.ggml.pre")?.map(str::to_string),
        tokens: len("tokenizer.ggml.tokens")?,
        merges: len("tokenizer.ggml.merges")?,
        bos_token_id: md.opt_u32("tokenizer.ggml.bos_token_id")?,
        eos_token_id: md.opt_u32("tokenizer.ggml.eos_token_id")?,
    }))
}

pub fn report(model: &GgufModel, path: &std::path::Path) -> Result<InspectReport> {
    let md = model.metadata();
    let architecture = md.opt_str("general.architecture")?.map(str::to_string);
    let mut hyperparameters = BTreeMap::new();
    if let Some(arch) = &architecture {
        let prefix = format!("{arch}.");
        for (k, v) in md.iter().filter(|(k, _)| k.starts_with(&prefix)) {
            hyperparameters.insert(k.to_string(), json_value(v));
        }
    }
    let metadata = md
        .iter()
        .map(|(k, v)| MetadataEntry {
            key: k.to_string(),
            ty: v.type_description(),
            value: json_value(v),
        })
        .collect();
    let mut type_histogram = BTreeMap::new();
    let mut tensors = Vec::with_capacity(model.n_tensors());
    for (t, shard) in model.tensors().zip(model.tensor_shards()) {
        *type_histogram
            .entry(t.info.ty.name().to_string())
            .or_insert(0) += 1;
        tensors.push(TensorEntry {
            name: t.info.name.clone(),
            ty: t.info.ty.name().to_string(),
            shape: t.info.dims.clone(),
            offset: model.shards()[shard].header().data_offset + t.info.offset,
            n_bytes: t.info.n_bytes,
            shard,
        });
    }
    Ok(InspectReport {
        path: path.display().to_string(),
        shards: model
            .shards()
            .iter()
            .map(|s| s.path().display().to_string())
            .collect(),
        file_size: model.file_size(),
        gguf_version: model.version(),
        alignment: model.shards()[0].header().alignment,
        name: md.opt_str("general.name")?.map(str::to_string),
        architecture,
        hyperparameters,
        tokenizer: tokenizer_summary(md)?,
        chat_template: md.contains("tokenizer.chat_template"),
        metadata,
        tensor_count: model.n_tensors(),
        type_histogram,
        tensors,
    })
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

fn print_text(r: &InspectReport, model: &GgufModel, with_tensors: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "file          {}", r.path)?;
    if r.shards.len() > 1 {
        writeln!(out, "shards        {}", r.shards.len())?;
    }
    writeln!(
        out,
        "size          {} ({} bytes)",
        human_bytes(r.file_size),
        r.file_size
    )?;
    writeln!(
        out,
        "gguf          version {}, alignment {}",
        r.gguf_version, r.alignment
    )?;
    writeln!(
        out,
        "architecture  {}",
        r.architecture.as_deref().unwrap_or("(none)")
    )?;
    if let Some(n) = &r.name {
        writeln!(out, "name          {n}")?;
    }
    match &r.tokenizer {
        Some(t) => writeln!(
            out,
            "tokenizer     {} ({}), {} tokens, {} merges, pre = {}",
            t.model,
            t.kind,
            t.tokens,
            t.merges,
            t.pre.as_deref().unwrap_or("-")
        )?,
        None => writeln!(out, "tokenizer     (none)")?,
    }
    writeln!(
        out,
        "chat template {}",
        if r.chat_template { "present" } else { "absent" }
    )?;
    if !r.hyperparameters.is_empty() {
        writeln!(out, "\nhyper-parameters")?;
        for k in r.hyperparameters.keys() {
            if let Some(v) = model.metadata().get(k) {
                writeln!(out, "  {k:<48} {v}")?;
            }
        }
    }
    writeln!(out, "\nmetadata ({} keys)", r.metadata.len())?;
    for (k, v) in model.metadata().iter() {
        let mut shown = v.to_string();
        if shown.chars().count() > 100 {
            shown = shown.chars().take(97).collect::<String>() + "…";
        }
        writeln!(
            out,
            "  {k:<48} {:<16} {}",
            v.type_description(),
            shown.replace('\n', "\\n")
        )?;
    }
    writeln!(out, "\ntensors       {}", r.tensor_count)?;
    let hist: Vec<String> = r
        .type_histogram
        .iter()
        .map(|(t, n)| format!("{t} ×{n}"))
        .collect();
    writeln!(out, "types         {}", hist.join(", "))?;
    if with_tensors {
        writeln!(out)?;
        writeln!(
            out,
            "  {:<40} {:<8} {:<24} {:>12} {:>12}",
            "name", "type", "shape", "offset", "bytes"
        )?;
        for t in &r.tensors {
            let shape = format!("{:?}", t.shape);
            writeln!(
                out,
                "  {:<40} {:<8} {:<24} {:>12} {:>12}",
                t.name, t.ty, shape, t.offset, t.n_bytes
            )?;
        }
    }
    Ok(())
}

pub fn run(args: &InspectArgs) -> Result<()> {
    let model = GgufModel::open(&args.file)?;
    let r = report(&model, &args.file)?;
    if args.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &r)?;
        writeln!(out)?;
    } else {
        print_text(&r, &model, !args.no_tensors)?;
    }
    Ok(())
}
