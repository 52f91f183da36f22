//! The keyspace: numbered databases of keys holding streams or strings, with key expiry,
//! a stable SCAN order, and the periodic work of redis-server's cron (the IDMP sweep and
//! the active expiry of keys), run on the store clock (see [`Keyspace::cron`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::base::clock::Clock;
use crate::base::config::Config;
pub use crate::base::glob::glob_match;
use crate::keyspace::watch::WatchedKeys;
use crate::structures::stream::Stream;

/// Number of databases, as redis-server's default `databases 16`.
pub const NUM_DBS: usize = 16;

/// A value stored under a key.
#[derive(Clone, Debug)]
pub enum Value {
    /// Minimal string type (SET/GET), present so type errors are real.
    Str(Vec<u8>),
    /// A stream.
    Stream(Box<Stream>),
}

impl Value {
    /// The name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Stream(_) => "stream",
        }
    }
}

/// A key's value and metadata.
#[derive(Clone, Debug)]
pub struct KeyEntry {
    pub value: Value,
    /// Absolute expiry time in ms.
    pub expire_at: Option<i64>,
    /// Creation sequence number, the SCAN order.
    seq: u64,
}

/// One database.
#[derive(Clone, Debug, Default)]
pub struct Db {
    /// The keys. Every command looks its keys up here, so the map hashes with aHash
    /// rather than SipHash (several times faster on short keys), still seeded at random
    /// from the operating system: the server takes keys from the network (HashDoS).
    keys: HashMap<Vec<u8>, KeyEntry, ahash::RandomState>,
    scan_order: BTreeMap<u64, Vec<u8>>,
    next_seq: u64,
    /// Streams that hold IDMP producers (swept for expired IIDs).
    pub idmp_keys: BTreeSet<Vec<u8>>,
    /// Keys with an expiry, by expiry time.
    expires: BTreeSet<(i64, Vec<u8>)>,
    /// The keys WATCHed in this database (they stay with the database number when
    /// SWAPDB swaps contents, as in Redis).
    pub watched: WatchedKeys,
    /// Keys removed because their time to live ran out (lazily or by the active
    /// expiry, or stored with a time already past): INFO stats' `expired_keys` sums
    /// them. Not reset by FLUSHDB.
    pub expired: u64,
    /// Those of them the active expiry removed (`expired_keys_active`).
    pub expired_active: u64,
}

impl Db {
    /// Number of keys (including expired keys not yet removed; callers expire first).
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Is the database empty?
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Keys with an expiry, and their average time to live at `now` in ms (0 when none):
    /// INFO keyspace's `expires` and `avg_ttl`.
    pub fn expiry_stats(&self, now: i64) -> (usize, i64) {
        let n = self.expires.len();
        if n == 0 {
            return (0, 0);
        }
        let sum: i128 = self
            .expires
            .iter()
            .map(|(t, _)| (t - now).max(0) as i128)
            .sum();
        (n, (sum / n as i128) as i64)
    }

    /// Remove the key if its expiry time has passed. Returns true if it was removed.
    pub fn expire_if_needed(&mut self, key: &[u8], now: i64) -> bool {
        if self.expires.is_empty() {
            return false;
        }
        let expired =
            matches!(self.keys.get(key), Some(e) if e.expire_at.is_some_and(|t| t <= now));
        if expired {
            self.remove(key);
            self.touch_watched(key);
            self.expired += 1;
        }
        expired
    }

    /// `key` was modified as redis-server's `signalModifiedKey` counts it: its watchers
    /// see it (see [`crate::keyspace::watch`]).
    pub fn touch_watched(&mut self, key: &[u8]) {
        if !self.watched.is_empty() {
            let exists = self.keys.contains_key(key);
            self.watched.touch(key, exists);
        }
    }

    /// Is `key` stored and past its expiry time at `now`?
    pub fn is_expired(&self, key: &[u8], now: i64) -> bool {
        self.keys
            .get(key)
            .is_some_and(|e| e.expire_at.is_some_and(|t| t <= now))
    }

    /// Remove every key, as FLUSHDB / FLUSHALL: the watched keys stored here are touched.
    pub fn flush(&mut self) {
        if !self.watched.is_empty() {
            let keys = &self.keys;
            self.watched.touch_all(|k| keys.contains_key(k), None);
        }
        self.clear();
    }

