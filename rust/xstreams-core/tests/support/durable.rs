//! A durable store for tests that compare typed calls with commands and replay the log:
//! small nodes (4 entries, so splits happen) and a pinned clock.

use xstreams_core::store::persist::Options;
use xstreams_core::{Config, Store};

/// The pinned store clock.
pub const NOW: i64 = 1_700_000_000_000;

/// Open (or reopen) the durable store in `dir`.
pub fn open(dir: &std::path::Path) -> Store {
    let cfg = Config {
        stream_node_max_entries: 4,
        ..Config::default()
    };
    let (s, _) = Store::open(dir, cfg, Options::default()).unwrap();
    s.set_clock(Some(NOW));
    s
}
