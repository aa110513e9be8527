//! One module per subcommand. Each `run` returns the process exit code, or an error that `main`
//! prints with the subcommand's name.

pub mod arcade;
pub mod bench;
pub mod conformance;
pub mod connect;
pub mod demo;
pub mod inspect;
pub mod surface;
