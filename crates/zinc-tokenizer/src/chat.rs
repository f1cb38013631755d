//! Chat templates: the model's own Jinja template (`tokenizer.chat_template`) rendered with
//! minijinja under Hugging Face's settings (`trim_blocks`, `lstrip_blocks`, Python string and
//! dict methods, `raise_exception`, `strftime_now`, `tojson` keeping key order), or, for a model
//! that ships none, the family's known format chosen by architecture.

use std::time::{SystemTime, UNIX_EPOCH};

use minijinja::value::{Kwargs, Value};
use minijinja::{Environment, Error, ErrorKind};
use serde_json::Value as Json;
use zinc_gguf::Metadata;

use crate::{Tokenizer, TokenizerError};

/// Where a template came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplateSource {
    /// `tokenizer.chat_template` in the GGUF.
    Gguf,
    /// The GGUF has none; this family's known format was chosen by architecture.
    Fallback(&'static str),
    /// Given by the user (`--chat-template-file`), overriding the model's.
    User,
}

/// One message for the convenience API (`role`, text `content`). Richer messages (content parts,
/// tool calls, reasoning) go through [`ChatTemplate::render_json`] as JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: &str, content: &str) -> ChatMessage {
        ChatMessage {
            role: role.to_string(),
            content: content.to_string(),
        }
    }
}

// The fallbacks emit everything through expressions so the template's own line breaks never
// reach the prompt.

