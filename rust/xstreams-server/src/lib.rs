//! `xstreams serve`: a RESP2/RESP3 server with redis-server's protocol behaviour, running
//! the same command layer as the embedded store (`xstreams_core::Store`).
//!
//! - [`resp`]: the incremental request parser (redis-server's limits and protocol errors).
//! - [`server`]: configuration, listeners, accept loop, shutdown ([`start`]).
//! - `conn`: one connection: dispatch in order, blocking reads, MULTI/EXEC.
//! - `admin`, `info`: connection-level commands (HELLO, AUTH, CLIENT, CONFIG, INFO, ...).
//! - [`meta`]: COMMAND INFO / DOCS replies rendered from the core's command table.
#![forbid(unsafe_code)]

mod admin;
pub mod cli;
mod conn;
mod info;
pub mod meta;
mod out;
pub mod resp;
pub mod server;

pub use server::{start, DebugAccess, ServerConfig, ServerError, ServerHandle};

/// The Redis version the server reports (the semantics it implements).
pub const REDIS_VERSION: &str = "8.8.0";
