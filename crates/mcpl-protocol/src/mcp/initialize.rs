//! `initialize`: protocol versions, capabilities and implementation info (MCP lifecycle;
//! MCPL §3.1, §5.1, §5.2 for `experimental.mcpl`).
//!
//! MCPL rides `initialize` as `capabilities.experimental.mcpl` on both sides and leaves the MCP
//! `protocolVersion` alone. The `experimental` map is kept raw here so the server's manifest
//! reaches the digest (§17.2) exactly as written; typed views are in [`crate::mcpl`].

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// MCP protocol revision 2025-11-25, the newest this crate speaks.
pub const PROTOCOL_VERSION_2025_11_25: &str = "2025-11-25";
/// MCP protocol revision 2025-06-18.
pub const PROTOCOL_VERSION_2025_06_18: &str = "2025-06-18";
/// MCP protocol revision 2025-03-26.
pub const PROTOCOL_VERSION_2025_03_26: &str = "2025-03-26";
/// MCP protocol revision 2024-11-05, the oldest this crate speaks (MCPL §5.2's example).
pub const PROTOCOL_VERSION_2024_11_05: &str = "2024-11-05";
/// The newest MCP protocol revision this crate speaks; what a client asks for.
pub const LATEST_PROTOCOL_VERSION: &str = PROTOCOL_VERSION_2025_11_25;

/// Every MCP revision this crate speaks, newest first.
///
/// The subset used here (tools, ping, cancellation, logging) has the same shape in all four;
/// newer members (`title`, `outputSchema`, `structuredContent`) are optional and ignored by
/// older peers. Answering a 2025-06-18 client with its own version keeps clients that know
/// nothing newer connected.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] = &[
    PROTOCOL_VERSION_2025_11_25,
    PROTOCOL_VERSION_2025_06_18,
    PROTOCOL_VERSION_2025_03_26,
    PROTOCOL_VERSION_2024_11_05,
];

/// The key of MCPL inside `capabilities.experimental` (§3.1).
pub const MCPL_EXPERIMENTAL_KEY: &str = "mcpl";

/// The version a server answers with: the client's own if the server speaks it, else the
/// server's newest (MCP lifecycle). `supported` lists the server's versions newest first; an
/// empty list yields `None`.
pub fn negotiate_protocol_version<'a>(requested: &str, supported: &[&'a str]) -> Option<&'a str> {
    supported
        .iter()
        .find(|v| **v == requested)
        .or_else(|| supported.first())
        .copied()
}

/// [`negotiate_protocol_version`] over [`SUPPORTED_PROTOCOL_VERSIONS`].
pub fn negotiate_supported_version(requested: &str) -> &'static str {
    negotiate_protocol_version(requested, SUPPORTED_PROTOCOL_VERSIONS)
        .unwrap_or(LATEST_PROTOCOL_VERSION)
}

/// The name and version of a client or server (`clientInfo`, `serverInfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// A programmatic name.
    pub name: String,
    /// The implementation's version.
    pub version: String,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Members this crate does not know (icons, websiteUrl, ...), kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Implementation {
    /// An implementation named `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            extra: Map::new(),
        }
    }
}

/// Reads `experimental.mcpl` from an `experimental` map as `T`.
fn read_mcpl<T: DeserializeOwned>(
    experimental: &Option<Map<String, Value>>,
) -> Option<Result<T, serde_json::Error>> {
    experimental
        .as_ref()
        .and_then(|e| e.get(MCPL_EXPERIMENTAL_KEY))
        .map(|v| T::deserialize(v))
}

/// Writes `value` as `experimental.mcpl`, creating `experimental` if needed.
fn write_mcpl<T: Serialize>(
    experimental: &mut Option<Map<String, Value>>,
    value: &T,
) -> Result<(), serde_json::Error> {
    let value = serde_json::to_value(value)?;
    experimental
        .get_or_insert_with(Map::new)
        .insert(MCPL_EXPERIMENTAL_KEY.to_owned(), value);
    Ok(())
}

/// What a client (an MCPL host) can do (`initialize` params).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// Experimental capabilities; `experimental.mcpl` is the host's MCPL support (§5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Members this crate does not know (`roots`, `sampling`, `elicitation`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ClientCapabilities {
    /// The raw `experimental.mcpl` object, if the client advertised MCPL.
    pub fn mcpl_value(&self) -> Option<&Value> {
        self.experimental.as_ref()?.get(MCPL_EXPERIMENTAL_KEY)
    }

    /// `experimental.mcpl` read as `T` (usually [`crate::mcpl::HostCapabilities`]); `None`
    /// when the client did not advertise MCPL (§3.3: a plain MCP peer).
    pub fn mcpl<T: DeserializeOwned>(&self) -> Option<Result<T, serde_json::Error>> {
        read_mcpl(&self.experimental)
    }

    /// Sets `experimental.mcpl`.
    pub fn set_mcpl<T: Serialize>(&mut self, mcpl: &T) -> Result<(), serde_json::Error> {
        write_mcpl(&mut self.experimental, mcpl)
    }
}

