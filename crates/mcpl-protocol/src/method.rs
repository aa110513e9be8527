//! Typed methods: each request names the type of its params and of its result, so an answer is
//! read as the type of the request it answers, never guessed from its shape.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A JSON-RPC request method with typed params and result.
///
/// Implemented by a marker type per method, for example `ToolsList`:
/// the peer serializes `Params`, and decodes the matching response as `Result`.
pub trait RequestMethod {
    /// The wire method name (one of [`crate::methods`]).
    const METHOD: &'static str;
    /// The request params.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The result of a successful response.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

/// A JSON-RPC notification method with typed params.
pub trait NotificationMethod {
    /// The wire method name (one of [`crate::methods`]).
    const METHOD: &'static str;
    /// The notification params.
    type Params: Serialize + DeserializeOwned + Send + 'static;
}
