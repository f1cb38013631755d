//! `POST /v1/chat/completions` and `POST /v1/completions`: check the request, build the prompt,
//! queue it for the engine thread, and answer as one JSON object or as an SSE stream.

use std::convert::Infallible;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use zinc_engine::{Finish, GenerateParams, SamplerConfig, TokenLogprobs};
use zinc_tokenizer::RenderOptions;

use crate::error::ApiError;
use crate::openai::*;
use crate::reasoning::ReasoningSplitter;
use crate::worker::{Event, Job, Summary};
use crate::{body_bytes, unix_now, Shared};

/// OpenAI's limits on these fields.
const MAX_STOP: usize = 4;
const MAX_TOP_LOGPROBS: u64 = 20;
const MAX_LEGACY_LOGPROBS: u64 = 5;
/// The completions endpoint's default budget (OpenAI's).
const DEFAULT_COMPLETION_TOKENS: u64 = 16;

/// Which response shape a generation is turned into.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Chat,
    Text,
}

/// A checked request, ready to queue.
struct Prepared {
    kind: Kind,
    prompt: Vec<u32>,
    params: GenerateParams,
    stream: bool,
    include_usage: bool,
    /// The prompt ends inside an open `<think>` block.
    thinking_open: bool,
}

pub(crate) async fn chat(
    State(s): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body_bytes(body, s.cfg.max_body)?;
    let req: ChatRequest = parse_request(&body, CHAT_FIELDS)?;
    check_model(&s, req.model.as_deref())?;
    if let Some(n) = req.n {
        if n != 1 {
            return Err(ApiError::invalid(
                format!("n = {n} is not supported: this server returns one choice per request (n must be 1)"),
                Some("n"),
            ));
        }
    }
    if req.tools.as_ref().is_some_and(|t| !t.is_empty()) {
        return Err(ApiError::invalid(
            "Tool calling is not supported by this server yet",
            Some("tools"),
        ));
    }
    if let Some(tc) = &req.tool_choice {
        if tc != "none" && !tc.is_null() {
            return Err(ApiError::invalid(
                "Tool calling is not supported by this server yet",
                Some("tool_choice"),
            ));
        }
    }
    if let Some(rf) = &req.response_format {
        let kind = rf.get("type").and_then(Value::as_str);
        if kind != Some("text") {
            return Err(ApiError::invalid(
                format!(
                    "response_format {} is not supported; only {{\"type\": \"text\"}}",
                    rf
                ),
                Some("response_format"),
            ));
        }
    }
    let want_logprobs = req.logprobs.unwrap_or(false);
    let top = req.top_logprobs.unwrap_or(0);
    if top > MAX_TOP_LOGPROBS {
        return Err(ApiError::invalid(
            format!("top_logprobs must be between 0 and {MAX_TOP_LOGPROBS}"),
            Some("top_logprobs"),
        ));
    }
    if req.top_logprobs.is_some() && !want_logprobs {
        return Err(ApiError::invalid(
            "top_logprobs needs logprobs set to true",
            Some("top_logprobs"),
        ));
    }
    let rendered = render_chat(&s, &req)?;
    let prompt = s.model.tokenizer.encode_chat(&rendered);
    let max = req.max_completion_tokens.or(req.max_tokens);
    let params = generate_params(&s, &req.sampling, max, None, prompt.len())?;
    let params = GenerateParams {
        logprobs: want_logprobs.then_some(top as usize),
        ..params
    };
    s.metrics.requests_chat.fetch_add(1, Relaxed);
    let prepared = Prepared {
        kind: Kind::Chat,
        prompt,
        params,
        stream: req.stream.unwrap_or(false),
        include_usage: req.stream_options.as_ref().is_some_and(|o| o.include_usage),
        thinking_open: s.model.thinking && rendered.trim_end().ends_with("<think>"),
    };
    run(s, prepared).await
}

