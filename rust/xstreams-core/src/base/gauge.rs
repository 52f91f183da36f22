//! A running estimate of the memory used, kept by the keyspace: the last exact walk plus
//! the argument bytes written since (see [`crate::keyspace::memory`] for the walk and the policy).

/// A running estimate of `used_memory` (see [`crate::keyspace::memory`]).
#[derive(Clone, Debug, Default)]
pub struct Gauge {
    /// `used_memory` at the last walk (`None`: never walked).
    walked: Option<u64>,
    /// Argument bytes of writes since the last walk.
    grown: u64,
    /// Anything written since the last walk (a delete too)?
    changed: bool,
}

impl Gauge {
    /// Is the gauge following writes (it has walked once)?
    pub fn tracking(&self) -> bool {
        self.walked.is_some()
    }

    /// Note a write command whose arguments add up to `arg_bytes`.
    pub fn note_write(&mut self, arg_bytes: u64) {
        self.grown += arg_bytes;
        self.changed = true;
    }

    /// Forget the last walk (everything may have changed: FLUSHALL, loading).
    pub fn invalidate(&mut self) {
        self.walked = None;
    }

    fn walk(&mut self, used: impl FnOnce() -> u64) -> u64 {
        let used = used();
        self.walked = Some(used);
        self.grown = 0;
        self.changed = false;
        used
    }

    /// Is `used_memory` above `limit`? Walks (calls `used`, the exact figure) when the
    /// estimate is stale or says yes.
    pub fn over(&mut self, limit: u64, used: impl FnOnce() -> u64) -> bool {
        let Some(walked) = self.walked else {
            return self.walk(used) > limit;
        };
        let estimate = walked + self.grown;
        let stale = self.grown >= (limit / 64).max(64 * 1024);
        if self.changed && (stale || estimate > limit) {
            return self.walk(used) > limit;
        }
        estimate > limit
    }
}
