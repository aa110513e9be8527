//! A raw Streamable HTTP client: what an attacker or a broken client sends, header by header.
//! Shared by `mcpl-rpc`'s transport tests and, by path, `mcpl-cli`'s `tests/security.rs`.
#![allow(dead_code)]

use serde_json::Value;

/// Raw requests to one endpoint.
pub struct Raw {
    http: reqwest::Client,
    url: String,
}

impl Raw {
    /// A client for the endpoint at `url` (`http(s)://.../mcp`).
    pub fn new(url: &str) -> Raw {
        mcpl_rpc::transport::tls::install_default_provider();
        Raw {
            http: reqwest::Client::new(),
            url: url.to_owned(),
        }
    }

    /// POSTs `body` as JSON with `headers` (a `host` among them replaces the URL's).
    pub async fn post(&self, headers: &[(&str, &str)], body: &str) -> reqwest::Response {
        let mut builder = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_owned());
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.send().await.unwrap()
    }

    /// GETs the endpoint's event stream with `headers`.
    pub async fn get(&self, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut builder = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.send().await.unwrap()
    }

    /// DELETEs the session `headers` name.
    pub async fn delete(&self, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut builder = self.http.delete(&self.url);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.send().await.unwrap()
    }

    /// POSTs `message`; returns the status, the session header and the JSON-RPC answer (from
    /// a JSON body or the SSE stream), if any.
    pub async fn call(
        &self,
        headers: &[(&str, &str)],
        message: Value,
    ) -> (u16, Option<String>, Option<Value>) {
        let response = self.post(headers, &message.to_string()).await;
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_owned());
        let text = response.text().await.unwrap();
        let answer = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .chain(std::iter::once(text.as_str()))
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v.get("id").is_some());
        (status, session, answer)
    }

    /// Opens a session with a bare `initialize` (it must succeed); returns its id.
    pub async fn open(&self, headers: &[(&str, &str)]) -> String {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        let response = self.post(headers, init).await;
        assert_eq!(response.status().as_u16(), 200);
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let _ = response.bytes().await;
        id
    }
}
