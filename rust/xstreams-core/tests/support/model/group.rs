//! A consumer group: its PEL as a map plus the time-ordered list, with the NACK zone's
//! tail kept as a position (`pel_nack_tail`), as the C code does.

use super::*;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MNack {
    pub owner: Option<Vec<u8>>,
    pub count: u64,
    pub time: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MConsumer {
    pub seen: i64,
    pub active: i64,
    pub pel: BTreeSet<Id>,
}

#[derive(Clone, Debug)]
pub struct MGroup {
    pub last_id: Id,
    pub entries_read: i64,
    pub pel: BTreeMap<Id, MNack>,
    /// The time-ordered list, head first.
    pub time: Vec<Id>,
    /// `pel_nack_tail`: the last element of the NACK zone, if any.
    pub nack_tail: Option<Id>,
    pub consumers: BTreeMap<Vec<u8>, MConsumer>,
}

impl MGroup {
    pub fn new(last_id: Id, entries_read: i64) -> Self {
        MGroup {
            last_id,
            entries_read,
            pel: BTreeMap::new(),
            time: Vec::new(),
            nack_tail: None,
            consumers: BTreeMap::new(),
        }
    }

    pub(super) fn pos(&self, id: Id) -> usize {
        self.time
            .iter()
            .position(|&x| x == id)
            .expect("id in time list")
    }

    /// `pelListUnlink`.
    pub fn unlink(&mut self, id: Id) {
        let p = self.pos(id);
        if self.nack_tail == Some(id) {
            self.nack_tail = if p == 0 { None } else { Some(self.time[p - 1]) };
        }
        self.time.remove(p);
    }

    /// `pelListInsertAfter`.
    pub(super) fn insert_after(&mut self, after: Option<Id>, id: Id) {
        match after {
            None => self.time.insert(0, id),
            Some(a) => {
                let p = self.pos(a);
                self.time.insert(p + 1, id);
            }
        }
    }

    /// `pelListInsertSorted`.
    pub(super) fn insert_sorted(&mut self, id: Id) {
        let t = self.pel[&id].time;
        if self.time.is_empty() || t >= self.pel[self.time.last().unwrap()].time {
            self.time.push(id);
            return;
        }
        let mut cur: Option<usize> = Some(self.time.len() - 1);
        while let Some(i) = cur {
            if Some(self.time[i]) == self.nack_tail {
                break;
            }
            if self.pel[&self.time[i]].time > t {
                cur = i.checked_sub(1);
            } else {
                break;
            }
        }
        let at = cur.map(|i| i + 1).unwrap_or(0);
        self.time.insert(at, id);
    }

    /// `pelListInsertNacked`.
    pub(super) fn insert_nacked(&mut self, id: Id) {
        self.pel.get_mut(&id).unwrap().time = 0;
        self.insert_after(self.nack_tail, id);
        self.nack_tail = Some(id);
    }

    /// `pelListUpdate`.
    pub fn update(&mut self, id: Id, t: i64) {
        self.unlink(id);
        self.pel.get_mut(&id).unwrap().time = t;
        self.insert_sorted(id);
    }

    /// `pelListNackedCount`.
    pub fn nacked_count(&self) -> u64 {
        match self.nack_tail {
            None => 0,
            Some(t) => (self.pos(t) + 1) as u64,
        }
    }

    /// Drop a pending entry from every structure (XACK and friends).
    pub fn remove(&mut self, id: Id) -> bool {
        let Some(n) = self.pel.get(&id).cloned() else {
            return false;
        };
        self.unlink(id);
        self.pel.remove(&id);
        if let Some(o) = n.owner {
            self.consumers.get_mut(&o).unwrap().pel.remove(&id);
        }
        true
    }

    /// Give the entry to `c` (removing it from the previous owner's PEL).
    pub(super) fn transfer(&mut self, id: Id, c: &[u8]) {
        let old = self.pel[&id].owner.clone();
        if old.as_deref() != Some(c) {
            if let Some(o) = old {
                self.consumers.get_mut(&o).unwrap().pel.remove(&id);
            }
            self.pel.get_mut(&id).unwrap().owner = Some(c.to_vec());
            self.consumers.get_mut(c).unwrap().pel.insert(id);
        }
    }

    pub(super) fn ensure_consumer(&mut self, c: &[u8], now: i64) -> bool {
        if self.consumers.contains_key(c) {
            return false;
        }
        self.consumers.insert(
            c.to_vec(),
            MConsumer {
                seen: now,
                active: -1,
                pel: BTreeSet::new(),
            },
        );
        true
    }

    pub(super) fn incr_count(&mut self, id: Id) {
        let n = self.pel.get_mut(&id).unwrap();
        if n.count != LLONG_MAX {
            n.count += 1;
        }
    }
}
