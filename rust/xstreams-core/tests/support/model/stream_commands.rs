//! The model's stream commands: XADD, XTRIM, XLEN, XRANGE, DEL, XDEL, XDELEX, XREAD,
//! XINFO STREAM (FULL), XSETID, XCFGSET, XIDMPRECORD and the IDMP cron.

use super::*;

impl Model {
    #[allow(clippy::too_many_arguments)]
    pub fn xadd(
        &mut self,
        now: i64,
        key: &[u8],
        nomkstream: bool,
        id: AddId,
        pairs: &[(Vec<u8>, Vec<u8>)],
        trim: Option<Trim>,
        idmp: Option<(Vec<u8>, Option<Vec<u8>>)>,
    ) -> Reply {
        if let AddId::Given(i) = id {
            if i == MIN {
                return err("ERR The ID specified in XADD must be greater than 0-0");
            }
        }
        if !self.keys.contains_key(key) {
            if nomkstream {
                return Reply::Nil;
            }
            self.keys.insert(key.to_vec(), MStream::new(&self.cfg));
        }
        let cfg = self.cfg;
        let s = self.keys.get_mut(key).unwrap();
        let mut track: Option<(Vec<u8>, Vec<u8>)> = None;
        let mut created = false;
        if let Some((pid, iid)) = idmp {
            // Nothing expires on the lookup: only the cron sweep (`Model::cron`) does.
            created = !s.producers.contains_key(&pid);
            s.producers.entry(pid.clone()).or_default();
            let iid = iid.unwrap_or_else(|| auto_iid(pairs));
            if let Some(orig) = s.idmp_lookup(&pid, &iid) {
                s.iids_dups += 1;
                return rid(orig);
            }
            track = Some((pid, iid));
        }
        // Deliberate difference "idmp-failed-producer" (docs/differences.md): a failed
        // XADD removes the producer it created.
        let drop_new_producer = |s: &mut MStream| {
            if let (true, Some((pid, _))) = (created, &track) {
                s.producers.remove(pid);
            }
        };
        if s.last_id == MAX {
            drop_new_producer(s);
            return err("ERR The stream has exhausted the last possible ID");
        }
        let new_id = match s.append(&cfg, now, id, pairs) {
            Ok(i) => i,
            Err(e) => {
                drop_new_producer(s);
                return err(e);
            }
        };
        if let Some((pid, iid)) = track {
            s.idmp_insert(&pid, &iid, new_id);
            s.idmp_tracked = true;
        }
        if let Some(t) = trim {
            s.trim(&t);
        }
        rid(new_id)
    }

    pub fn xtrim(&mut self, key: &[u8], t: Trim) -> Reply {
        match self.keys.get_mut(key) {
            None => Reply::Int(0),
            Some(s) => Reply::Int(s.trim(&t) as i64),
        }
    }

    pub fn xlen(&self, key: &[u8]) -> Reply {
        Reply::Int(self.keys.get(key).map(|s| s.length as i64).unwrap_or(0))
    }

    pub fn xrange(&self, key: &[u8], start: Id, end: Id, count: Option<i64>, rev: bool) -> Reply {
        let Some(s) = self.keys.get(key) else {
            return Reply::Array(vec![]);
        };
        let count = count.map(|c| c.max(0));
        if count == Some(0) {
            return Reply::NilArray;
        }
        let mut v: Vec<Reply> = s
            .range(start, end, rev)
            .into_iter()
            .map(entry_reply)
            .collect();
        if let Some(c) = count {
            v.truncate(c as usize);
        }
        Reply::Array(v)
    }

    pub fn del(&mut self, key: &[u8]) -> Reply {
        Reply::Int(i64::from(self.keys.remove(key).is_some()))
    }

