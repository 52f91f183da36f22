//! What the simulated-disk tests (`tests/`) share: store options on a [`SimDisk`] and a
//! fresh scratch directory.

use std::path::PathBuf;
use std::sync::Arc;

use xstreams_core::store::persist::disk::sim::SimDisk;
use xstreams_core::store::persist::{Disk, Fsync, Options};

/// Persistence options with `fsync`, on the simulated `disk` (`None`: the real one).
pub fn options(fsync: Fsync, disk: Option<Arc<SimDisk>>) -> Options {
    Options {
        fsync,
        disk: Disk { sim: disk },
        ..Options::default()
    }
}

/// `xs-<name>-<pid>` in the system's temporary directory, removed if a previous run
/// left it.
pub fn fresh_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}