pub(crate) async fn completion(
    State(s): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body_bytes(body, s.cfg.max_body)?;
    let req: CompletionRequest = parse_request(&body, COMPLETION_FIELDS)?;
    check_model(&s, req.model.as_deref())?;
    for (name, v) in [("n", req.n), ("best_of", req.best_of)] {
        if let Some(v) = v {
            if v != 1 {
                return Err(ApiError::invalid(
                    format!("{name} = {v} is not supported: this server returns one choice per request ({name} must be 1)"),
                    Some(name),
                ));
            }
        }
    }
    if req.echo == Some(true) {
        return Err(ApiError::invalid(
            "echo is not supported by this server",
            Some("echo"),
        ));
    }
    if req.suffix.as_ref().is_some_and(|s| !s.is_empty()) {
        return Err(ApiError::invalid(
            "suffix (fill-in-the-middle) is not supported by this server",
            Some("suffix"),
        ));
    }
    if req.logprobs.is_some_and(|n| n > MAX_LEGACY_LOGPROBS) {
        return Err(ApiError::invalid(
            format!("logprobs must be between 0 and {MAX_LEGACY_LOGPROBS}"),
            Some("logprobs"),
        ));
    }
    let tok = &s.model.tokenizer;
    let n_vocab = s.model.info.n_vocab;
    let one = |n: usize| -> Result<(), ApiError> {
        if n == 1 {
            Ok(())
        } else {
            Err(ApiError::invalid(
                format!("prompt holds {n} prompts; this server takes one prompt per request"),
                Some("prompt"),
            ))
        }
    };
    let prompt = match &req.prompt {
        Prompt::Text(t) => tok.encode(t, true, true),
        Prompt::Texts(v) => {
            one(v.len())?;
            tok.encode(&v[0], true, true)
        }
        Prompt::Tokens(ids) => check_token_ids(ids, n_vocab, "prompt")?,
        Prompt::TokenLists(v) => {
            one(v.len())?;
            check_token_ids(&v[0], n_vocab, "prompt")?
        }
    };
    let params = generate_params(
        &s,
        &req.sampling,
        req.max_tokens,
        Some(DEFAULT_COMPLETION_TOKENS),
        prompt.len(),
    )?;
    let params = GenerateParams {
        logprobs: req.logprobs.map(|n| n as usize),
        ..params
    };
    s.metrics.requests_completions.fetch_add(1, Relaxed);
    let prepared = Prepared {
        kind: Kind::Text,
        prompt,
        params,
        stream: req.stream.unwrap_or(false),
        include_usage: req.stream_options.as_ref().is_some_and(|o| o.include_usage),
        thinking_open: false,
    };
    run(s, prepared).await
}

/// The conversation rendered by the chat template, with `chat_template_kwargs` and
/// `enable_thinking` passed through.
fn render_chat(s: &Shared, req: &ChatRequest) -> Result<String, ApiError> {
    let template = s
        .model
        .template
        .as_ref()
        .map_err(|why| ApiError::invalid(why.clone(), Some("messages")))?;
    let messages = normalize_messages(&req.messages)?;
    let mut opts = RenderOptions {
        add_generation_prompt: true,
        extra: req.chat_template_kwargs.clone().unwrap_or_default(),
        ..Default::default()
    };
    opts.enable_thinking = req
        .enable_thinking
        .or_else(|| opts.extra.get("enable_thinking").and_then(Value::as_bool));
    let rendered = template.render_json(&messages, &opts).map_err(|e| {
        ApiError::invalid(
            format!("The chat template refused the conversation: {e}"),
            Some("messages"),
        )
    })?;
    Ok(rendered)
}

/// `POST /apply-template`: the prompt a chat request turns into (llama.cpp's endpoint of the
/// same name), for checking what the model actually sees.
pub(crate) async fn apply_template(
    State(s): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body_bytes(body, s.cfg.max_body)?;
    let req: ChatRequest = parse_request(&body, CHAT_FIELDS)?;
    let prompt = render_chat(&s, &req)?;
    Ok(Json(serde_json::json!({ "prompt": prompt })).into_response())
}

fn check_model(s: &Shared, model: Option<&str>) -> Result<(), ApiError> {
    match model {
        Some(m) if m != s.model.id => Err(ApiError::model_not_found(m)),
        _ => Ok(()),
    }
}

pub(crate) fn check_token_ids(
    ids: &[u64],
    n_vocab: usize,
    param: &str,
) -> Result<Vec<u32>, ApiError> {
    ids.iter()
        .map(|&id| {
            if (id as usize) < n_vocab && id <= u32::MAX as u64 {
                Ok(id as u32)
            } else {
                Err(ApiError::invalid(
                    format!("token id {id} is outside the vocabulary of {n_vocab} tokens"),
                    Some(param),
                ))
            }
        })
        .collect()
}

