//! Errors as OpenAI shapes them: `{"error": {"message", "type", "param", "code"}}` with the
//! status code a client library maps to its exception types.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

/// An error answered to a client.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub kind: &'static str,
    pub param: Option<String>,
    pub code: Option<&'static str>,
}

#[derive(Serialize)]
pub struct ErrorBody<'a> {
    pub error: ErrorDetail<'a>,
}

#[derive(Serialize)]
pub struct ErrorDetail<'a> {
    pub message: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub param: Option<&'a str>,
    pub code: Option<&'a str>,
}

impl ApiError {
    /// 400: the request is wrong; `param` names the field when there is one.
    pub fn invalid(message: impl Into<String>, param: Option<&str>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            kind: "invalid_request_error",
            param: param.map(str::to_string),
            code: None,
        }
    }

    pub fn with_code(mut self, code: &'static str) -> ApiError {
        self.code = Some(code);
        self
    }

    pub fn status(status: StatusCode, message: impl Into<String>) -> ApiError {
        let kind = if status.is_server_error() {
            "server_error"
        } else {
            "invalid_request_error"
        };
        ApiError {
            status,
            message: message.into(),
            kind,
            param: None,
            code: None,
        }
    }

    pub fn model_not_found(model: &str) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: format!("The model `{model}` does not exist; this server serves only the models listed by GET /v1/models"),
            kind: "invalid_request_error",
            param: Some("model".into()),
            code: Some("model_not_found"),
        }
    }

    pub fn unauthorized() -> ApiError {
        ApiError {
            status: StatusCode::UNAUTHORIZED,
            message: "Incorrect or missing API key: send `Authorization: Bearer <key>` with the key given to `zinc serve --api-key`".into(),
            kind: "invalid_request_error",
            param: None,
            code: Some("invalid_api_key"),
        }
    }

    pub fn body(&self) -> ErrorBody<'_> {
        ErrorBody {
            error: ErrorDetail {
                message: &self.message,
                kind: self.kind,
                param: self.param.as_deref(),
                code: self.code,
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body())).into_response()
    }
}