    /// Remove every expired key; returns the keys removed, soonest expiry first.
    pub fn expire_all(&mut self, now: i64) -> Vec<Vec<u8>> {
        let mut dead = Vec::new();
        while let Some((t, _)) = self.expires.first() {
            if *t > now {
                break;
            }
            let (_, k) = self.expires.pop_first().expect("first exists");
            if let Some(e) = self.keys.get_mut(&k) {
                e.expire_at = None;
            }
            self.remove(&k);
            self.touch_watched(&k);
            self.expired += 1;
            dead.push(k);
        }
        dead
    }

    /// Number of keys with an expiry.
    pub fn expiring(&self) -> usize {
        self.expires.len()
    }

    /// Set or clear the expiry of an existing key; false if the key is missing.
    pub fn set_expire(&mut self, key: &[u8], at: Option<i64>) -> bool {
        let Some(e) = self.keys.get_mut(key) else {
            return false;
        };
        if let Some(old) = e.expire_at.take() {
            self.expires.remove(&(old, key.to_vec()));
        }
        if let Some(t) = at {
            e.expire_at = Some(t);
            self.expires.insert((t, key.to_vec()));
        }
        true
    }

    /// The entry under `key` (expire first).
    pub fn get(&self, key: &[u8]) -> Option<&KeyEntry> {
        self.keys.get(key)
    }

    /// Mutable entry under `key` (expire first).
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut KeyEntry> {
        self.keys.get_mut(key)
    }

    /// Insert or replace a value. Replacing keeps the key's SCAN position; `expire_at`
    /// replaces the expiry.
    pub fn set(&mut self, key: &[u8], value: Value, expire_at: Option<i64>) {
        if let Some(e) = self.keys.get_mut(key) {
            e.value = value;
            if !matches!(e.value, Value::Stream(_)) {
                self.idmp_keys.remove(key);
            }
            self.set_expire(key, expire_at);
            return;
        }
        self.next_seq += 1;
        let seq = self.next_seq;
        if let Some(t) = expire_at {
            self.expires.insert((t, key.to_vec()));
        }
        self.keys.insert(
            key.to_vec(),
            KeyEntry {
                value,
                expire_at,
                seq,
            },
        );
        self.scan_order.insert(seq, key.to_vec());
    }

    /// Remove a key; returns its entry.
    pub fn remove(&mut self, key: &[u8]) -> Option<KeyEntry> {
        let e = self.keys.remove(key)?;
        self.scan_order.remove(&e.seq);
        if let Some(t) = e.expire_at {
            self.expires.remove(&(t, key.to_vec()));
        }
        self.idmp_keys.remove(key);
        Some(e)
    }

    /// Remove every key.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.scan_order.clear();
        self.idmp_keys.clear();
        self.expires.clear();
    }

    /// Keys in SCAN order starting at cursor `from` (sequence number), up to `count`
    /// visited; returns the keys and the next cursor (0 when done).
    pub fn scan(&self, from: u64, count: usize) -> (Vec<&[u8]>, u64) {
        let mut out = Vec::new();
        let mut it = self.scan_order.range(from.max(1)..);
        let mut visited = 0;
        while visited < count {
            match it.next() {
                Some((_, k)) => {
                    out.push(k.as_slice());
                    visited += 1;
                }
                None => return (out, 0),
            }
        }
        match it.next() {
            Some((s, _)) => (out, *s),
            None => (out, 0),
        }
    }

    /// All keys (unordered).
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.keys.keys().map(|k| k.as_slice())
    }

    /// Streams in this database with their keys.
    pub fn streams(&self) -> impl Iterator<Item = (&[u8], &Stream)> + '_ {
        self.keys.iter().filter_map(|(k, e)| match &e.value {
            Value::Stream(s) => Some((k.as_slice(), s.as_ref())),
            _ => None,
        })
    }

    /// Every key with its entry in SCAN (creation) order.
    pub fn entries_in_order(&self) -> impl Iterator<Item = (&[u8], &KeyEntry)> + '_ {
        self.scan_order
            .values()
            .map(move |k| (k.as_slice(), &self.keys[k]))
    }
}

/// Every database plus the settings and clock of a store.
#[derive(Clone, Debug)]
pub struct Keyspace {
    pub dbs: Vec<Db>,
    pub config: Config,
    pub clock: Clock,
    /// Store-clock time of the next IDMP sweep / active expiry tick (None before the
    /// first command).
    next_idmp_sweep: Option<i64>,
    next_expire_cycle: Option<i64>,
    /// Latest command time seen.
    pub last_now: i64,
    /// Running estimate of used memory, for `maxmemory`.
    pub mem: crate::base::gauge::Gauge,
}

