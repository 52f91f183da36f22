//! The model's group commands: XACK, XACKDEL, XNACK, XGROUP, XREADGROUP, and the
//! delivery they share (history reads, serving a group).

use super::*;

impl Model {
    pub fn xack(&mut self, key: &[u8], group: &[u8], ids: &[Id]) -> Reply {
        let Some(g) = self.keys.get_mut(key).and_then(|s| s.groups.get_mut(group)) else {
            return Reply::Int(0);
        };
        let mut n = 0;
        for &id in ids {
            if g.remove(id) {
                n += 1;
            }
        }
        Reply::Int(n)
    }

    pub fn xackdel(&mut self, key: &[u8], group: &[u8], policy: Policy, ids: &[Id]) -> Reply {
        let ok = self
            .keys
            .get(key)
            .is_some_and(|s| s.groups.contains_key(group));
        if !ok {
            return Reply::Array(vec![Reply::Int(-1); ids.len()]);
        }
        let s = self.keys.get_mut(key).unwrap();
        let (mut deleted, mut first) = (0u64, false);
        let mut out = Vec::new();
        for &id in ids {
            let mut res = -1;
            if s.groups.get_mut(group).unwrap().remove(id) {
                let mut can = true;
                match policy {
                    Policy::Acked => can = !s.referenced(id),
                    Policy::DelRef => s.cleanup_refs(id),
                    Policy::KeepRef => {}
                }
                if can {
                    s.delete_tracked(id, &mut deleted, &mut first);
                }
                res = if can { 1 } else { 2 };
            }
            out.push(Reply::Int(res));
        }
        s.fix_first(deleted, first);
        Reply::Array(out)
    }

