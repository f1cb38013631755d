//! `zinc serve`: an OpenAI-compatible HTTP API (chat completions, completions, models, SSE
//! streaming), tokenize/detokenize, Prometheus metrics and the browser chat UI.
//!
//! Handlers parse, check and tokenize requests, then queue them for the engine thread
//! ([`worker`]); they never run model code, so `/health` and `/metrics` answer while a
//! generation runs. Requests are served in arrival order.

mod completions;
pub mod error;
pub mod metrics;
pub mod openai;
pub mod reasoning;
pub mod worker;

use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use zinc_tokenizer::{ChatTemplate, Tokenizer};

pub use error::ApiError;
pub use metrics::Metrics;
pub use worker::{EngineInfo, Worker};

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
}

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub host: String,
    pub port: u16,
    /// When set, API requests need `Authorization: Bearer <key>`.
    pub api_key: Option<String>,
    /// The largest request body accepted, in bytes.
    pub max_body: usize,
}

/// The model a server answers for: its name, tokenizer and chat template.
pub struct ServedModel {
    pub id: String,
    pub tokenizer: Tokenizer,
    /// `Err` holds why there is none; chat requests then get that message.
    pub template: Result<ChatTemplate, String>,
    /// Whether output can contain `<think>` … `</think>` blocks to split off.
    pub thinking: bool,
    pub info: EngineInfo,
}

pub(crate) struct AppState {
    pub cfg: ServerConfig,
    pub model: ServedModel,
    pub worker: Worker,
    pub metrics: Arc<Metrics>,
    pub created: u64,
}

pub(crate) type Shared = Arc<AppState>;

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The router: API routes (behind the key, when one is set) and the open ones.
fn router(state: Shared) -> Router {
    let api = Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(completions::chat))
        .route("/v1/completions", post(completions::completion))
        .route("/tokenize", post(tokenize))
        .route("/detokenize", post(detokenize))
        .route("/apply-template", post(completions::apply_template))
        .route("/metrics", get(metrics))
        .route_layer(middleware::from_fn(require_json))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_key));
    Router::new()
        .route("/", get(index))
        .route("/assets/app.js", get(app_js))
        .route("/assets/style.css", get(style_css))
        .route("/health", get(health))
        .merge(api)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            count_rejections,
        ))
        .layer(DefaultBodyLimit::max(state.cfg.max_body))
        .with_state(state)
}

/// Serves until Ctrl-C. `on_listening` runs once the socket is bound (with the real port when
/// `port` was 0).
pub async fn serve(
    cfg: ServerConfig,
    model: ServedModel,
    worker: Worker,
    metrics: Arc<Metrics>,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    let addr = format!("{}:{}", cfg.host, cfg.port);
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|source| ServerError::Bind {
            addr: addr.clone(),
            source,
        })?;
    let local = listener.local_addr().map_err(ServerError::Serve)?;
    let state = Arc::new(AppState {
        cfg,
        model,
        worker,
        metrics,
        created: unix_now(),
    });
    let app = router(state);
    on_listening(local);
    tokio::select! {
        r = axum::serve(listener, app) => r.map_err(ServerError::Serve),
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}

/// [`serve`] on a runtime of its own, for a binary that has none.
pub fn serve_blocking(
    cfg: ServerConfig,
    model: ServedModel,
    worker: Worker,
    metrics: Arc<Metrics>,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("zinc-http")
        .build()
        .map_err(ServerError::Serve)?;
    rt.block_on(serve(cfg, model, worker, metrics, on_listening))
}

/// POST bodies must say they are JSON: a cross-site form or `text/plain` post (which browsers
/// send without a CORS preflight) cannot then start work on a local server.
async fn require_json(req: Request, next: Next) -> Response {
    if req.method() == axum::http::Method::POST {
        let ct = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let essence = ct.split(';').next().unwrap_or("").trim();
        if !essence.eq_ignore_ascii_case("application/json") {
            return ApiError::status(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "Request bodies must be JSON with Content-Type: application/json (got {ct:?})"
                ),
            )
            .into_response();
        }
    }
    next.run(req).await
}

/// Reads the body under the size limit; an over-long body is OpenAI's 413.
pub(crate) fn body_bytes(
    body: Result<Bytes, BytesRejection>,
    limit: usize,
) -> Result<Bytes, ApiError> {
    body.map_err(|rej| {
        let status = rej.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::status(
                status,
                format!("The request body is larger than this server's limit of {limit} bytes (zinc serve --max-body)"),
            )
        } else {
            ApiError::status(status, format!("Cannot read the request body: {rej}"))
        }
    })
}

