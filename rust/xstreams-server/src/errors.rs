//! The server's own error texts (connection-level: authentication, transactions,
//! connections, limits, the protocol). Like every error text of the project they live in
//! the core's `error.rs` (`xstreams_core::error::server`); this module names them for the
//! server.

pub use xstreams_core::error::server::*;