/// Messages as the template sees them: roles checked, content parts joined into text,
/// `reasoning` accepted as `reasoning_content`.
fn normalize_messages(messages: &[Value]) -> Result<Vec<Value>, ApiError> {
    if messages.is_empty() {
        return Err(ApiError::invalid(
            "messages must hold at least one message",
            Some("messages"),
        ));
    }
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let at = |k: &str| format!("messages[{i}].{k}");
            let Value::Object(obj) = m else {
                return Err(ApiError::invalid(
                    format!("messages[{i}] must be an object with role and content"),
                    Some(&format!("messages[{i}]")),
                ));
            };
            const KEYS: &[&str] = &[
                "role",
                "content",
                "name",
                "reasoning_content",
                "reasoning",
                "refusal",
                "tool_calls",
                "function_call",
            ];
            if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
                return Err(ApiError::invalid(
                    format!("Unrecognized message field: {}", at(k)),
                    Some(&at(k)),
                ));
            }
            let role = match obj.get("role").and_then(Value::as_str) {
                Some("developer") | Some("system") => "system",
                Some("user") => "user",
                Some("assistant") => "assistant",
                Some(r @ ("tool" | "function")) => {
                    return Err(ApiError::invalid(
                        format!("{} = {r:?}: tool calling is not supported by this server yet", at("role")),
                        Some(&at("role")),
                    ))
                }
                Some(r) => {
                    return Err(ApiError::invalid(
                        format!("{} = {r:?} is not a role (system, developer, user, assistant)", at("role")),
                        Some(&at("role")),
                    ))
                }
                None => {
                    return Err(ApiError::invalid(
                        format!("{} is missing or not a string", at("role")),
                        Some(&at("role")),
                    ))
                }
            };
            for k in ["tool_calls", "function_call"] {
                match obj.get(k) {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(a)) if a.is_empty() => {}
                    Some(_) => {
                        return Err(ApiError::invalid(
                            format!("{}: tool calling is not supported by this server yet", at(k)),
                            Some(&at(k)),
                        ))
                    }
                }
            }
            let content = match obj.get("content") {
                Some(Value::String(t)) => t.clone(),
                None | Some(Value::Null) if role == "assistant" => String::new(),
                Some(Value::Array(parts)) => {
                    let mut texts = Vec::with_capacity(parts.len());
                    for (j, p) in parts.iter().enumerate() {
                        let kind = p.get("type").and_then(Value::as_str);
                        let text = p.get("text").and_then(Value::as_str);
                        match (kind, text) {
                            (Some("text"), Some(t)) => texts.push(t),
                            _ => {
                                return Err(ApiError::invalid(
                                    format!("{}[{j}]: only {{\"type\": \"text\", \"text\": …}} parts are supported", at("content")),
                                    Some(&at("content")),
                                ))
                            }
                        }
                    }
                    texts.join("\n")
                }
                _ => {
                    return Err(ApiError::invalid(
                        format!("{} must be a string or an array of text parts", at("content")),
                        Some(&at("content")),
                    ))
                }
            };
            let mut out = Map::new();
            out.insert("role".into(), role.into());
            out.insert("content".into(), content.into());
            let reasoning = obj
                .get("reasoning_content")
                .or_else(|| obj.get("reasoning"));
            match reasoning {
                None | Some(Value::Null) => {}
                Some(Value::String(r)) => {
                    out.insert("reasoning_content".into(), r.clone().into());
                }
                Some(_) => {
                    return Err(ApiError::invalid(
                        format!("{} must be a string", at("reasoning_content")),
                        Some(&at("reasoning_content")),
                    ))
                }
            }
            Ok(Value::Object(out))
        })
        .collect()
}