/// `capabilities.tools` of a server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolsCapability {
    /// Whether the server sends `notifications/tools/list_changed`.
    #[serde(
        rename = "listChanged",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub list_changed: Option<bool>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a server can do (`initialize` result).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Present when the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Present when the server sends `notifications/message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Map<String, Value>>,
    /// Experimental capabilities; `experimental.mcpl` is the server's manifest (§5.1, §17.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Members this crate does not know (`resources`, `prompts`, `completions`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ServerCapabilities {
    /// The raw `experimental.mcpl` object (the manifest), if the server advertised MCPL.
    pub fn mcpl_value(&self) -> Option<&Value> {
        self.experimental.as_ref()?.get(MCPL_EXPERIMENTAL_KEY)
    }

    /// `experimental.mcpl` read as `T` (usually [`crate::mcpl::Manifest`] or
    /// [`crate::mcpl::ServerCapabilities`]); `None` for a plain MCP server (§3.3).
    pub fn mcpl<T: DeserializeOwned>(&self) -> Option<Result<T, serde_json::Error>> {
        read_mcpl(&self.experimental)
    }

    /// Sets `experimental.mcpl`.
    pub fn set_mcpl<T: Serialize>(&mut self, mcpl: &T) -> Result<(), serde_json::Error> {
        write_mcpl(&mut self.experimental, mcpl)
    }
}

/// `initialize` params (client → server).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializeParams {
    /// The MCP revision the client asks for (usually its newest).
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// What the client can do.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    #[serde(rename = "clientInfo")]
    pub client_info: Implementation,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InitializeParams {
    /// Params asking for [`LATEST_PROTOCOL_VERSION`].
    pub fn new(capabilities: ClientCapabilities, client_info: Implementation) -> Self {
        InitializeParams {
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            capabilities,
            client_info,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// `initialize` result (server → client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializeResult {
    /// The MCP revision the session uses (see [`negotiate_protocol_version`]).
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// What the server can do.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    #[serde(rename = "serverInfo")]
    pub server_info: Implementation,
    /// Usage instructions for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InitializeResult {
    /// The answer to `params`: the negotiated version, `capabilities` and `server_info`.
    pub fn answer(
        params: &InitializeParams,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        InitializeResult {
            protocol_version: negotiate_supported_version(&params.protocol_version).to_owned(),
            capabilities,
            server_info,
            instructions: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn negotiation_keeps_a_supported_version_and_falls_back_to_the_latest() {
        assert_eq!(negotiate_supported_version("2024-11-05"), "2024-11-05");
        assert_eq!(negotiate_supported_version("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate_supported_version("2025-11-25"), "2025-11-25");
        assert_eq!(
            negotiate_supported_version("1999-01-01"),
            LATEST_PROTOCOL_VERSION
        );
        assert_eq!(negotiate_protocol_version("x", &[]), None);
        assert_eq!(negotiate_protocol_version("x", &["b", "a"]), Some("b"));
    }

    #[test]
    fn s5_2_host_initialize_params_round_trip() {
        let wire = json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {
                "roots": {"listChanged": true},
                "experimental": {"mcpl": {
                    "version": "0.5", "pushEvents": true,
                    "contextHooks": {"beforeInference": true},
                    "inferenceLifecycle": true, "inferenceRequest": {"streaming": true},
                    "channels": {"register": true, "publish": true, "incoming": true},
                    "featureSets": true, "toolHints": true}}
            },
            "clientInfo": {"name": "host", "version": "1.0", "vendorField": 3},
            "futureMember": [1]
        });
        let p: InitializeParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.capabilities.mcpl_value().unwrap()["version"], "0.5");
        assert!(p.capabilities.extra.contains_key("roots"));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
    }

    #[test]
    fn s5_1_server_initialize_result_round_trips() {
        let wire = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "tools": {"listChanged": true}, "resources": {"subscribe": true}, "logging": {},
                "experimental": {"mcpl": {"version": "0.5",
                    "revision": "sha256:QLXa7BigUFzNlw_IWPSqpYbDzdvBX7PVQIPS5lgnkaw",
                    "pushEvents": true, "modelInfo": true, "featureSets": {}}}
            },
            "serverInfo": {"name": "arcade", "version": "0.1.0", "title": "Arcade"},
            "instructions": "Play games."
        });
        let r: InitializeResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(
            r.capabilities.tools.as_ref().unwrap().list_changed,
            Some(true)
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    }

    #[test]
    fn s3_3_a_plain_mcp_peer_has_no_mcpl() {
        let caps: ServerCapabilities = serde_json::from_value(json!({"tools": {}})).unwrap();
        assert!(caps.mcpl::<Value>().is_none());
        let mut caps = caps;
        caps.set_mcpl(&json!({"version": "0.5"})).unwrap();
        assert_eq!(
            caps.mcpl::<Value>().unwrap().unwrap(),
            json!({"version": "0.5"})
        );
    }

    #[test]
    fn answer_negotiates_the_version() {
        let params = InitializeParams {
            protocol_version: "2025-06-18".into(),
            ..InitializeParams::new(ClientCapabilities::default(), Implementation::new("c", "1"))
        };
        let r = InitializeResult::answer(
            &params,
            ServerCapabilities::default(),
            Implementation::new("s", "1"),
        );
        assert_eq!(r.protocol_version, "2025-06-18");
    }
}
