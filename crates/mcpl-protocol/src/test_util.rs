//! Helpers shared by this crate's unit tests.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Decodes `wire` as `T`, checks that encoding it again gives the same JSON (unknown members
/// included), and returns the decoded value.
pub(crate) fn round_trip<T: Serialize + DeserializeOwned>(wire: Value) -> T {
    let v: T = serde_json::from_value(wire.clone()).unwrap();
    assert_eq!(serde_json::to_value(&v).unwrap(), wire);
    v
}
