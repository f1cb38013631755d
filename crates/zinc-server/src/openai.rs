//! The OpenAI request and response schema (chat completions, completions, models), as serde
//! types. Requests are checked field by field: an unknown field, a wrong type or a value out of
//! range is a 400 naming the field, as OpenAI answers it.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ApiError;

/// `stop`: one string or a list of them.
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum Stop {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct StreamOptions {
    #[serde(default)]
    pub include_usage: bool,
    /// Accepted for compatibility; usage is always exact here.
    #[serde(default)]
    pub continuous_usage_stats: bool,
}

/// Sampling fields both endpoints share.
#[derive(Deserialize, Debug, Clone, Default)]
pub struct Sampling {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<u64>,
    pub min_p: Option<f64>,
    pub repeat_penalty: Option<f64>,
    pub presence_penalty: Option<f64>,
    pub frequency_penalty: Option<f64>,
    pub seed: Option<serde_json::Number>,
    pub logit_bias: Option<Map<String, Value>>,
    pub stop: Option<Stop>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct ChatRequest {
    pub model: Option<String>,
    pub messages: Vec<Value>,
    #[serde(default)]
    pub stream: Option<bool>,
    pub stream_options: Option<StreamOptions>,
    pub max_tokens: Option<u64>,
    pub max_completion_tokens: Option<u64>,
    /// Filled by a second pass over the same body ([`parse_request`]): a flattened struct
    /// would lose the field names in type errors.
    #[serde(skip)]
    pub sampling: Sampling,
    pub logprobs: Option<bool>,
    pub top_logprobs: Option<u64>,
    pub n: Option<u64>,
    pub chat_template_kwargs: Option<Map<String, Value>>,
    pub enable_thinking: Option<bool>,
    pub response_format: Option<Value>,
    pub tools: Option<Vec<Value>>,
    pub tool_choice: Option<Value>,
}

/// Fields of a chat request: everything else is refused by name. The last group is accepted
/// and has no effect on a local server (storage, routing and tracing hints).
pub const CHAT_FIELDS: &[&str] = &[
    "model",
    "messages",
    "stream",
    "stream_options",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "logit_bias",
    "stop",
    "logprobs",
    "top_logprobs",
    "n",
    "chat_template_kwargs",
    "enable_thinking",
    "response_format",
    "tools",
    "tool_choice",
    "user",
    "store",
    "metadata",
    "service_tier",
    "parallel_tool_calls",
    "prompt_cache_key",
    "safety_identifier",
];

/// `prompt` of the completions endpoint.
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum Prompt {
    Text(String),
    Texts(Vec<String>),
    Tokens(Vec<u64>),
    TokenLists(Vec<Vec<u64>>),
}

#[derive(Deserialize, Debug, Clone)]
pub struct CompletionRequest {
    pub model: Option<String>,
    pub prompt: Prompt,
    #[serde(default)]
    pub stream: Option<bool>,
    pub stream_options: Option<StreamOptions>,
    pub max_tokens: Option<u64>,
    /// Filled by a second pass over the same body ([`parse_request`]): a flattened struct
    /// would lose the field names in type errors.
    #[serde(skip)]
    pub sampling: Sampling,
    pub logprobs: Option<u64>,
    pub n: Option<u64>,
    pub best_of: Option<u64>,
    pub echo: Option<bool>,
    pub suffix: Option<String>,
}

pub const COMPLETION_FIELDS: &[&str] = &[
    "model",
    "prompt",
    "stream",
    "stream_options",
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "logit_bias",
    "stop",
    "logprobs",
    "n",
    "best_of",
    "echo",
    "suffix",
    "user",
];

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct TokenizeRequest {
    pub content: String,
    #[serde(default)]
    pub add_special: bool,
    #[serde(default = "yes")]
    pub parse_special: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct DetokenizeRequest {
    pub tokens: Vec<u64>,
}

/// A request with sampling fields: parsed, then its [`Sampling`] parsed from the same body.
pub trait WithSampling: DeserializeOwned {
    fn sampling_mut(&mut self) -> &mut Sampling;
}

impl WithSampling for ChatRequest {
    fn sampling_mut(&mut self) -> &mut Sampling {
        &mut self.sampling
    }
}

impl WithSampling for CompletionRequest {
    fn sampling_mut(&mut self) -> &mut Sampling {
        &mut self.sampling
    }
}

/// [`parse_body`] for a request with sampling fields.
pub fn parse_request<T: WithSampling>(bytes: &[u8], allowed: &[&str]) -> Result<T, ApiError> {
    let mut req: T = parse_body(bytes, Some(allowed))?;
    *req.sampling_mut() = parse_body(bytes, None)?;
    Ok(req)
}

/// Parses a request body: JSON, an object, only `allowed` fields (when given), each of the
/// right type. Every failure is a 400 that says what and where.
pub fn parse_body<T: DeserializeOwned>(
    bytes: &[u8],
    allowed: Option<&[&str]>,
) -> Result<T, ApiError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        ApiError::invalid(
            format!(
                "The request body is not valid UTF-8 (at byte {})",
                e.valid_up_to()
            ),
            None,
        )
    })?;
    let value: Value = serde_json::from_str(text)
        .map_err(|e| ApiError::invalid(format!("The request body is not valid JSON: {e}"), None))?;
    let Value::Object(obj) = &value else {
        return Err(ApiError::invalid(
            "The request body must be a JSON object",
            None,
        ));
    };
    if let Some(allowed) = allowed {
        if let Some(k) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(ApiError::invalid(
                format!("Unrecognized request argument supplied: {k}"),
                Some(k),
            ));
        }
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let param = (path != ".").then_some(path.as_str());
        let inner = e.into_inner().to_string();
        let msg = match param {
            Some(p) => format!("Invalid value for '{p}': {inner}"),
            None => format!("Invalid request: {inner}"),
        };
        ApiError::invalid(msg, param)
    })
}

