//! Columnar callers on top of the store: the Arrow paths of the Python binding, the Spark
//! dedup transformation and the replay reader.
//!
//! - [`batch`]: many XADDs under one lock from columns of rows, and entries out into flat
//!   Arrow-shaped buffers; [`batch::replay`] reads a persisted store without opening it.
//! - [`dedup`]: the IDMP dedup of rows without a store (`xstreams.Deduper`, the Spark
//!   dedup): grouping, ordering, the answers, each producer's state between calls.
//! - [`export`]: an exported RDB file read back and checked against the store it came
//!   from (`xstreams export`).

pub mod batch;
pub mod dedup;
pub mod export;