/// Period of the IDMP sweep: redis-server's `serverCron` calls
/// `handleExpiredIdmpEntries` under `run_with_period(1000)`.
pub const IDMP_SWEEP_PERIOD_MS: i64 = 1000;
/// Period of the active expiry of keys: redis-server's `serverCron` runs
/// `activeExpireCycle` (slow cycle) on every call, `hz` 10 times a second.
pub const EXPIRE_CYCLE_PERIOD_MS: i64 = 100;

/// The latest tick of a periodic job due at `now` (period `period`; `next` holds the next
/// tick), and the following one: `None` when nothing is due. Ticks fall on whole
/// multiples of the period of the store clock, so every store and every replay of a
/// store's log sweeps at the same instants whatever command came first (a server's cron
/// is phased by its start; any phase is one redis-server could have). A clock that moved
/// back by more than a period restarts at its latest tick.
pub(crate) fn due_tick(next: &mut Option<i64>, now: i64, period: i64) -> Option<i64> {
    if let Some(at) = *next {
        if now < at && now >= at.saturating_sub(period) {
            return None;
        }
    }
    let tick = now - now.rem_euclid(period);
    *next = Some(tick.saturating_add(period));
    Some(tick)
}

impl Keyspace {
    /// An empty keyspace.
    pub fn new(config: Config) -> Self {
        Keyspace {
            dbs: (0..NUM_DBS).map(|_| Db::default()).collect(),
            config,
            clock: Clock::system(),
            next_idmp_sweep: None,
            next_expire_cycle: None,
            last_now: i64::MIN,
            mem: crate::base::gauge::Gauge::default(),
        }
    }

    /// (watchers, watched keys) over every database: INFO's `watching_clients` and
    /// `total_watched_keys` (a watcher that saw a change no longer counts, as in Redis).
    pub fn watch_stats(&self) -> (usize, usize) {
        let mut ids = std::collections::HashSet::new();
        let keys = self
            .dbs
            .iter()
            .map(|d| d.watched.count_live(&mut ids))
            .sum();
        (ids.len(), keys)
    }

    /// SWAPDB: exchange the contents of databases `a` and `b` at time `now`. The watched
    /// keys stay with their database number; those stored in either database are
    /// touched first (Redis's `dbSwapDatabases`).
    pub fn swap_dbs(&mut self, a: usize, b: usize, now: i64) {
        if a == b {
            return;
        }
        for (x, y) in [(a, b), (b, a)] {
            if self.dbs[x].watched.is_empty() {
                continue;
            }
            let mut watched = std::mem::take(&mut self.dbs[x].watched);
            let (here, there) = (&self.dbs[x], &self.dbs[y]);
            let replaced = |k: &[u8]| (there.keys.contains_key(k), there.is_expired(k, now));
            watched.touch_all(|k| here.keys.contains_key(k), Some(&replaced));
            self.dbs[x].watched = watched;
        }
        let wa = std::mem::take(&mut self.dbs[a].watched);
        let wb = std::mem::take(&mut self.dbs[b].watched);
        self.dbs.swap(a, b);
        self.dbs[a].watched = wa;
        self.dbs[b].watched = wb;
    }

    /// The time snapshot for the next command.
    pub fn command_time(&mut self) -> i64 {
        let now = self.clock.now_ms();
        self.last_now = self.last_now.max(now);
        now
    }

    /// What redis-server's cron would have done by `now`, run before a command: the IDMP
    /// sweep once a second (at the latest tick due, as by then the cron had run with that
    /// time) and the active expiry of keys ten times a second. Both run on the store clock,
    /// with their phase set by the store's first command (a server's cron starts with it).
    /// Returns the keys expired, per database.
    pub fn cron(&mut self, now: i64) -> Vec<(usize, Vec<u8>)> {
        let expired = self.cron_keys(now);
        self.cron_idmp(now);
        expired
    }

    /// The key-expiry part of [`Keyspace::cron`] alone: the store runs it too while
    /// callers wait in a blocking read and no command comes (redis-server's cron runs
    /// whether or not clients send commands), so their keys expire on time.
    pub fn cron_keys(&mut self, now: i64) -> Vec<(usize, Vec<u8>)> {
        let mut expired = Vec::new();
        if let Some(tick) = due_tick(&mut self.next_expire_cycle, now, EXPIRE_CYCLE_PERIOD_MS) {
            for (i, db) in self.dbs.iter_mut().enumerate() {
                if db.expires.is_empty() {
                    continue;
                }
                let dead = db.expire_all(tick);
                db.expired_active += dead.len() as u64;
                expired.extend(dead.into_iter().map(|k| (i, k)));
            }
        }
        expired
    }