#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    pub total_tokens: usize,
    pub prompt_tokens_details: PromptTokensDetails,
}

#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct PromptTokensDetails {
    /// Prompt tokens whose keys and values were already cached (prefix reuse).
    pub cached_tokens: usize,
}

/// llama.cpp's `timings` extension: the UI shows tok/s from it.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct Timings {
    pub prompt_n: usize,
    pub prompt_ms: f64,
    pub prompt_per_second: f64,
    pub predicted_n: usize,
    pub predicted_ms: f64,
    pub predicted_per_second: f64,
    pub cache_n: usize,
}

#[derive(Serialize, Debug, Clone)]
pub struct TopLogprob {
    pub token: String,
    pub logprob: f32,
    pub bytes: Vec<u8>,
}

#[derive(Serialize, Debug, Clone)]
pub struct LogprobEntry {
    pub token: String,
    pub logprob: f32,
    pub bytes: Vec<u8>,
    pub top_logprobs: Vec<TopLogprob>,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct ChoiceLogprobs {
    pub content: Vec<LogprobEntry>,
}

#[derive(Serialize, Debug, Clone)]
pub struct AssistantMessage {
    pub role: &'static str,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

#[derive(Serialize, Debug, Clone)]
pub struct ChatChoice {
    pub index: u32,
    pub message: AssistantMessage,
    pub logprobs: Option<ChoiceLogprobs>,
    pub finish_reason: &'static str,
}

#[derive(Serialize, Debug, Clone)]
pub struct ChatCompletion {
    pub id: String,
    pub object: &'static str,
    pub created: u64,
    pub model: String,
    pub choices: Vec<ChatChoice>,
    pub usage: Usage,
    pub timings: Timings,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Delta {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

#[derive(Serialize, Debug, Clone)]
pub struct ChunkChoice {
    pub index: u32,
    pub delta: Delta,
    pub logprobs: Option<ChoiceLogprobs>,
    pub finish_reason: Option<&'static str>,
}

#[derive(Serialize, Debug, Clone)]
pub struct ChatChunk {
    pub id: String,
    pub object: &'static str,
    pub created: u64,
    pub model: String,
    pub choices: Vec<ChunkChoice>,
    /// Absent unless the client asked for usage; then `null` on every chunk but the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Option<Usage>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
}

/// The legacy completions `logprobs` object.
#[derive(Serialize, Debug, Clone, Default)]
pub struct LegacyLogprobs {
    pub tokens: Vec<String>,
    pub token_logprobs: Vec<f32>,
    pub top_logprobs: Vec<Map<String, Value>>,
    pub text_offset: Vec<usize>,
}

#[derive(Serialize, Debug, Clone)]
pub struct CompletionChoice {
    pub index: u32,
    pub text: String,
    pub logprobs: Option<LegacyLogprobs>,
    pub finish_reason: Option<&'static str>,
}

#[derive(Serialize, Debug, Clone)]
pub struct Completion {
    pub id: String,
    pub object: &'static str,
    pub created: u64,
    pub model: String,
    pub choices: Vec<CompletionChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Option<Usage>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
}

#[derive(Serialize, Debug, Clone)]
pub struct ModelCard {
    pub id: String,
    pub object: &'static str,
    pub created: u64,
    pub owned_by: &'static str,
    pub meta: ModelMeta,
}

#[derive(Serialize, Debug, Clone)]
pub struct ModelMeta {
    pub n_ctx: usize,
    pub n_vocab: usize,
    pub architecture: String,
    pub backend: String,
}

#[derive(Serialize, Debug, Clone)]
pub struct ModelList {
    pub object: &'static str,
    pub data: Vec<ModelCard>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_checked_field_by_field() {
        let ok: ChatRequest = parse_request(
            br#"{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"stop":["a","b"]}"#,
            CHAT_FIELDS,
        )
        .unwrap();
        assert_eq!(ok.sampling.temperature, Some(0.5));
        assert!(matches!(ok.sampling.stop, Some(Stop::Many(ref v)) if v.len() == 2));

        let e = parse_body::<ChatRequest>(br#"{"messages":[],"bogus":1}"#, Some(CHAT_FIELDS))
            .unwrap_err();
        assert_eq!(e.param.as_deref(), Some("bogus"));
        let e =
            parse_request::<ChatRequest>(br#"{"messages":[],"temperature":"hot"}"#, CHAT_FIELDS)
                .unwrap_err();
        assert_eq!(e.param.as_deref(), Some("temperature"), "{}", e.message);
        let e =
            parse_body::<ChatRequest>(br#"{"messages":[],"max_tokens":1e30}"#, None).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("max_tokens"), "{}", e.message);
        let e = parse_body::<ChatRequest>(b"{\"messages\":[\xff]}", None).unwrap_err();
        assert!(e.message.contains("UTF-8"), "{}", e.message);
        let e =
            parse_body::<ChatRequest>(br#"{"messages":[],"temperature":1e400}"#, None).unwrap_err();
        assert!(e.message.contains("JSON"), "{}", e.message);
        let e = parse_body::<ChatRequest>(b"[1,2]", None).unwrap_err();
        assert!(e.message.contains("object"), "{}", e.message);
        let e = parse_body::<ChatRequest>(br#"{"model":"m"}"#, None).unwrap_err();
        assert!(e.message.contains("messages"), "{}", e.message);
    }

    #[test]
    fn usage_is_absent_null_or_present() {
        let mut c = ChatChunk {
            id: "x".into(),
            object: "chat.completion.chunk",
            created: 0,
            model: "m".into(),
            choices: vec![],
            usage: None,
            timings: None,
        };
        assert!(!serde_json::to_string(&c).unwrap().contains("usage"));
        c.usage = Some(None);
        assert!(serde_json::to_string(&c)
            .unwrap()
            .contains("\"usage\":null"));
        c.usage = Some(Some(Usage::default()));
        assert!(serde_json::to_string(&c)
            .unwrap()
            .contains("\"usage\":{\"prompt_tokens\":0"));
    }
}
