//! Shared test fixtures: a small host that meets the host contract, and its broken variants.
//! (The server fixture is the library's `reference` module.)

#![allow(dead_code)]

pub mod host;
