//! WATCH: optimistic locking for atomic batches (MULTI/EXEC), with redis-server 8.8's
//! rules (`multi.c`).
//!
//! Each database keeps a registry of its watched keys ([`WatchedKeys`], Redis's
//! `db->watched_keys`): per key, the watchers in the order they watched it, each with its
//! own "already expired when watched" flag. A watcher is one [`Watch`] handle (for the
//! RESP server, one connection's watched keys); its `dirty` flag (Redis's
//! `CLIENT_DIRTY_CAS`) is shared between the handle and its registrations.
//!
//! What dirties a watcher, exactly as in Redis:
//! - a touch of one of its keys ([`crate::command::Ctx::touch`], Redis's
//!   `keyModified(..., signal=1)`): every write a command's `signalModifiedKey` rules
//!   name, and every deletion of an expired key (lazy, active, or by a write). A key that
//!   was already expired when watched is not dirtied by its own deletion (the flag is
//!   cleared instead: a deleted key is not "expired");
//! - FLUSHDB / FLUSHALL / SWAPDB, for the watched keys that exist in a database emptied
//!   or replaced ([`WatchedKeys::touch_all`], Redis's `touchAllWatchedKeysInDb`);
//! - at EXEC, a watched key that expired since it was watched but is still stored
//!   (Redis's `isWatchedKeyExpired`).
//!
//! Once dirty a watcher stays dirty: a later WATCH adds nothing, and the store answers
//! "aborted" to an atomic batch run with it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

/// One watcher's registration of a key.
#[derive(Debug)]
struct Watcher {
    id: u64,
    dirty: Arc<AtomicBool>,
    /// The key was already expired (but still stored) when watched.
    expired: bool,
}

impl Watcher {
    fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::Relaxed)
    }

    fn set_dirty(&self) {
        self.dirty.store(true, Ordering::Relaxed);
    }
}

/// For SWAPDB: whether a key is stored in the other database, and expired there.
pub type InOther<'a> = &'a dyn Fn(&[u8]) -> (bool, bool);

/// The watched keys of one database: per key, its watchers in watch order. Cloning a
/// database (snapshots) leaves the registry behind: watchers belong to the live store.
#[derive(Debug, Default)]
pub struct WatchedKeys {
    keys: HashMap<Vec<u8>, Vec<Watcher>>,
}

impl Clone for WatchedKeys {
    fn clone(&self) -> Self {
        WatchedKeys::default()
    }
}

impl WatchedKeys {
    /// Is no key watched?
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys with at least one watcher not yet dirty; adds those watchers to `ids`
    /// (INFO's `total_watched_keys` and `watching_clients`: Redis drops a dirty client's
    /// keys at once).
    pub fn count_live(&self, ids: &mut std::collections::HashSet<u64>) -> usize {
        let mut keys = 0;
        for list in self.keys.values() {
            let mut live = list.iter().filter(|w| !w.is_dirty()).peekable();
            if live.peek().is_some() {
                keys += 1;
            }
            ids.extend(live.map(|w| w.id));
        }
        keys
    }

    /// Register watcher `id` for `key` unless it already watches it (Redis keeps the
    /// first registration, with its expired flag).
    pub fn add(&mut self, key: &[u8], id: u64, dirty: &Arc<AtomicBool>, expired: bool) -> bool {
        let list = self.keys.entry(key.to_vec()).or_default();
        if list.iter().any(|w| w.id == id) {
            return false;
        }
        list.push(Watcher {
            id,
            dirty: dirty.clone(),
            expired,
        });
        true
    }

    /// Remove watcher `id`'s registration of `key`.
    pub fn remove(&mut self, key: &[u8], id: u64) {
        if let Some(list) = self.keys.get_mut(key) {
            list.retain(|w| w.id != id);
            if list.is_empty() {
                self.keys.remove(key);
            }
        }
    }

    /// Was `key` already expired when watcher `id` watched it (and not deleted since)?
    pub fn watched_expired(&self, key: &[u8], id: u64) -> bool {
        self.keys
            .get(key)
            .and_then(|l| l.iter().find(|w| w.id == id))
            .is_some_and(|w| w.expired)
    }

    /// `key` was modified (Redis's `touchWatchedKey`); `exists` says whether it is stored
    /// now. Its watchers become dirty, except one that watched it already expired: if the
    /// key is gone that one's flag is cleared (no logical change), and if it is still
    /// stored Redis stops there, leaving the watchers after it untouched.
    pub fn touch(&mut self, key: &[u8], exists: bool) {
        let Some(list) = self.keys.get_mut(key) else {
            return;
        };
        // A dirty watcher has left every list in Redis (`unwatchAllKeys`).
        for w in list.iter_mut().filter(|w| !w.is_dirty()) {
            if w.expired {
                if !exists {
                    w.expired = false;
                    continue;
                }
                break;
            }
            w.set_dirty();
        }
    }

