//! xstreams-core: the semantics of Redis 8.8 Streams as a plain Rust library.
//!
//! Layers, bottom-up:
//! - [`id`]: stream IDs and every textual form Redis accepts for them.
//! - [`num`]: Redis's integer parsers (`string2ll`, `string2ull`), reproduced exactly so
//!   that malformed input is rejected with the same error as redis-server.
//! - [`lpsize`]: the byte size Redis's listpack would need for a stream node, so nodes are
//!   split at exactly the same entries as in redis-server (XINFO's `radix-tree-keys`).
//! - [`node`]: a packed block of entries (our own compact encoding).
//! - [`rax`]: the radix tree indexing nodes by their first ID.
//! - [`stream`]: a stream: nodes, counters, iteration, deletion, trimming.
//! - [`group`]: consumer groups, the pending entries list with its time-ordered list and
//!   NACK zone, and consumers.
//! - [`pel`]: the work on a group's pending entries (delivery, claiming, XACK, XNACK,
//!   XPENDING) as methods of the group types, with typed outcomes.
//! - [`idmp`]: idempotent producers (XADD IDMP / IDMPAUTO).
//! - [`db`]: the keyspace (streams and a minimal string type).
//! - [`dedup`]: IDMP answers for whole producer histories without a store (Spark dedup).
//! - [`command`]: parsing, execution and replies of every command.
//! - [`entries`]: entries in flat Arrow-shaped buffers (a read sink).
//! - [`read`]: typed results of the reading commands (a sink per consumer: replies,
//!   Arrow-shaped batches) and the MAXCOUNT / MAXSIZE budget.
//! - [`info`]: INFO's sections, shared by the embedded store and the server.
//! - [`reply`]: reply values and their RESP2/RESP3 encodings.
//! - [`store`]: the thread-safe store with blocking reads.
//! - [`watch`]: WATCH's registry of watched keys and the [`watch::Watch`] handle.
//! - [`persist`]: durable stores (snapshot + command logs).
//! - [`limit`]: the typed XADD in a plain loop, the physical limit the benchmarks report.
#![forbid(unsafe_code)]

pub mod batch;
pub mod clock;
pub mod command;
pub mod config;
pub mod db;
pub mod dedup;
pub mod entries;
pub mod error;
pub mod export;
pub mod gauge;
pub mod glob;
pub mod group;
pub mod id;
pub mod idmp;
pub mod info;
pub mod limit;
pub mod lpsize;
pub mod memory;
pub mod node;
pub mod num;
pub mod pel;
pub mod persist;
pub mod rax;
pub mod rdb;
pub mod read;
pub mod reply;
pub mod store;
pub mod stream;
#[cfg(test)]
mod test_rng;
pub mod watch;

pub use config::Config;
pub use error::CmdError;
pub use id::StreamId;
pub use reply::Reply;
pub use store::Store;
pub use watch::Watch;