async fn require_key(
    State(s): State<Shared>,
    headers: HeaderMap,
    req: Request,
    next: Next,
) -> Response {
    if let Some(key) = &s.cfg.api_key {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if !constant_time_eq(given.trim().as_bytes(), key.as_bytes()) {
            return ApiError::unauthorized().into_response();
        }
    }
    next.run(req).await
}

/// Compares without an early exit, so the time taken does not tell how much of a key matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, &x) in b.iter().enumerate() {
        diff |= (x ^ a.get(i).copied().unwrap_or(0)) as usize;
    }
    diff == 0
}

async fn count_rejections(State(s): State<Shared>, req: Request, next: Next) -> Response {
    let resp = next.run(req).await;
    if resp.status().is_client_error() || resp.status().is_server_error() {
        s.metrics.requests_rejected.fetch_add(1, Relaxed);
    }
    resp
}

async fn not_found() -> ApiError {
    ApiError::status(
        StatusCode::NOT_FOUND,
        "No such endpoint; this server has /v1/chat/completions, /v1/completions, /v1/models, /tokenize, /detokenize, /apply-template, /health, /metrics and the chat UI at /",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::status(
        StatusCode::METHOD_NOT_ALLOWED,
        "This endpoint does not accept that method",
    )
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

async fn index() -> Response {
    asset(
        "text/html; charset=utf-8",
        include_str!("../assets/index.html"),
    )
}

async fn app_js() -> Response {
    asset(
        "text/javascript; charset=utf-8",
        include_str!("../assets/app.js"),
    )
}

async fn style_css() -> Response {
    asset(
        "text/css; charset=utf-8",
        include_str!("../assets/style.css"),
    )
}

/// `ok` while the engine serves; after an engine failure, `degraded` with the count (the thread
/// goes on serving, but the device may be in a bad state).
async fn health(State(s): State<Shared>) -> Response {
    let failures = s.metrics.engine_failures.load(Relaxed);
    if failures == 0 {
        Json(serde_json::json!({ "status": "ok" })).into_response()
    } else {
        Json(serde_json::json!({ "status": "degraded", "engine_failures": failures }))
            .into_response()
    }
}

async fn metrics(State(s): State<Shared>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        s.metrics.render(),
    )
        .into_response()
}

async fn models(State(s): State<Shared>) -> Json<openai::ModelList> {
    s.metrics.requests_models.fetch_add(1, Relaxed);
    let info = &s.model.info;
    Json(openai::ModelList {
        object: "list",
        data: vec![openai::ModelCard {
            id: s.model.id.clone(),
            object: "model",
            created: s.created,
            owned_by: "zinc",
            meta: openai::ModelMeta {
                n_ctx: info.n_ctx,
                n_vocab: info.n_vocab,
                architecture: info.arch.clone(),
                backend: info.backend.clone(),
            },
        }],
    })
}

async fn tokenize(
    State(s): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body_bytes(body, s.cfg.max_body)?;
    let req: openai::TokenizeRequest = openai::parse_body(&body, None)?;
    s.metrics.requests_tokenize.fetch_add(1, Relaxed);
    let tokens = s
        .model
        .tokenizer
        .encode(&req.content, req.add_special, req.parse_special);
    Ok(Json(serde_json::json!({ "tokens": tokens })).into_response())
}

async fn detokenize(
    State(s): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body_bytes(body, s.cfg.max_body)?;
    let req: openai::DetokenizeRequest = openai::parse_body(&body, None)?;
    s.metrics.requests_detokenize.fetch_add(1, Relaxed);
    let ids = completions::check_token_ids(&req.tokens, s.model.info.n_vocab, "tokens")?;
    let content = s
        .model
        .tokenizer
        .decode(&ids, false)
        .map_err(|e| ApiError::invalid(e.to_string(), Some("tokens")))?;
    Ok(Json(serde_json::json!({ "content": content })).into_response())
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn keys_compare_whole() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secre", b"secret"));
        assert!(!constant_time_eq(b"secrets", b"secret"));
        assert!(!constant_time_eq(b"", b"secret"));
        assert!(!constant_time_eq(b"Secret", b"secret"));
    }
}