    pub fn xdel(&mut self, key: &[u8], ids: &[Id]) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return Reply::Int(0);
        };
        let (mut deleted, mut first) = (0u64, false);
        for &id in ids {
            s.delete_tracked(id, &mut deleted, &mut first);
        }
        s.fix_first(deleted, first);
        Reply::Int(deleted as i64)
    }

    pub fn xdelex(&mut self, key: &[u8], policy: Policy, ids: &[Id]) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return Reply::Array(vec![Reply::Int(-1); ids.len()]);
        };
        let (mut deleted, mut first) = (0u64, false);
        let mut out = Vec::new();
        for &id in ids {
            let mut can = true;
            match policy {
                Policy::Acked => can = !s.referenced(id),
                Policy::DelRef => s.cleanup_refs(id),
                Policy::KeepRef => {}
            }
            let res = if can {
                if s.delete_tracked(id, &mut deleted, &mut first) {
                    1
                } else {
                    -1
                }
            } else {
                2
            };
            out.push(Reply::Int(res));
        }
        s.fix_first(deleted, first);
        Reply::Array(out)
    }

    pub fn xread(&self, count: u64, streams: &[(Vec<u8>, ReadId)]) -> Reply {
        let mut gts = Vec::new();
        for (key, r) in streams {
            let s = self.keys.get(key);
            gts.push(match r {
                ReadId::Id(i) => *i,
                ReadId::Dollar => s.map(|s| s.last_id).unwrap_or(MIN),
                ReadId::Plus => match s {
                    Some(s) if s.length > 0 => decr(s.last_live().unwrap()).unwrap_or(MAX),
                    _ => MIN,
                },
                ReadId::Gt => return err("ERR"),
            });
        }
        let mut served = Vec::new();
        for (i, (key, _)) in streams.iter().enumerate() {
            let Some(s) = self.keys.get(key) else {
                continue;
            };
            if s.length == 0 || s.last_live().unwrap() <= gts[i] {
                continue;
            }
            let start = incr(gts[i]).unwrap_or(MIN);
            let mut v: Vec<Reply> = s
                .range(start, MAX, false)
                .into_iter()
                .map(entry_reply)
                .collect();
            if count > 0 {
                v.truncate(count as usize);
            }
            served.push(Reply::Array(vec![bulk(key), Reply::Array(v)]));
        }
        if served.is_empty() {
            Reply::NilArray
        } else {
            Reply::Array(served)
        }
    }

    /// XINFO STREAM (without FULL), minus `radix-tree-nodes`, `pids-tracked` and
    /// `iids-tracked` (cron-timing dependent or not modelled).
    pub fn xinfo_stream(&self, key: &[u8]) -> Reply {
        let Some(s) = self.keys.get(key) else {
            return err("ERR no such key");
        };
        let live = s.live();
        kv_map(vec![
            ("length", Reply::Int(s.length as i64)),
            ("radix-tree-keys", Reply::Int(s.nodes.len() as i64)),
            ("last-generated-id", rid(s.last_id)),
            ("max-deleted-entry-id", rid(s.max_deleted)),
            ("entries-added", Reply::Int(s.entries_added as i64)),
            ("recorded-first-entry-id", rid(s.first_id)),
            ("idmp-duration", Reply::Int(s.idmp_duration as i64)),
            ("idmp-maxsize", Reply::Int(s.idmp_maxsize as i64)),
            ("iids-added", Reply::Int(s.iids_added as i64)),
            ("iids-duplicates", Reply::Int(s.iids_dups as i64)),
            ("groups", Reply::Int(s.groups.len() as i64)),
            (
                "first-entry",
                live.first().map(|e| entry_reply(e)).unwrap_or(Reply::Nil),
            ),
            (
                "last-entry",
                live.last().map(|e| entry_reply(e)).unwrap_or(Reply::Nil),
            ),
        ])
    }

    /// XINFO STREAM FULL [COUNT n] (same omitted fields as [`Model::xinfo_stream`]).
    pub fn xinfo_full(&self, key: &[u8], count: Option<i64>) -> Reply {
        let Some(s) = self.keys.get(key) else {
            return err("ERR no such key");
        };
        let mut count = count.unwrap_or(10);
        if count < 0 {
            count = 10;
        }
        let limit = if count == 0 {
            usize::MAX
        } else {
            count as usize
        };
        let entries: Vec<Reply> = s.live().into_iter().take(limit).map(entry_reply).collect();
        let groups: Vec<Reply> = s
            .groups
            .iter()
            .map(|(name, g)| {
                let pending: Vec<Reply> = g
                    .pel
                    .iter()
                    .take(limit)
                    .map(|(id, n)| {
                        Reply::Array(vec![
                            rid(*id),
                            Reply::Bulk(n.owner.clone().unwrap_or_default()),
                            Reply::Int(n.time),
                            Reply::Int(n.count as i64),
                        ])
                    })
                    .collect();
                let consumers: Vec<Reply> = g
                    .consumers
                    .iter()
                    .map(|(cn, c)| {
                        let p: Vec<Reply> = c
                            .pel
                            .iter()
                            .take(limit)
                            .map(|id| {
                                let n = &g.pel[id];
                                Reply::Array(vec![
                                    rid(*id),
                                    Reply::Int(n.time),
                                    Reply::Int(n.count as i64),
                                ])
                            })
                            .collect();
                        kv_map(vec![
                            ("name", bulk(cn)),
                            ("seen-time", Reply::Int(c.seen)),
                            ("active-time", Reply::Int(c.active)),
                            ("pel-count", Reply::Int(c.pel.len() as i64)),
                            ("pending", Reply::Array(p)),
                        ])
                    })
                    .collect();
                kv_map(vec![
                    ("name", bulk(name)),
                    ("last-delivered-id", rid(g.last_id)),
                    (
                        "entries-read",
                        if g.entries_read != -1 {
                            Reply::Int(g.entries_read)
                        } else {
                            Reply::Nil
                        },
                    ),
                    ("lag", s.lag(g)),
                    ("pel-count", Reply::Int(g.pel.len() as i64)),
                    ("nacked-count", Reply::Int(g.nacked_count() as i64)),
                    ("pending", Reply::Array(pending)),
                    ("consumers", Reply::Array(consumers)),
                ])
            })
            .collect();
        kv_map(vec![
            ("length", Reply::Int(s.length as i64)),
            ("radix-tree-keys", Reply::Int(s.nodes.len() as i64)),
            ("last-generated-id", rid(s.last_id)),
            ("max-deleted-entry-id", rid(s.max_deleted)),
            ("entries-added", Reply::Int(s.entries_added as i64)),
            ("recorded-first-entry-id", rid(s.first_id)),
            ("idmp-duration", Reply::Int(s.idmp_duration as i64)),
            ("idmp-maxsize", Reply::Int(s.idmp_maxsize as i64)),
            ("iids-added", Reply::Int(s.iids_added as i64)),
            ("iids-duplicates", Reply::Int(s.iids_dups as i64)),
            ("entries", Reply::Array(entries)),
            ("groups", Reply::Array(groups)),
        ])
    }

    pub fn xsetid(&mut self, key: &[u8], id: Id, ea: Option<i64>, md: Option<Id>) -> Reply {
        if ea.is_some_and(|e| e < 0) {
            return err("ERR entries_added must be positive");
        }
        if let Some(m) = md {
            if id < m {
                return err("ERR The ID specified in XSETID is smaller than the provided");
            }
        }
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR no such key");
        };
        if id < s.max_deleted {
            return err("ERR The ID specified in XSETID is smaller than current");
        }
        if s.length > 0 {
            if id < s.last_live().unwrap() {
                return err("ERR The ID specified in XSETID is smaller than the target");
            }
            if let Some(e) = ea {
                if s.length > e as u64 {
                    return err("ERR The entries_added specified in XSETID is smaller");
                }
            }
        }
        s.last_id = id;
        if let Some(e) = ea {
            s.entries_added = e as u64;
        }
        if let Some(m) = md {
            if m != MIN {
                s.max_deleted = m;
            }
        }
        Reply::ok()
    }

    pub fn xcfgset(&mut self, key: &[u8], dur: Option<u64>, max: Option<u64>) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR no such key");
        };
        if dur.is_none() && max.is_none() {
            return err("ERR At least one parameter");
        }
        let mut changed = false;
        if let Some(d) = dur {
            if s.idmp_duration != d {
                s.idmp_duration = d;
                s.producers.clear();
                changed = true;
            }
        }
        if let Some(m) = max {
            if s.idmp_maxsize != m {
                s.idmp_maxsize = m;
                s.producers.clear();
                changed = true;
            }
        }
        if changed {
            s.idmp_tracked = false;
        }
        Reply::ok()
    }

    pub fn xidmprecord(&mut self, _now: i64, key: &[u8], pid: &[u8], iid: &[u8], id: Id) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR no such key");
        };
        if !s.exists(id) {
            return err("ERR No such message");
        }
        s.producers.entry(pid.to_vec()).or_default();
        match s.idmp_lookup(pid, iid) {
            Some(e) if e == id => Reply::ok(),
            Some(_) => err("ERR IID already exists"),
            None => {
                s.idmp_insert(pid, iid, id);
                s.idmp_tracked = true;
                Reply::ok()
            }
        }
    }

    /// Before a command at `now`: the IDMP cron's ticks due since the last command, run
    /// as one sweep at the latest tick (`serverCron`'s `run_with_period(1000)`), ticks on
    /// whole seconds of the store clock as the engine phases them. The clock only moves
    /// forward here.
    pub fn cron(&mut self, now: i64) {
        if self.next_sweep.is_none_or(|next| now >= next) {
            let tick = now - now.rem_euclid(1000);
            self.next_sweep = Some(tick + 1000);
            self.sweep(tick);
        }
    }

    /// The periodic IDMP sweep (`handleExpiredIdmpEntries`), forced: only tracked
    /// streams are visited; a stream left without producers is untracked.
    pub fn sweep(&mut self, now: i64) {
        for s in self.keys.values_mut() {
            s.idmp_expire(now);
        }
    }
}