/// Sampling, stop strings and the token budget, checked against OpenAI's ranges and the context.
fn generate_params(
    s: &Shared,
    r: &Sampling,
    max_tokens: Option<u64>,
    default_max: Option<u64>,
    prompt_len: usize,
) -> Result<GenerateParams, ApiError> {
    let n_ctx = s.model.info.n_ctx;
    if prompt_len == 0 {
        return Err(ApiError::invalid("The prompt is empty", Some("prompt")));
    }
    if prompt_len >= n_ctx {
        return Err(ApiError::invalid(
            format!(
                "This model's maximum context length is {n_ctx} tokens, but the prompt has {prompt_len} tokens; \
                 shorten the prompt or start the server with a larger --ctx"
            ),
            Some("messages"),
        )
        .with_code("context_length_exceeded"));
    }
    let range = |v: Option<f64>, name: &str, lo: f64, hi: f64| -> Result<Option<f32>, ApiError> {
        match v {
            Some(x) if !(lo..=hi).contains(&x) => Err(ApiError::invalid(
                format!("{name} = {x} is out of range: it must be between {lo} and {hi}"),
                Some(name),
            )),
            v => Ok(v.map(|x| x as f32)),
        }
    };
    let d = SamplerConfig::default();
    let seed = match &r.seed {
        None => rand::random(),
        Some(n) => n
            .as_u64()
            .or_else(|| n.as_i64().map(|i| i as u64))
            .ok_or_else(|| ApiError::invalid("seed must be an integer", Some("seed")))?,
    };
    let sampler = SamplerConfig {
        temperature: range(r.temperature, "temperature", 0.0, 2.0)?.unwrap_or(d.temperature),
        top_p: range(r.top_p, "top_p", 0.0, 1.0)?.unwrap_or(d.top_p),
        min_p: range(r.min_p, "min_p", 0.0, 1.0)?.unwrap_or(d.min_p),
        top_k: r
            .top_k
            .map(|k| k.min(s.model.info.n_vocab as u64) as usize)
            .unwrap_or(d.top_k),
        repeat_penalty: range(r.repeat_penalty, "repeat_penalty", 0.0, 10.0)?
            .unwrap_or(d.repeat_penalty),
        presence_penalty: range(r.presence_penalty, "presence_penalty", -2.0, 2.0)?
            .unwrap_or(d.presence_penalty),
        frequency_penalty: range(r.frequency_penalty, "frequency_penalty", -2.0, 2.0)?
            .unwrap_or(d.frequency_penalty),
        seed,
        ..d
    };
    if sampler.repeat_penalty == 0.0 {
        return Err(ApiError::invalid(
            "repeat_penalty must be above 0 (1 is off)",
            Some("repeat_penalty"),
        ));
    }
    let stop: Vec<String> = match &r.stop {
        None => vec![],
        Some(Stop::One(s)) => vec![s.clone()],
        Some(Stop::Many(v)) => v.clone(),
    };
    if stop.len() > MAX_STOP {
        return Err(ApiError::invalid(
            format!(
                "stop holds {} strings; at most {MAX_STOP} are allowed",
                stop.len()
            ),
            Some("stop"),
        ));
    }
    let mut logit_bias = Vec::new();
    for (k, v) in r.logit_bias.iter().flatten() {
        let id: u64 = k.parse().map_err(|_| {
            ApiError::invalid(
                format!("logit_bias key {k:?} is not a token id"),
                Some("logit_bias"),
            )
        })?;
        let id = check_token_ids(&[id], s.model.info.n_vocab, "logit_bias")?[0];
        let bias = v
            .as_f64()
            .filter(|b| (-100.0..=100.0).contains(b))
            .ok_or_else(|| {
                ApiError::invalid(
                    format!("logit_bias[{k}] must be a number between -100 and 100"),
                    Some("logit_bias"),
                )
            })?;
        logit_bias.push((id, bias as f32));
    }
    let room = (n_ctx - prompt_len) as u64;
    let max_tokens = match max_tokens.or(default_max) {
        Some(0) => {
            return Err(ApiError::invalid(
                "max_tokens must be at least 1",
                Some("max_tokens"),
            ))
        }
        Some(m) => m.min(room),
        None => room,
    };
    Ok(GenerateParams {
        max_tokens: max_tokens as usize,
        sampler,
        stop: stop.into_iter().filter(|s| !s.is_empty()).collect(),
        ignore_eos: false,
        logit_bias,
        logprobs: None,
    })
}

/// Builds response objects from the engine's events: the text split into reasoning and answer,
/// log-probabilities in the endpoint's shape.
struct Assembler<'s> {
    s: &'s Shared,
    kind: Kind,
    id: String,
    created: u64,
    splitter: ReasoningSplitter,
    want_logprobs: Option<usize>,
    /// Characters of completion text so far (legacy `text_offset`).
    offset: usize,
}

