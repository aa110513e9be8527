//! The MCPL 0.5 base (`mcpl-SPEC-0.5.0-draft.md`), with the members RFC-014 adds to it.
//!
//! - [`capabilities`]: `experimental.mcpl` on both sides of `initialize` and feature-set
//!   declarations (§3.1, §5.1, §5.2, §6.1, §6.2; RFC-014 §5.1, §6.3).
//! - [`grant`]: capability paths, the `true` shorthand of advertisement and grant matching
//!   (§5.1, §5.4).
//! - [`policy`]: `featureSets/update` params, feature-set derivation and the receipt
//!   (§5.3, §6.4, §6.7).
//! - [`push`]: `push/event` params and result (§9; RFC-014 §6, §9.2 as amended).
//! - [`tags`]: event tags, reserved namespaces and the core closure (§16; RFC-014's
//!   `surface:`).
//! - [`manifest`]: the manifest, its change domains, `mcpl/manifest`,
//!   `mcpl/manifestChanged` and the receipt vocabulary (§17.1, §17.3–§17.6; RFC-014 §5.1).
//! - [`digest`]: the canonical manifest digest (§17.2).

pub mod capabilities;
pub mod digest;
pub mod grant;
pub mod manifest;
pub mod policy;
pub mod push;
pub mod tags;

pub use capabilities::{
    FeatureSet, HostCapabilities, InvalidUses, MCPL_VERSION, ServerCapabilities,
};
pub use digest::{DigestError, canonical_json, is_identifier, is_revision, manifest_revision};
pub use grant::{
    Grant, USES_VOCABULARY, advertised_leaves, effective_capabilities, pattern_matches,
};
pub use manifest::{
    ChangeDomain, ChangeImpact, Disposition, Manifest, ManifestChanged, ManifestChangedError,
    ManifestChangedParams, ManifestRequest, ReceiptImpact,
};
pub use policy::{
    DisabledReason, Fallback, FeatureSetsUpdate, FeatureSetsUpdateNotification,
    FeatureSetsUpdateParams, FeatureSetsUpdateResult, PolicyError, ReceiptError,
    UnavailableFeature,
};
pub use push::{PushEvent, PushEventParams, PushEventResult, PushPayload};
pub use tags::{Tag, TagError, check_emitted_tag, close_tags};
