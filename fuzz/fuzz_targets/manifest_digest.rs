//! The §17.2 manifest digest: never panics; normalizing is idempotent; a root `revision`
//! member never changes the digest; the digest has the `sha256:` form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpl_protocol::mcpl::digest;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(manifest) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(revision) = digest::manifest_revision(&manifest) else {
        return;
    };
    assert!(
        digest::is_revision(&revision),
        "bad revision form: {revision}"
    );
    let normalized = digest::normalize_manifest(&manifest).expect("it digested");
    assert_eq!(
        digest::manifest_revision(&normalized).expect("normalized digests"),
        revision,
        "normalizing twice changed the digest"
    );
    let mut with_revision = manifest.clone();
    if let Some(root) = with_revision.as_object_mut() {
        root.insert("revision".into(), Value::String("sha256:whatever".into()));
    }
    assert_eq!(
        digest::manifest_revision(&with_revision).expect("still digests"),
        revision,
        "a root `revision` member changed the digest"
    );
});