/// One step's output: text deltas and log-probabilities.
#[derive(Default)]
struct Piece {
    content: String,
    reasoning: String,
    logprobs: Vec<LogprobEntry>,
}

impl<'s> Assembler<'s> {
    fn new(s: &'s Shared, p: &Prepared) -> Self {
        let prefix = match p.kind {
            Kind::Chat => "chatcmpl",
            Kind::Text => "cmpl",
        };
        Assembler {
            s,
            kind: p.kind,
            id: format!(
                "{prefix}-{:016x}{:08x}",
                rand::random::<u64>(),
                rand::random::<u32>()
            ),
            created: unix_now(),
            splitter: ReasoningSplitter::new(p.thinking_open),
            want_logprobs: p.params.logprobs,
            offset: 0,
        }
    }

    fn token_string(&self, id: u32) -> (String, Vec<u8>) {
        let bytes = self
            .s
            .model
            .tokenizer
            .piece(id, true)
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        (String::from_utf8_lossy(&bytes).into_owned(), bytes)
    }

    fn piece(&mut self, token: Option<u32>, text: &str, lp: Option<&TokenLogprobs>) -> Piece {
        let mut out = Piece::default();
        if self.kind == Kind::Chat && self.s.model.thinking {
            let sp = self.splitter.push(text);
            out.content = sp.content;
            out.reasoning = sp.reasoning;
        } else {
            out.content = text.to_string();
        }
        if let (Some(id), Some(lp), Some(_)) = (token, lp, self.want_logprobs) {
            let (token, bytes) = self.token_string(id);
            out.logprobs.push(LogprobEntry {
                token,
                logprob: lp.logprob,
                bytes,
                top_logprobs: lp
                    .top
                    .iter()
                    .map(|&(t, l)| {
                        let (token, bytes) = self.token_string(t);
                        TopLogprob {
                            token,
                            logprob: l,
                            bytes,
                        }
                    })
                    .collect(),
            });
        }
        out
    }

    fn finish(&mut self) -> Piece {
        let sp = self.splitter.finish();
        Piece {
            content: sp.content,
            reasoning: sp.reasoning,
            logprobs: vec![],
        }
    }

    fn legacy_logprobs(&mut self, entries: &[LogprobEntry]) -> LegacyLogprobs {
        let mut l = LegacyLogprobs::default();
        for e in entries {
            l.tokens.push(e.token.clone());
            l.token_logprobs.push(e.logprob);
            l.top_logprobs.push(
                e.top_logprobs
                    .iter()
                    .map(|t| (t.token.clone(), Value::from(t.logprob)))
                    .collect(),
            );
            l.text_offset.push(self.offset);
            self.offset += e.token.chars().count();
        }
        l
    }

    fn chat_chunk(
        &self,
        delta: Delta,
        logprobs: Vec<LogprobEntry>,
        finish: Option<&'static str>,
        usage: Option<Option<Usage>>,
    ) -> ChatChunk {
        ChatChunk {
            id: self.id.clone(),
            object: "chat.completion.chunk",
            created: self.created,
            model: self.s.model.id.clone(),
            choices: vec![ChunkChoice {
                index: 0,
                delta,
                // Chunks without a token (the role, the finish) carry `null`, as OpenAI's do.
                logprobs: self
                    .want_logprobs
                    .filter(|_| !logprobs.is_empty())
                    .map(|_| ChoiceLogprobs { content: logprobs }),
                finish_reason: finish,
            }],
            usage,
            timings: None,
        }
    }

    fn text_chunk(
        &mut self,
        text: String,
        logprobs: &[LogprobEntry],
        finish: Option<&'static str>,
        usage: Option<Option<Usage>>,
    ) -> Completion {
        let lp = self.want_logprobs.map(|_| self.legacy_logprobs(logprobs));
        Completion {
            id: self.id.clone(),
            object: "text_completion",
            created: self.created,
            model: self.s.model.id.clone(),
            choices: vec![CompletionChoice {
                index: 0,
                text,
                logprobs: lp,
                finish_reason: finish,
            }],
            usage,
            timings: None,
        }
    }

