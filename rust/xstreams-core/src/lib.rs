//! xstreams-core: the semantics of Redis 8.8 Streams as a plain Rust library.
//!
//! Layers, bottom-up (a layer uses only the layers before it):
//! - [`error`]: every error line the engine can reply with, in one place.
//! - [`base`]: integer parsing, the clock, glob matching, the memory gauge, settings.
//! - [`structures`]: stream IDs, nodes, the radix tree, streams, consumer groups and
//!   their pending entries, idempotent producers, typed read results.
//! - [`keyspace`]: the databases of keys, WATCH, memory accounting, INFO, RDB encoding.
//! - [`command`]: the command table, parsing, execution, log records and replies.
//! - [`store`]: the thread-safe store (sessions, blocking reads, transactions) and its
//!   persistence (snapshot + command logs).
//! - [`interop`]: columnar callers (Arrow-shaped batches, replay of a persisted store,
//!   the Spark dedup kernel).
#![forbid(unsafe_code)]

pub mod base;
pub mod command;
pub mod error;
pub mod interop;
pub mod keyspace;
pub mod store;
pub mod structures;
#[cfg(test)]
mod test_rng;

pub use base::config::Config;
pub use command::reply::Reply;
pub use error::CmdError;
pub use keyspace::watch::Watch;
pub use store::Store;
pub use structures::id::StreamId;
