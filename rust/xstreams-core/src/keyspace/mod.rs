//! The keyspace: databases of keys, what watches them, what they weigh and how a key's
//! value is serialized.
//!
//! - [`db`]: the databases (streams and a minimal string type), expiry and the cron.
//! - [`watch`]: WATCH's registry of watched keys and the [`watch::Watch`] handle.
//! - [`memory`]: MEMORY USAGE and the used-memory figure.
//! - [`info`]: INFO's sections, shared by the embedded store and the server.
//! - [`rdb`]: Redis's RDB encoding of a stream (DUMP / RESTORE payloads and RDB files).

pub mod db;
pub mod info;
pub mod memory;
pub mod rdb;
pub mod watch;
