//! The keyspace: numbered databases of keys holding streams or strings, with key expiry
//! (for `SET ... EX`), a stable SCAN order, and the periodic IDMP sweep.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::clock::Clock;
use crate::config::Config;
use crate::stream::Stream;

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
    keys: HashMap<Vec<u8>, KeyEntry>,
    scan_order: BTreeMap<u64, Vec<u8>>,
    next_seq: u64,
    /// Streams that hold IDMP producers (swept for expired IIDs).
    pub idmp_keys: BTreeSet<Vec<u8>>,
    /// Keys with an expiry.
    expiring: usize,
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

    /// Remove the key if its expiry time has passed. Returns true if it was removed.
    pub fn expire_if_needed(&mut self, key: &[u8], now: i64) -> bool {
        if self.expiring == 0 {
            return false;
        }
        let expired =
            matches!(self.keys.get(key), Some(e) if e.expire_at.is_some_and(|t| t <= now));
        if expired {
            self.remove(key);
        }
        expired
    }

    /// Remove every expired key.
    pub fn expire_all(&mut self, now: i64) {
        if self.expiring == 0 {
            return;
        }
        let dead: Vec<Vec<u8>> = self
            .keys
            .iter()
            .filter(|(_, e)| e.expire_at.is_some_and(|t| t <= now))
            .map(|(k, _)| k.clone())
            .collect();
        for k in dead {
            self.remove(&k);
        }
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
            if e.expire_at.is_some() {
                self.expiring -= 1;
            }
            if expire_at.is_some() {
                self.expiring += 1;
            }
            e.value = value;
            e.expire_at = expire_at;
            if !matches!(e.value, Value::Stream(_)) {
                self.idmp_keys.remove(key);
            }
            return;
        }
        self.next_seq += 1;
        let seq = self.next_seq;
        if expire_at.is_some() {
            self.expiring += 1;
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
        if e.expire_at.is_some() {
            self.expiring -= 1;
        }
        self.idmp_keys.remove(key);
        Some(e)
    }

    /// Remove every key.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.scan_order.clear();
        self.idmp_keys.clear();
        self.expiring = 0;
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
    last_sweep_ms: i64,
    /// Latest command time seen.
    pub last_now: i64,
    /// Running estimate of used memory, for `maxmemory`.
    pub mem: crate::memory::Gauge,
}

/// How often (store clock ms) the IDMP sweep runs (redis-server's cron does it once a
/// second; we sweep lazily as well, so a shorter period costs little).
pub const SWEEP_INTERVAL_MS: i64 = 100;

impl Keyspace {
    /// An empty keyspace.
    pub fn new(config: Config) -> Self {
        Keyspace {
            dbs: (0..NUM_DBS).map(|_| Db::default()).collect(),
            config,
            clock: Clock::system(),
            last_sweep_ms: i64::MIN,
            last_now: i64::MIN,
            mem: crate::memory::Gauge::default(),
        }
    }

    /// The time snapshot for the next command.
    pub fn command_time(&mut self) -> i64 {
        let now = self.clock.now_ms();
        self.last_now = self.last_now.max(now);
        now
    }

    /// Drop expired IIDs of every tracked stream, at most every [`SWEEP_INTERVAL_MS`]
    /// (or always when `force`). Also removes expired keys when forced.
    pub fn sweep(&mut self, now: i64, force: bool) {
        if !force
            && now.saturating_sub(self.last_sweep_ms) < SWEEP_INTERVAL_MS
            && now >= self.last_sweep_ms
        {
            return;
        }
        self.last_sweep_ms = now;
        for db in &mut self.dbs {
            if force {
                db.expire_all(now);
            }
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
        }
        Ok(())
    }
}

/// Redis glob matching (`*`, `?`, `[...]` with ranges and `^`, `\\` escapes), as KEYS and
/// SCAN MATCH use it; same results as redis-server's `stringmatchlen`, including for
/// malformed patterns (an unterminated `[` class, a trailing `\\`).
pub fn glob_match(pattern: &[u8], string: &[u8]) -> bool {
    let mut skip_longer = false;
    glob_impl(pattern, string, &mut skip_longer, 0)
}

fn glob_impl(pat: &[u8], st: &[u8], skip_longer: &mut bool, nesting: u32) -> bool {
    if nesting > 1000 {
        return false;
    }
    // Indices into pat/st; `pat.get(i)` past the end reads as NUL like the C string.
    let at = |v: &[u8], i: usize| -> u8 { v.get(i).copied().unwrap_or(0) };
    let (mut p, mut s) = (0usize, 0usize);
    while p < pat.len() && s < st.len() {
        match pat[p] {
            b'*' => {
                while p < pat.len() && at(pat, p + 1) == b'*' {
                    p += 1;
                }
                if pat.len() - p == 1 {
                    return true;
                }
                while s < st.len() {
                    if glob_impl(&pat[p + 1..], &st[s..], skip_longer, nesting + 1) {
                        return true;
                    }
                    if *skip_longer {
                        return false;
                    }
                    s += 1;
                }
                *skip_longer = true;
                return false;
            }
            b'?' => s += 1,
            b'[' => {
                p += 1;
                let not = p < pat.len() && pat[p] == b'^';
                if not {
                    p += 1;
                }
                let mut matched = false;
                loop {
                    let left = pat.len() - p;
                    if left >= 2 && pat[p] == b'\\' {
                        p += 1;
                        if pat[p] == st[s] {
                            matched = true;
                        }
                    } else if left == 0 {
                        p -= 1;
                        break;
                    } else if pat[p] == b']' {
                        break;
                    } else if left >= 3 && pat[p + 1] == b'-' {
                        let (mut lo, mut hi) = (pat[p], pat[p + 2]);
                        if lo > hi {
                            std::mem::swap(&mut lo, &mut hi);
                        }
                        p += 2;
                        if st[s] >= lo && st[s] <= hi {
                            matched = true;
                        }
                    } else if pat[p] == st[s] {
                        matched = true;
                    }
                    p += 1;
                }
                if not {
                    matched = !matched;
                }
                if !matched {
                    return false;
                }
                s += 1;
            }
            c => {
                let mut c = c;
                if c == b'\\' && pat.len() - p >= 2 {
                    p += 1;
                    c = pat[p];
                }
                if c != st[s] {
                    return false;
                }
                s += 1;
            }
        }
        p += 1;
        if s == st.len() {
            while p < pat.len() && pat[p] == b'*' {
                p += 1;
            }
            break;
        }
    }
    p == pat.len() && s == st.len()
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