    /// The first expiry tick (a whole multiple of the cycle period) at which
    /// [`Keyspace::cron_keys`] removes a key, if any key has an expiry time.
    pub fn next_expiry_tick(&self) -> Option<i64> {
        let t = self
            .dbs
            .iter()
            .filter_map(|d| d.expires.iter().next().map(|(t, _)| *t))
            .min()?;
        let rem = t.rem_euclid(EXPIRE_CYCLE_PERIOD_MS);
        Some(if rem == 0 {
            t
        } else {
            t.saturating_add(EXPIRE_CYCLE_PERIOD_MS - rem)
        })
    }

    /// The IDMP part of [`Keyspace::cron`] alone: log replay runs it before each command,
    /// as the store ran it then (key expiry needs no replay: the log has its DELs).
    pub fn cron_idmp(&mut self, now: i64) {
        if let Some(tick) = due_tick(&mut self.next_idmp_sweep, now, IDMP_SWEEP_PERIOD_MS) {
            self.sweep_idmp(tick);
        }
    }

    /// Run the IDMP sweep and the expiry of keys now, whatever the cadence (`Store.sweep`).
    pub fn sweep_now(&mut self, now: i64) -> Vec<(usize, Vec<u8>)> {
        let mut expired = Vec::new();
        for (i, db) in self.dbs.iter_mut().enumerate() {
            expired.extend(db.expire_all(now).into_iter().map(|k| (i, k)));
        }
        self.sweep_idmp(now);
        expired
    }

    /// Kept for callers of the former API: `force` runs [`Keyspace::sweep_now`], else
    /// [`Keyspace::cron`].
    pub fn sweep(&mut self, now: i64, force: bool) {
        if force {
            self.sweep_now(now);
        } else {
            self.cron(now);
        }
    }

    /// `handleExpiredIdmpEntries`: drop, from the head of each producer of every tracked
    /// stream, the IIDs whose stream ID's milliseconds are at most `now - duration`.
    fn sweep_idmp(&mut self, now: i64) {
        for db in &mut self.dbs {
            if db.idmp_keys.is_empty() {
                continue;
            }
            let keys: Vec<Vec<u8>> = db.idmp_keys.iter().cloned().collect();
            for k in keys {
                let keep = match db.keys.get_mut(&k) {
                    Some(KeyEntry {
                        value: Value::Stream(s),
                        ..
                    }) => {
                        s.idmp.expire(now);
                        s.idmp.is_tracked()
                    }
                    _ => false,
                };
                if !keep {
                    db.idmp_keys.remove(&k);
                }
            }
        }
    }

    /// Validate every stream.
    pub fn validate(&self) -> Result<(), String> {
        for (i, db) in self.dbs.iter().enumerate() {
            for (k, s) in db.streams() {
                s.validate()
                    .map_err(|e| format!("db {i} key {:?}: {e}", String::from_utf8_lossy(k)))?;
            }
            if db.scan_order.len() != db.keys.len() {
                return Err(format!("db {i}: scan index out of sync"));
            }
            let with_ttl = db.keys.values().filter(|e| e.expire_at.is_some()).count();
            if with_ttl != db.expires.len()
                || db
                    .expires
                    .iter()
                    .any(|(t, k)| db.keys.get(k).and_then(|e| e.expire_at) != Some(*t))
            {
                return Err(format!("db {i}: expiry index out of sync"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob() {
        assert!(glob_match(b"*", b"abc"));
        assert!(glob_match(b"a*c", b"abbbc"));
        assert!(!glob_match(b"a*c", b"abbb"));
        assert!(glob_match(b"h?llo", b"hello"));
        assert!(glob_match(b"h[ae]llo", b"hallo"));
        assert!(!glob_match(b"h[^e]llo", b"hello"));
        assert!(glob_match(b"h[a-b]llo", b"hbllo"));
        assert!(glob_match(b"h\\*llo", b"h*llo"));
        assert!(!glob_match(b"h\\*llo", b"hello"));
        assert!(glob_match(b"s*", b"s"));
        assert!(!glob_match(b"", b"a"));
        assert!(glob_match(b"", b""));
    }

    #[test]
    fn scan_order_is_stable() {
        let mut db = Db::default();
        for k in [b"a", b"b", b"c", b"d"] {
            db.set(k, Value::Str(vec![]), None);
        }
        let (first, cur) = db.scan(0, 2);
        assert_eq!(first, vec![b"a".as_slice(), b"b"]);
        db.remove(b"c");
        db.set(b"e", Value::Str(vec![]), None);
        let (rest, cur) = db.scan(cur, 10);
        assert_eq!(rest, vec![b"d".as_slice(), b"e"]);
        assert_eq!(cur, 0);
    }
}
