//! The fixture contract: the names a server under test exposes so the server suite can drive
//! every vector. `docs/CONFORMANCE.md` describes each one; a server written in any language
//! adds them (for example as a `conformance` mode or toolset) to be tested.
//!
//! Every name is required; a server that lacks one fails the vectors that use it: the toolsets
//! [`INSTANCED`], [`FLAT`] and [`DEFAULT_OPEN`], the undeclared group [`GROUP`], the tools
//! [`ECHO`], [`FINISH`], [`FLAT_TOOL`], [`OPENED_TOOL`], [`GROUPED`], [`REVEALED`],
//! [`REVEAL`], [`LATER`], [`MOVE`], [`MOVER`] and [`UNDECLARE`], and, for hosts without
//! toolHints, the compatibility tools [`COMPAT_OPEN`], [`COMPAT_CHOOSE`], [`COMPAT_CLOSE`].
//!
//! These names are the one list of them: `mcpl-conformance-fixture`, the contract written on
//! the project's server SDK, takes them from here.

/// A declared toolset with `instances: true`, `default: "closed"` and the options schema
/// `{level?: integer 1..3}` (no other members).
pub const INSTANCED: &str = "cf-game";
/// A declared toolset without instances, `default: "closed"`.
pub const FLAT: &str = "cf-flat";
/// A declared toolset with `default: "open"` and no instances (v22).
pub const DEFAULT_OPEN: &str = "cf-open";
/// A toolset named only by tools' `mcpl/toolset`, never declared (§5.4).
pub const GROUP: &str = "cf-group";

/// Tool of [`INSTANCED`], `{value}`. Its per-instance definition (sent in the open's hints)
/// restricts `value` to `enum: [<instance name>]`; a call answers with text
/// `<instance>:<value>`, and a value outside the instance's enum is a tool error.
pub const ECHO: &str = "cf_echo";
/// Tool of [`INSTANCED`], `{}`: ends its own instance as a game ends (not a close). The result's
/// hints close the instance with an `ended` id, and an ended record with that id appears in
/// `toolsets/list`.
pub const FINISH: &str = "cf_finish";
/// Tool of [`FLAT`], `{}`: answers text `flat`.
pub const FLAT_TOOL: &str = "cf_flat";
/// Tool of [`DEFAULT_OPEN`], `{}`.
pub const OPENED_TOOL: &str = "cf_opened";
/// Tool of the undeclared group [`GROUP`], `{}`; always visible as far as the server knows.
pub const GROUPED: &str = "cf_grouped";
/// A dynamic tool with no toolset, `{}`; invisible at the start of every connection.
pub const REVEALED: &str = "cf_revealed";
/// Static tool `{visible: boolean, delayMs?: integer}`: after `delayMs` (default 0) sets
/// [`REVEALED`]'s visibility, reported in its own result's hints (§6.2). If the call was
/// cancelled meanwhile, the change goes as `tools/hints` (§6.1).
pub const REVEAL: &str = "cf_reveal";
/// Static tool `{visible: boolean, delayMs?: integer}`: answers at once with no hints; then,
/// after `delayMs` (default 0), sets [`REVEALED`]'s visibility as something else's consequence:
/// a `push/event` carrying the hints when `pushEvents` is granted, `tools/hints` otherwise.
pub const LATER: &str = "cf_later";
/// Static tool `{presence: "static" | "dynamic"}`: moves [`MOVER`], with a hint
/// entry carrying `presence` in its result; `tools/list` then shows the move.
pub const MOVE: &str = "cf_move";
/// Tool (static at the start) that [`MOVE`] moves; always callable, answers `moved`.
pub const MOVER: &str = "cf_mover";
/// Static tool `{restore?: boolean}`: removes [`FLAT`]'s declaration from the
/// manifest (closing it for the principal, with hints in the result and an ended record, and
/// `mcpl/manifestChanged` naming the domain `toolsets`); with `restore: true` puts it back.
pub const UNDECLARE: &str = "cf_undeclare";
/// Compatibility tool for hosts without `toolHints` (§11): `{toolset, instance?,
/// options?}`, opens or adopts and makes the instance current.
pub const COMPAT_OPEN: &str = "toolset_open";
/// Compatibility tool: `{toolset, instance}`, makes an open instance current and
/// refuses a name that is not open.
pub const COMPAT_CHOOSE: &str = "toolset_choose";
/// Compatibility tool: `{toolset, instance?}`.
pub const COMPAT_CLOSE: &str = "toolset_close";

/// Every tool the contract names for a host with toolHints.
pub const TOOLS: [&str; 11] = [
    ECHO,
    FINISH,
    FLAT_TOOL,
    OPENED_TOOL,
    GROUPED,
    REVEALED,
    REVEAL,
    LATER,
    MOVE,
    MOVER,
    UNDECLARE,
];

/// Every toolset the contract declares.
pub const TOOLSETS: [&str; 3] = [INSTANCED, FLAT, DEFAULT_OPEN];
