//! `xstreams serve`: a RESP2/RESP3 server with redis-server's protocol behaviour, running
//! the same command layer as the embedded store (`xstreams_core::Store`).
//!
//!
//! Modules, bottom-up (each uses only the ones above it; none uses one below):
//! - [`config`]: what the server is started with, and what CONFIG SET may change.
//! - `errors`: the server's own error texts (connection-level; engine errors are the
//!   core's `error` module).
//! - `tls`: the TLS acceptor (rustls) from the `tls-*` settings.
//! - [`resp`], `out`: the request parser and the reply writer.
//! - `commit`: group commit for `appendfsync always` (replies wait for the fsync).
//! - `state`: state shared by connections (clients, statistics, blocking keys).
//! - `session`: one connection's state.
//! - `admin`: connection-level commands by topic (auth, client, config, info, command
//!   docs, server).
//! - `conn`: one connection: dispatch in order, blocking reads, MULTI/EXEC, socket I/O.
//! - [`server`]: listeners, the accept loop, shutdown ([`start`]).
//! - [`conffile`]: configuration files in redis.conf's format.
//! - [`cli`]: `xstreams serve` options (and the configuration file they may name).
#![forbid(unsafe_code)]

mod admin;
pub mod cli;
mod commit;
pub mod conffile;
pub mod config;
mod conn;
mod errors;
mod out;
pub mod resp;
pub mod server;
mod session;
mod state;
mod tls;

pub use config::{DebugAccess, ServerConfig, ServerError, TlsAuthClients, TlsConfig};
pub use server::{start, ServerHandle};

/// The Redis version the server reports (the semantics it implements).
pub use xstreams_core::keyspace::info::REDIS_VERSION;
