//! The RFC-014 conformance suite: the 38 vectors of §13 and the host requirements that show
//! on the wire, as named checks against any server or host, in any language.
//!
//! - [`run_server_suite`] plays a scripted host against a server under test (a command line,
//!   a `ws://` URL, or a [`Connector`]), with and without `toolHints`, with and without a
//!   `pushEvents` grant, and with two connections of one principal where the target allows.
//!   The server exposes the small [`fixture`] contract so the suite can drive every vector.
//! - [`run_host_suite`] plays a scripted server (on WebSocket, or Streamable HTTP) and the
//!   agent (over the host's stdio, through the four meta-tools) against a host under test,
//!   and watches what the host sends: its recovery reads, the opens it never sends, the calls
//!   it refuses.
//!
//! Both return a [`Report`]: one [`CheckResult`] per rule of their side, passed, failed with
//! the messages exchanged, or not applicable (only for what the target declares it lacks,
//! counted apart); a missing behaviour is a failure, never a skip. [`data`] reads the vectors
//! as data (`conformance/vectors.json`). [`render`] turns it into a
//! table, JSON or JUnit XML. The crate uses `mcpl-protocol` for names and `mcpl-rpc` (with
//! tokio) for the wire; it knows no server or host internals, so it judges any
//! implementation only by what it says on the wire. `docs/CONFORMANCE.md` has the vector
//! table, the fixture and host contracts, and how to test a server in another language.
//!
//! # For the `mcpl conformance` command
//!
//! ```text
//! mcpl conformance server [--url URL [--token T]] [--json] [--junit FILE] [--only ID]... [-- CMD...]
//! mcpl conformance host [--json] [--junit FILE] [--only ID]... -- CMD...
//! ```
//!
//! Parse the flags into [`cli::Args`] and call [`cli::server`] or [`cli::host`]: each runs the
//! suite, prints [`render::table`] (or [`render::json`] with `--json`), writes
//! [`render::junit`] to the `--junit` file, and returns the exit status (non-zero when
//! [`Report::failed`]). An [`Error`] means the suite could not start (exit 2).
//!
//! # Layout
//!
//! - [`catalog`]: the rules: [`VECTORS`] and [`HOST_RULES`].
//! - [`data`]: `conformance/vectors.json`, its steps and matchers.
//! - [`cli`]: what the `mcpl conformance` subcommand calls.
//! - [`fixture`]: the names a server under test exposes.
//! - [`reference`](mod@reference): the reference fixture, a correct server meeting the
//!   contract, with 44 faults that break it one rule at a time (the suite's mutation test);
//!   the `mcpl-conformance-fixture` binary serves it on stdio or WebSocket.
//! - [`target`]: [`ServerTarget`], [`HostTarget`], [`Options`], the connector traits.
//! - [`report`]: [`Report`], [`CheckResult`], [`Outcome`].
//! - [`transcript`]: the messages a check exchanged.
//! - [`render`]: table, JSON and JUnit renderers.
//! - `server`: the server suite (the scripted host and its checks).
//! - `host`: the host suite (the scripted server and agent, and their checks).
//! - [`error`]: [`Error`], for a suite that cannot start.

pub mod catalog;
pub mod cli;
pub mod data;
pub mod error;
pub mod fixture;
mod host;
pub mod reference;
pub mod render;
pub mod report;
mod server;
pub mod target;
pub mod transcript;
mod verdict;
mod wire;

pub use catalog::{HOST_RULES, Rule, Side, VECTORS};
pub use error::Error;
pub use host::{host_rules, run_host_suite};
pub use report::{CheckResult, Outcome, Report};
pub use server::{run_server_suite, server_vectors};
pub use target::{
    BoxFuture, Connector, HostLauncher, HostTarget, Options, ServerTarget, Unreachable,
};
pub use transcript::{Direction, Entry, Transcript};

#[cfg(test)]
mod tests {
    use super::*;

    // It reads both suites' lists, so it sits at the root rather than in `data`.
    #[test]
    fn the_file_s_sides_are_the_suites_sides() {
        let file = data::VectorFile::embedded();
        for v in &file.vectors {
            let on_server = !server::HOST_ONLY.contains(&v.id.as_str());
            let on_host = host::HOST_VECTORS.contains(&v.id.as_str());
            assert_eq!(v.sides.iter().any(|s| s == "server"), on_server, "{}", v.id);
            assert_eq!(v.sides.iter().any(|s| s == "host"), on_host, "{}", v.id);
        }
    }
}
