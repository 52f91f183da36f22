//! The data structures of a stream, with no keyspace and no commands.
//!
//! - [`id`]: stream IDs and every textual form Redis accepts for them.
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
//! - [`read`]: typed results of the reading commands (a sink per consumer: replies,
//!   Arrow-shaped batches) and the MAXCOUNT / MAXSIZE budget.
//! - [`entries`]: entries in flat Arrow-shaped buffers (a read sink).

pub mod entries;
pub mod group;
pub mod id;
pub mod idmp;
pub mod lpsize;
pub mod node;
pub mod pel;
pub mod rax;
pub mod read;
pub mod stream;
