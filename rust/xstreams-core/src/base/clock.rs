//! The store clock. Every command reads the time once (Redis's `commandTimeSnapshot`);
//! tests pin the clock so that `*` IDs, idle times and IDMP expiry are deterministic.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, from the system clock.
pub fn system_now_ms() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

/// A clock that is either the system clock or pinned to a value set by the user.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    pinned: Option<i64>,
}

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Clock { pinned: None }
    }

    /// A clock fixed at `ms` until changed.
    pub fn pinned(ms: i64) -> Self {
        Clock { pinned: Some(ms) }
    }

    /// Current time in milliseconds.
    pub fn now_ms(&self) -> i64 {
        self.pinned.unwrap_or_else(system_now_ms)
    }

    /// Pin the clock (`Some`) or return to the system clock (`None`).
    pub fn set(&mut self, ms: Option<i64>) {
        self.pinned = ms;
    }

    /// Move a pinned clock forward by `delta` milliseconds (pins it first if needed).
    pub fn advance(&mut self, delta: i64) {
        let now = self.now_ms();
        self.pinned = Some(now.saturating_add(delta));
    }

    /// Is the clock pinned?
    pub fn is_pinned(&self) -> bool {
        self.pinned.is_some()
    }

    /// The time the clock is pinned at, if it is.
    pub fn pinned_at(&self) -> Option<i64> {
        self.pinned
    }
}