    /// The stream's last data chunk: usage only (`choices` empty).
    fn usage_chunk(&self, usage: Usage, timings: Timings) -> Value {
        let v = match self.kind {
            Kind::Chat => serde_json::to_value(ChatChunk {
                id: self.id.clone(),
                object: "chat.completion.chunk",
                created: self.created,
                model: self.s.model.id.clone(),
                choices: vec![],
                usage: Some(Some(usage)),
                timings: Some(timings),
            }),
            Kind::Text => serde_json::to_value(Completion {
                id: self.id.clone(),
                object: "text_completion",
                created: self.created,
                model: self.s.model.id.clone(),
                choices: vec![],
                usage: Some(Some(usage)),
                timings: Some(timings),
            }),
        };
        v.unwrap_or(Value::Null)
    }
}

fn finish_reason(f: &Finish) -> &'static str {
    match f {
        Finish::Stop => "stop",
        // A cancelled generation has no reader left; "length" never reaches anyone.
        Finish::Length | Finish::Cancelled => "length",
    }
}

fn usage_of(sum: &Summary) -> (Usage, Timings) {
    let usage = Usage {
        prompt_tokens: sum.prompt_tokens,
        completion_tokens: sum.completion_tokens,
        total_tokens: sum.prompt_tokens + sum.completion_tokens,
        prompt_tokens_details: PromptTokensDetails {
            cached_tokens: sum.cached_tokens,
        },
    };
    let per_s = |n: usize, t: Duration| {
        let s = t.as_secs_f64();
        if s > 0.0 {
            n as f64 / s
        } else {
            0.0
        }
    };
    let evaluated = sum.prompt_tokens - sum.cached_tokens;
    let timings = Timings {
        prompt_n: evaluated,
        prompt_ms: sum.prompt_time.as_secs_f64() * 1e3,
        prompt_per_second: per_s(evaluated, sum.prompt_time),
        predicted_n: sum.completion_tokens,
        predicted_ms: sum.gen_time.as_secs_f64() * 1e3,
        predicted_per_second: per_s(sum.completion_tokens, sum.gen_time),
        cache_n: sum.cached_tokens,
    };
    (usage, timings)
}

async fn run(s: Shared, p: Prepared) -> Result<Response, ApiError> {
    let (tx, rx) = mpsc::unbounded_channel();
    let job = Job {
        prompt: p.prompt.clone(),
        params: p.params.clone(),
        events: tx,
    };
    if !s.worker.submit(job) {
        return Err(ApiError::status(
            StatusCode::SERVICE_UNAVAILABLE,
            "The engine has stopped; restart the server",
        ));
    }
    if p.stream {
        Ok(stream(s, p, rx))
    } else {
        collect(s, p, rx).await
    }
}