    pub fn xnack(
        &mut self,
        key: &[u8],
        group: &[u8],
        mode: NackMode,
        ids: &[Id],
        retry: Option<u64>,
        force: bool,
    ) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return nogroup();
        };
        if !s.groups.contains_key(group) {
            return nogroup();
        }
        let set_count = |c: u64| -> u64 {
            if let Some(r) = retry {
                return r;
            }
            match mode {
                NackMode::Silent => c.saturating_sub(1),
                NackMode::Fail => c,
                NackMode::Fatal => LLONG_MAX,
            }
        };
        let mut nacked = 0;
        for &id in ids {
            let exists = s.exists(id);
            let g = s.groups.get_mut(group).unwrap();
            if let Some(n) = g.pel.get(&id).cloned() {
                let nc = set_count(n.count);
                g.pel.get_mut(&id).unwrap().count = nc;
                if let Some(o) = n.owner {
                    g.consumers.get_mut(&o).unwrap().pel.remove(&id);
                    g.pel.get_mut(&id).unwrap().owner = None;
                }
                g.unlink(id);
                g.insert_nacked(id);
            } else if force {
                if !exists {
                    continue;
                }
                g.pel.insert(
                    id,
                    MNack {
                        owner: None,
                        count: set_count(0),
                        time: now_placeholder(),
                    },
                );
                g.insert_nacked(id);
            } else {
                continue;
            }
            nacked += 1;
        }
        Reply::Int(nacked)
    }

    pub fn xgroup_create(
        &mut self,
        now: i64,
        key: &[u8],
        group: &[u8],
        id: GroupId,
        mkstream: bool,
        entries_read: i64,
    ) -> Reply {
        let _ = now;
        if !self.keys.contains_key(key) && !mkstream {
            return err("ERR The XGROUP subcommand requires the key to exist");
        }
        let id = match id {
            GroupId::Dollar => self.keys.get(key).map(|s| s.last_id).unwrap_or(MIN),
            GroupId::Id(i) => i,
            GroupId::Minus | GroupId::Plus => return err("ERR Invalid stream ID"),
        };
        let cfg = self.cfg;
        let s = self
            .keys
            .entry(key.to_vec())
            .or_insert_with(|| MStream::new(&cfg));
        let mut er = entries_read;
        if er != -1 && er as u64 > s.entries_added {
            er = s.entries_added as i64;
        }
        if s.groups.contains_key(group) {
            return err("BUSYGROUP");
        }
        s.groups.insert(group.to_vec(), MGroup::new(id, er));
        Reply::ok()
    }

    pub fn xgroup_setid(&mut self, key: &[u8], group: &[u8], id: GroupId, er: i64) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR The XGROUP subcommand requires the key to exist");
        };
        if !s.groups.contains_key(group) {
            return nogroup();
        }
        let id = match id {
            GroupId::Dollar => s.last_id,
            GroupId::Id(i) => i,
            GroupId::Minus => MIN,
            GroupId::Plus => MAX,
        };
        let mut er = er;
        if er != -1 && er as u64 > s.entries_added {
            er = s.entries_added as i64;
        }
        let g = s.groups.get_mut(group).unwrap();
        g.last_id = id;
        g.entries_read = er;
        Reply::ok()
    }

    pub fn xgroup_destroy(&mut self, key: &[u8], group: &[u8]) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR The XGROUP subcommand requires the key to exist");
        };
        Reply::Int(i64::from(s.groups.remove(group).is_some()))
    }

    pub fn xgroup_createconsumer(&mut self, now: i64, key: &[u8], group: &[u8], c: &[u8]) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR The XGROUP subcommand requires the key to exist");
        };
        let Some(g) = s.groups.get_mut(group) else {
            return nogroup();
        };
        Reply::Int(i64::from(g.ensure_consumer(c, now)))
    }

    pub fn xgroup_delconsumer(&mut self, key: &[u8], group: &[u8], c: &[u8]) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR The XGROUP subcommand requires the key to exist");
        };
        let Some(g) = s.groups.get_mut(group) else {
            return nogroup();
        };
        let Some(cons) = g.consumers.remove(c) else {
            return Reply::Int(0);
        };
        for id in &cons.pel {
            g.unlink(*id);
            g.pel.remove(id);
        }
        Reply::Int(cons.pel.len() as i64)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn xreadgroup(
        &mut self,
        now: i64,
        group: &[u8],
        consumer: &[u8],
        count: u64,
        claim: Option<i64>,
        noack: bool,
        streams: &[(Vec<u8>, ReadId)],
    ) -> Reply {
        let mut ids = Vec::new();
        for (key, rid_) in streams {
            let ok = self
                .keys
                .get(key)
                .is_some_and(|s| s.groups.contains_key(group));
            if !ok {
                return nogroup();
            }
            ids.push(match rid_ {
                ReadId::Gt => MAX,
                ReadId::Id(i) => *i,
                _ => return err("ERR"),
            });
        }
        let mut min_idle: i64 = claim.unwrap_or(-1);
        let mut served = Vec::new();
        for (i, (key, _)) in streams.iter().enumerate() {
            let s = self.keys.get_mut(key).unwrap();
            let mut gt = ids[i];
            let mut serve_claimed = false;
            let mut serve_sync = false;
            let mut serve_history = false;
            {
                let g = &s.groups[group];
                if min_idle != -1 {
                    for id in &g.time {
                        if !s.exists(*id) {
                            continue;
                        }
                        let idle = now.wrapping_sub(g.pel[id].time) as u64;
                        if idle >= min_idle as u64 {
                            serve_claimed = true;
                        }
                        break;
                    }
                }
                if gt != MAX {
                    serve_sync = true;
                    serve_history = true;
                } else if s.length > 0 {
                    let maxid = s.last_live().unwrap();
                    if maxid > g.last_id {
                        serve_sync = true;
                        gt = g.last_id;
                    }
                }
            }
            {
                let g = s.groups.get_mut(group).unwrap();
                g.ensure_consumer(consumer, now);
                g.consumers.get_mut(consumer).unwrap().seen = now;
            }
            let mut claimed_only = false;
            if serve_history {
                min_idle = -1;
            } else if !serve_sync && serve_claimed {
                serve_sync = true;
                claimed_only = true;
            }
            if !serve_sync {
                continue;
            }
            let start = incr(gt).unwrap_or(MIN);
            let entries = if serve_history {
                read_history(s, group, consumer, start, count, now)
            } else {
                serve_group(
                    s,
                    group,
                    consumer,
                    start,
                    count,
                    min_idle,
                    claimed_only,
                    noack,
                    now,
                )
            };
            served.push(Reply::Array(vec![bulk(key), Reply::Array(entries)]));
        }
        if served.is_empty() {
            Reply::NilArray
        } else {
            Reply::Array(served)
        }
    }
}