/// Gemma's turn format (system text folded into the first user turn), as llama.cpp's built-in
/// `gemma` template writes it.
const GEMMA_FALLBACK: &str = r#"
{%- set ns = namespace(system='') -%}
{%- for m in messages -%}
  {%- if m.role == 'system' -%}
    {%- set ns.system = ns.system + (m.content | trim) -%}
  {%- else -%}
    {%- set role = 'model' if m.role == 'assistant' else m.role -%}
    {{- '<start_of_turn>' + role + '\n' -}}
    {%- if ns.system and role != 'model' -%}
      {{- ns.system + '\n\n' -}}
      {%- set ns.system = '' -%}
    {%- endif -%}
    {{- (m.content | trim) + '<end_of_turn>\n' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<start_of_turn>model\n' -}}{%- endif -%}
"#;

/// ChatML, the Qwen family's format.
const CHATML_FALLBACK: &str = r#"
{%- for m in messages -%}
  {{- '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}
"#;

/// Llama 3's header format.
const LLAMA3_FALLBACK: &str = r#"
{%- for m in messages -%}
  {{- '<|start_header_id|>' + m.role + '<|end_header_id|>\n\n' + (m.content | trim) + '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}{%- endif -%}
"#;

fn fallback_for(arch: &str) -> Option<(&'static str, &'static str)> {
    Some(match arch {
        "gemma" | "gemma2" | "gemma3" | "gemma3n" => ("gemma", GEMMA_FALLBACK),
        "qwen2" | "qwen2moe" | "qwen3" | "qwen3moe" | "qwen35" | "qwen35moe" => {
            ("chatml", CHATML_FALLBACK)
        }
        "llama" => ("llama3", LLAMA3_FALLBACK),
        _ => return None,
    })
}

/// Options a render takes beyond the messages.
#[derive(Clone, Debug, Default)]
pub struct RenderOptions {
    pub add_generation_prompt: bool,
    /// Qwen3-style thinking switch, passed as the `enable_thinking` variable when set.
    pub enable_thinking: Option<bool>,
    /// `tools` for templates that describe tools.
    pub tools: Option<Json>,
    /// Further variables (`chat_template_kwargs`), passed through as given.
    pub extra: serde_json::Map<String, Json>,
}

pub struct ChatTemplate {
    env: Environment<'static>,
    source: TemplateSource,
    bos_token: String,
    eos_token: String,
}

impl ChatTemplate {
    /// The model's template, or its family's known format when the GGUF has none.
    pub fn from_metadata(
        md: &Metadata,
        tokenizer: &Tokenizer,
    ) -> Result<ChatTemplate, TokenizerError> {
        let (text, source) = match md.opt_str("tokenizer.chat_template")? {
            Some(t) => (t.to_string(), TemplateSource::Gguf),
            None => {
                let arch = md.opt_str("general.architecture")?.unwrap_or("");
                let (family, text) = fallback_for(arch).ok_or_else(|| {
                    TokenizerError::Template(format!(
                        "the model has no tokenizer.chat_template and there is no known chat format for architecture {arch:?}"
                    ))
                })?;
                (text.to_string(), TemplateSource::Fallback(family))
            }
        };
        let token = |id: Option<u32>| {
            id.and_then(|i| tokenizer.token_text(i))
                .unwrap_or("")
                .to_string()
        };
        Self::new(
            &text,
            source,
            token(tokenizer.bos()),
            token(tokenizer.eos()),
        )
    }

    /// A template from its source text.
    pub fn new(
        text: &str,
        source: TemplateSource,
        bos_token: String,
        eos_token: String,
    ) -> Result<ChatTemplate, TokenizerError> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_filter("tojson", tojson);
        env.add_template_owned("chat", text.to_string())
            .map_err(|e| TokenizerError::Template(format!("cannot parse the template: {e:#}")))?;
        Ok(ChatTemplate {
            env,
            source,
            bos_token,
            eos_token,
        })
    }

    pub fn source(&self) -> &TemplateSource {
        &self.source
    }

    /// Renders plain role/content messages.
    pub fn render(
        &self,
        messages: &[ChatMessage],
        opts: &RenderOptions,
    ) -> Result<String, TokenizerError> {
        let json: Vec<Json> = messages
            .iter()
            .map(|m| serde_json::json!({ "role": m.role, "content": m.content }))
            .collect();
        self.render_json(&json, opts)
    }

    /// Renders messages given as JSON objects (OpenAI's shape: string or content-part `content`,
    /// `tool_calls`, `reasoning_content`, …), passed to the template unchanged.
    pub fn render_json(
        &self,
        messages: &[Json],
        opts: &RenderOptions,
    ) -> Result<String, TokenizerError> {
        let mut ctx = serde_json::Map::new();
        for (k, v) in &opts.extra {
            ctx.insert(k.clone(), v.clone());
        }
        ctx.insert("messages".into(), Json::Array(messages.to_vec()));
        ctx.insert(
            "add_generation_prompt".into(),
            Json::Bool(opts.add_generation_prompt),
        );
        ctx.insert("bos_token".into(), Json::String(self.bos_token.clone()));
        ctx.insert("eos_token".into(), Json::String(self.eos_token.clone()));
        if let Some(t) = opts.enable_thinking {
            ctx.insert("enable_thinking".into(), Json::Bool(t));
        }
        if let Some(tools) = &opts.tools {
            ctx.insert("tools".into(), tools.clone());
        }
        let tmpl = self
            .env
            .get_template("chat")
            .map_err(|e| TokenizerError::Template(e.to_string()))?;
        tmpl.render(Value::from_serialize(&ctx))
            .map_err(|e| TokenizerError::Template(format!("{e:#}")))
    }
}

fn raise_exception(msg: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, msg))
}

/// `strftime_now(format)`: the current UTC time, with the common `strftime` directives.
fn strftime_now(format: String) -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    strftime(secs, &format)
}

/// Formats Unix time `secs` (UTC) with `%Y %m %d %e %H %M %S %B %b %A %a %j %y %p %I %%`.
pub(crate) fn strftime(secs: i64, format: &str) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    const DAYS: [&str; 7] = [
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
    ];
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (h, mi, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let cum = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let yday = cum[(m - 1) as usize] + d + i64::from(leap && m > 2);
    let weekday = DAYS[days.rem_euclid(7) as usize];
    let month = MONTHS[(m - 1) as usize];
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('Y') => out.push_str(&y.to_string()),
            Some('y') => out.push_str(&format!("{:02}", y.rem_euclid(100))),
            Some('m') => out.push_str(&format!("{m:02}")),
            Some('d') => out.push_str(&format!("{d:02}")),
            Some('e') => out.push_str(&format!("{d:>2}")),
            Some('H') => out.push_str(&format!("{h:02}")),
            Some('I') => out.push_str(&format!("{:02}", if h % 12 == 0 { 12 } else { h % 12 })),
            Some('p') => out.push_str(if h < 12 { "AM" } else { "PM" }),
            Some('M') => out.push_str(&format!("{mi:02}")),
            Some('S') => out.push_str(&format!("{s:02}")),
            Some('B') => out.push_str(month),
            Some('b') => out.push_str(&month[..3]),
            Some('A') => out.push_str(weekday),
            Some('a') => out.push_str(&weekday[..3]),
            Some('j') => out.push_str(&format!("{yday:03}")),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// `tojson` as Hugging Face defines it: `json.dumps(x, ensure_ascii=False, indent=indent)` —
/// Python's separators (`", "`, `": "`), key order kept, no HTML escaping (minijinja's own
/// `tojson` escapes `<>&'` for HTML, which changes prompts).
fn tojson(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let json = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    let mut out = String::new();
    write_py_json(&json, indent, sort_keys.unwrap_or(false), 0, &mut out);
    Ok(Value::from_safe_string(out))
}

fn write_py_json(v: &Json, indent: Option<usize>, sort: bool, depth: usize, out: &mut String) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(n) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(n * depth));
        }
    };
    let item_sep = if indent.is_some() { "," } else { ", " };
    match v {
        Json::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, depth + 1);
                write_py_json(item, indent, sort, depth + 1, out);
            }
            newline(out, depth);
            out.push(']');
        }
        Json::Object(map) if !map.is_empty() => {
            out.push('{');
            let mut entries: Vec<(&String, &Json)> = map.iter().collect();
            if sort {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, depth + 1);
                out.push_str(&Json::String(k.clone()).to_string());
                out.push_str(": ");
                write_py_json(item, indent, sort, depth + 1, out);
            }
            newline(out, depth);
            out.push('}');
        }
        Json::Array(_) => out.push_str("[]"),
        Json::Object(_) => out.push_str("{}"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Null => out.push_str("null"),
        // Python writes floats with a decimal point (1.0) and integers without.
        Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (_, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 1e16 => {
                out.push_str(&format!("{f:.1}"))
            }
            _ => out.push_str(&n.to_string()),
        },
        Json::String(s) => out.push_str(&Json::String(s.clone()).to_string()),
    }
}
