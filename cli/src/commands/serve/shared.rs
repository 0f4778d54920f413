//! What the connections share, and an answer.

use serde_json::json;

use super::engines::Engines;

/// What the connections share.
pub struct State {
    pub engines: Engines,
    /// The engines' backend, as `/api/info` names it.
    pub chosen: String,
    /// `rectcast shaders --json`, made once.
    pub kernels: String,
    pub max_body: u64,
}

/// An answer: status, content type and body.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// Sent without its body (an answer to HEAD), its length still said.
    pub body_omitted: bool,
}

impl Reply {
    pub fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            content_type,
            body: body.into(),
            body_omitted: false,
        }
    }

    pub fn json(value: &serde_json::Value) -> Self {
        Self::ok("application/json", value.to_string())
    }

    /// An error the page shows: `{"error": message}`.
    pub fn error(status: u16, message: impl std::fmt::Display) -> Self {
        Self {
            status,
            content_type: "application/json",
            body: json!({ "error": message.to_string() })
                .to_string()
                .into_bytes(),
            body_omitted: false,
        }
    }
}
