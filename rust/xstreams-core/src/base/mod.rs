//! The base layer: what every other layer builds on and which knows nothing of streams.
//!
//! - [`num`]: Redis's integer parsers (`string2ll`, `string2ull`), reproduced exactly so
//!   that malformed input is rejected with the same error as redis-server.
//! - [`clock`]: the store clock (real, or pinned by tests and by callers replaying event time).
//! - [`glob`]: Redis's glob matcher (KEYS, SCAN MATCH, CONFIG GET patterns).
//! - [`gauge`]: the running estimate of the memory used.
//! - [`config`]: store-wide settings, under the names redis-server uses.

pub mod clock;
pub mod config;
pub mod gauge;
pub mod glob;
pub mod num;
