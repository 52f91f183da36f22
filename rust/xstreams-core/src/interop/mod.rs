//! Columnar callers on top of the store: the Arrow paths of the Python binding, the Spark
//! dedup transformation and the replay reader.
//!
//! - [`batch`]: many XADDs under one lock from columns of rows, and entries out into flat
//!   Arrow-shaped buffers; [`batch::replay`] reads a persisted store without opening it.
//! - [`dedup`]: IDMP answers for whole producer histories without a store (Spark dedup).
//! - [`export`]: an exported RDB file read back and compared with the store before it is
//!   reported written.

pub mod batch;
pub mod dedup;
pub mod export;