    /// The database is being emptied (FLUSHDB, FLUSHALL) or swapped with another
    /// (SWAPDB: `replaced` tells whether a key is stored in the other database, and
    /// whether it is expired there). Redis's `touchAllWatchedKeysInDb`: only the watched
    /// keys stored in either database count.
    pub fn touch_all(
        &mut self,
        exists_here: impl Fn(&[u8]) -> bool,
        replaced: Option<InOther<'_>>,
    ) {
        for (key, list) in self.keys.iter_mut() {
            let here = exists_here(key);
            let (there, there_expired) = replaced.map_or((false, false), |f| f(key));
            if !here && !there {
                continue;
            }
            for w in list.iter_mut().filter(|w| !w.is_dirty()) {
                if w.expired {
                    if replaced.is_none() || !there {
                        w.expired = false;
                        continue;
                    } else if there_expired {
                        continue;
                    }
                } else if !here && there_expired {
                    w.expired = true;
                    continue;
                }
                w.set_dirty();
            }
        }
    }
}

/// The keys a caller watches, until dropped (see [`crate::Store::watch`]). An atomic
/// batch run with it is aborted — runs nothing and answers `None`, EXEC's nil reply —
/// when one of its keys was touched since it was watched.
#[derive(Debug)]
pub struct Watch {
    pub(crate) id: u64,
    /// The store it belongs to (the address of its shared state).
    pub(crate) store: usize,
    pub(crate) dirty: Arc<AtomicBool>,
    /// The watched keys, with their database, in watch order.
    pub(crate) keys: Vec<(usize, Vec<u8>)>,
    /// The store's state, to unregister on drop.
    pub(crate) release: Option<Weak<dyn Release>>,
}

/// How a [`Watch`] leaves its store's registries when dropped.
pub(crate) trait Release: Send + Sync + std::fmt::Debug {
    fn release(&self, id: u64, keys: &[(usize, Vec<u8>)]);
}

impl Watch {
    /// The watched keys with their database, in watch order.
    pub fn keys(&self) -> &[(usize, Vec<u8>)] {
        &self.keys
    }

    /// Was a watched key touched since it was watched (an expiry not yet noticed is
    /// only seen by the store at the batch)?
    pub fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::Relaxed)
    }

    /// The flag [`Watch::is_dirty`] reads, shared (e.g. so CLIENT LIST can show another
    /// connection's state without its `Watch`).
    pub fn dirty_flag(&self) -> Arc<AtomicBool> {
        self.dirty.clone()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if self.keys.is_empty() {
            return;
        }
        if let Some(r) = self.release.as_ref().and_then(|w| w.upgrade()) {
            r.release(self.id, &self.keys);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag() -> Arc<AtomicBool> {
        Arc::new(AtomicBool::new(false))
    }

    #[test]
    fn touch_dirties_every_watcher_of_the_key() {
        let mut w = WatchedKeys::default();
        let (a, b) = (flag(), flag());
        assert!(w.add(b"k", 1, &a, false));
        assert!(!w.add(b"k", 1, &a, true));
        w.add(b"k", 2, &b, false);
        w.touch(b"other", true);
        assert!(!a.load(Ordering::Relaxed));
        w.touch(b"k", true);
        assert!(a.load(Ordering::Relaxed) && b.load(Ordering::Relaxed));
    }

    #[test]
    fn deleting_a_key_watched_expired_is_no_change_once() {
        let mut w = WatchedKeys::default();
        let a = flag();
        w.add(b"k", 1, &a, true);
        w.touch(b"k", false);
        assert!(!a.load(Ordering::Relaxed));
        assert!(!w.watched_expired(b"k", 1));
        // Created again: a change.
        w.touch(b"k", true);
        assert!(a.load(Ordering::Relaxed));
    }

    #[test]
    fn a_key_watched_expired_and_still_stored_stops_the_touch() {
        let mut w = WatchedKeys::default();
        let (a, b) = (flag(), flag());
        w.add(b"k", 1, &a, true);
        w.add(b"k", 2, &b, false);
        w.touch(b"k", true);
        assert!(!a.load(Ordering::Relaxed) && !b.load(Ordering::Relaxed));
        w.remove(b"k", 1);
        w.touch(b"k", true);
        assert!(b.load(Ordering::Relaxed));
        w.remove(b"k", 2);
        assert!(w.is_empty());
    }

    #[test]
    fn flush_counts_only_stored_keys() {
        let mut w = WatchedKeys::default();
        let (a, b) = (flag(), flag());
        w.add(b"here", 1, &a, false);
        w.add(b"missing", 2, &b, false);
        w.touch_all(|k| k == b"here", None);
        assert!(a.load(Ordering::Relaxed));
        assert!(!b.load(Ordering::Relaxed));
    }
}