/// Waits for the whole generation and answers one JSON object.
async fn collect(
    s: Shared,
    p: Prepared,
    mut rx: mpsc::UnboundedReceiver<Event>,
) -> Result<Response, ApiError> {
    let mut asm = Assembler::new(&s, &p);
    let (mut content, mut reasoning, mut logprobs) = (String::new(), String::new(), Vec::new());
    let summary = loop {
        match rx.recv().await {
            Some(Event::Token {
                token,
                text,
                logprobs: lp,
            }) => {
                let piece = asm.piece(token, &text, lp.as_ref());
                content += &piece.content;
                reasoning += &piece.reasoning;
                logprobs.extend(piece.logprobs);
            }
            Some(Event::Done(sum)) => break sum,
            Some(Event::Failed(msg)) => {
                return Err(ApiError::status(StatusCode::INTERNAL_SERVER_ERROR, msg))
            }
            None => {
                return Err(ApiError::status(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "The engine stopped during the request",
                ))
            }
        }
    };
    let tail = asm.finish();
    content += &tail.content;
    reasoning += &tail.reasoning;
    let (usage, timings) = usage_of(&summary);
    let reason = finish_reason(&summary.finish);
    let body = match p.kind {
        Kind::Chat => serde_json::to_value(ChatCompletion {
            id: asm.id.clone(),
            object: "chat.completion",
            created: asm.created,
            model: s.model.id.clone(),
            choices: vec![ChatChoice {
                index: 0,
                message: AssistantMessage {
                    role: "assistant",
                    content,
                    reasoning_content: (!reasoning.is_empty()).then_some(reasoning),
                },
                logprobs: asm
                    .want_logprobs
                    .map(|_| ChoiceLogprobs { content: logprobs }),
                finish_reason: reason,
            }],
            usage,
            timings,
        }),
        Kind::Text => {
            let mut c = asm.text_chunk(content, &logprobs, Some(reason), Some(Some(usage)));
            c.timings = Some(timings);
            serde_json::to_value(c)
        }
    };
    let body =
        body.map_err(|e| ApiError::status(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(Json(body).into_response())
}

fn sse_json<T: Serialize>(v: &T) -> SseEvent {
    SseEvent::default().data(serde_json::to_string(v).unwrap_or_else(|_| "{}".into()))
}

/// Answers as server-sent events. A task turns engine events into SSE chunks; when the client
/// goes away the response stream is dropped, the task sees its channel close and drops the
/// engine's receiver, and the engine stops at the next token.
fn stream(s: Shared, p: Prepared, mut rx: mpsc::UnboundedReceiver<Event>) -> Response {
    let (out, out_rx) = mpsc::channel::<Result<SseEvent, Infallible>>(64);
    tokio::spawn(async move {
        let mut asm = Assembler::new(&s, &p);
        let usage_field = p.include_usage.then_some(None);
        let send = |ev: SseEvent| {
            let out = out.clone();
            async move { out.send(Ok(ev)).await.is_ok() }
        };
        if p.kind == Kind::Chat {
            let first = asm.chat_chunk(
                Delta {
                    role: Some("assistant"),
                    content: Some(String::new()),
                    reasoning_content: None,
                },
                vec![],
                None,
                usage_field.clone(),
            );
            if !send(sse_json(&first)).await {
                return;
            }
        }
        let summary = loop {
            let ev = tokio::select! {
                ev = rx.recv() => ev,
                _ = out.closed() => return,
            };
            let piece = match ev {
                Some(Event::Token {
                    token,
                    text,
                    logprobs,
                }) => asm.piece(token, &text, logprobs.as_ref()),
                Some(Event::Done(sum)) => break Ok(sum),
                Some(Event::Failed(msg)) => break Err(msg),
                None => break Err("The engine stopped during the request".to_string()),
            };
            if piece.content.is_empty() && piece.reasoning.is_empty() && piece.logprobs.is_empty() {
                continue;
            }
            let data = match p.kind {
                Kind::Chat => sse_json(&asm.chat_chunk(
                    Delta {
                        role: None,
                        content: (!piece.content.is_empty()).then_some(piece.content),
                        reasoning_content: (!piece.reasoning.is_empty()).then_some(piece.reasoning),
                    },
                    piece.logprobs,
                    None,
                    usage_field.clone(),
                )),
                Kind::Text => {
                    let c =
                        asm.text_chunk(piece.content, &piece.logprobs, None, usage_field.clone());
                    sse_json(&c)
                }
            };
            if !send(data).await {
                return;
            }
        };
        let summary = match summary {
            Ok(sum) => sum,
            Err(msg) => {
                let e = ApiError::status(StatusCode::INTERNAL_SERVER_ERROR, msg);
                send(sse_json(&e.body())).await;
                send(SseEvent::default().data("[DONE]")).await;
                return;
            }
        };
        let tail = asm.finish();
        let reason = Some(finish_reason(&summary.finish));
        let last = match p.kind {
            Kind::Chat => sse_json(&asm.chat_chunk(
                Delta {
                    role: None,
                    content: (!tail.content.is_empty()).then_some(tail.content),
                    reasoning_content: (!tail.reasoning.is_empty()).then_some(tail.reasoning),
                },
                vec![],
                reason,
                usage_field.clone(),
            )),
            Kind::Text => {
                let c = asm.text_chunk(tail.content, &[], reason, usage_field.clone());
                sse_json(&c)
            }
        };
        if !send(last).await {
            return;
        }
        if p.include_usage {
            let (usage, timings) = usage_of(&summary);
            if !send(sse_json(&asm.usage_chunk(usage, timings))).await {
                return;
            }
        }
        send(SseEvent::default().data("[DONE]")).await;
    });
    Sse::new(tokio_stream::wrappers::ReceiverStream::new(out_rx))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(2)))
        .into_response()
}