/// FORCE-created NACK records get their delivery time from `pelListInsertNacked` (0);
/// the value set at creation is irrelevant.
pub(super) fn now_placeholder() -> i64 {
    0
}

pub(super) fn read_history(
    s: &mut MStream,
    group: &[u8],
    consumer: &[u8],
    start: Id,
    count: u64,
    now: i64,
) -> Vec<Reply> {
    let ids: Vec<Id> = s.groups[group].consumers[consumer]
        .pel
        .range(start..)
        .copied()
        .take(if count == 0 {
            usize::MAX
        } else {
            count as usize
        })
        .collect();
    let mut out = Vec::new();
    for id in ids {
        match s.get(id).cloned() {
            Some(e) => {
                out.push(entry_reply(&e));
                let g = s.groups.get_mut(group).unwrap();
                g.incr_count(id);
                g.update(id, now);
            }
            None => out.push(Reply::Array(vec![rid(id), Reply::NilArray])),
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
pub(super) fn serve_group(
    s: &mut MStream,
    group: &[u8],
    consumer: &[u8],
    start: Id,
    count: u64,
    min_idle: i64,
    claimed_only: bool,
    noack: bool,
    now: i64,
) -> Vec<Reply> {
    let mut out = Vec::new();
    if min_idle != -1 {
        let snapshot = s.groups[group].time.clone();
        let mut processed = 0u64;
        for id in snapshot {
            let n = s.groups[group].pel[&id].clone();
            let idle = now.wrapping_sub(n.time) as u64;
            if idle < min_idle as u64 {
                break;
            }
            if let Some(e) = s.get(id).cloned() {
                out.push(entry_reply4(&e, idle as i64, n.count as i64));
                let g = s.groups.get_mut(group).unwrap();
                g.transfer(id, consumer);
                g.incr_count(id);
                g.update(id, now);
                g.consumers.get_mut(consumer).unwrap().active = now;
                processed += 1;
                if count != 0 && processed >= count {
                    break;
                }
            }
        }
    }
    if claimed_only || (count != 0 && count == out.len() as u64) {
        return out;
    }
    let entries: Vec<MEntry> = s.range(start, MAX, false).into_iter().cloned().collect();
    for e in entries {
        let id = e.id;
        let (first_id, entries_added) = (s.first_id, s.entries_added);
        let has_tomb = |from: Id| s.range_has_tombstones(from, MAX);
        let g = &s.groups[group];
        if id > g.last_id {
            let mut er = g.entries_read;
            if er != -1 && g.last_id >= first_id && !has_tomb(g.last_id) {
                er += 1;
            } else if entries_added != 0 {
                er = s.estimate(id);
            }
            let g = s.groups.get_mut(group).unwrap();
            g.entries_read = er;
            g.last_id = id;
        }
        out.push(if min_idle != -1 {
            entry_reply4(&e, 0, 0)
        } else {
            entry_reply(&e)
        });
        if !noack {
            let g = s.groups.get_mut(group).unwrap();
            #[allow(clippy::map_entry)]
            if g.pel.contains_key(&id) {
                g.transfer(id, consumer);
                g.pel.get_mut(&id).unwrap().count = 1;
                g.update(id, now);
            } else {
                g.pel.insert(
                    id,
                    MNack {
                        owner: Some(consumer.to_vec()),
                        count: 1,
                        time: now,
                    },
                );
                g.consumers.get_mut(consumer).unwrap().pel.insert(id);
                g.time.push(id);
            }
            g.consumers.get_mut(consumer).unwrap().active = now;
        }
        if count != 0 && count == out.len() as u64 {
            break;
        }
    }
    out
}
