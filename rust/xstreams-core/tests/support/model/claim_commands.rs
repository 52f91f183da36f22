//! The model's claiming and pending commands: XCLAIM, XAUTOCLAIM, XPENDING, XINFO
//! GROUPS and XINFO CONSUMERS.

use super::*;

impl Model {
    #[allow(clippy::too_many_arguments)]
    pub fn xclaim(
        &mut self,
        now: i64,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        minidle: i64,
        ids: &[Id],
        deliverytime: i64,
        retry: i64,
        force: bool,
        justid: bool,
        lastid: Id,
    ) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return nogroup();
        };
        if !s.groups.contains_key(group) {
            return nogroup();
        }
        let minidle = minidle.max(0);
        let mut dt = deliverytime;
        if dt != -1 {
            if dt < 0 || dt > now {
                dt = now;
            }
        } else {
            dt = now;
        }
        {
            let g = s.groups.get_mut(group).unwrap();
            if lastid > g.last_id {
                g.last_id = lastid;
            }
            g.ensure_consumer(consumer, now);
            g.consumers.get_mut(consumer).unwrap().seen = now;
        }
        let mut out = Vec::new();
        for &id in ids {
            let exists = s.exists(id);
            let g = s.groups.get_mut(group).unwrap();
            if !exists {
                g.remove(id);
                continue;
            }
            if force && !g.pel.contains_key(&id) {
                g.pel.insert(
                    id,
                    MNack {
                        owner: None,
                        count: 1,
                        time: now,
                    },
                );
                g.time.push(id);
            }
            let Some(n) = g.pel.get(&id).cloned() else {
                continue;
            };
            if n.owner.is_some() && minidle != 0 && now - n.time < minidle {
                continue;
            }
            g.update(id, dt);
            if retry >= 0 {
                g.pel.get_mut(&id).unwrap().count = retry as u64;
            } else if !justid {
                g.incr_count(id);
            }
            g.transfer(id, consumer);
            g.consumers.get_mut(consumer).unwrap().active = now;
            out.push(if justid {
                rid(id)
            } else {
                entry_reply(s.get(id).unwrap())
            });
        }
        Reply::Array(out)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn xautoclaim(
        &mut self,
        now: i64,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        minidle: i64,
        start: Id,
        count: i64,
        justid: bool,
    ) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return nogroup();
        };
        if !s.groups.contains_key(group) {
            return nogroup();
        }
        let minidle = minidle.max(0);
        {
            let g = s.groups.get_mut(group).unwrap();
            g.ensure_consumer(consumer, now);
            g.consumers.get_mut(consumer).unwrap().seen = now;
        }
        let mut count = count;
        let mut attempts = count * 10;
        // Position of the rax iterator: next key is the first >= `pos` (inclusive) or
        // > `pos` (exclusive).
        let mut pos: (Id, bool) = (start, true);
        let next_key = |g: &MGroup, pos: (Id, bool)| -> Option<Id> {
            g.pel
                .range(pos.0..)
                .map(|(k, _)| *k)
                .find(|k| pos.1 || *k != pos.0)
        };
        let mut claimed = Vec::new();
        let mut deleted = Vec::new();
        loop {
            if attempts == 0 {
                break;
            }
            attempts -= 1;
            if count == 0 {
                break;
            }
            let Some(id) = next_key(&s.groups[group], pos) else {
                break;
            };
            pos = (id, false);
            let exists = s.exists(id);
            let g = s.groups.get_mut(group).unwrap();
            if !exists {
                g.remove(id);
                deleted.push(rid(id));
                count -= 1;
                continue;
            }
            let n = g.pel[&id].clone();
            if n.owner.is_some() && minidle != 0 && now - n.time < minidle {
                continue;
            }
            g.update(id, now);
            if !justid {
                g.incr_count(id);
            }
            g.transfer(id, consumer);
            count -= 1;
            g.consumers.get_mut(consumer).unwrap().active = now;
            claimed.push(if justid {
                rid(id)
            } else {
                entry_reply(s.get(id).unwrap())
            });
        }
        let cursor = next_key(&s.groups[group], pos).unwrap_or(MIN);
        Reply::Array(vec![
            rid(cursor),
            Reply::Array(claimed),
            Reply::Array(deleted),
        ])
    }

    pub fn xpending_summary(&self, key: &[u8], group: &[u8]) -> Reply {
        let Some(g) = self.keys.get(key).and_then(|s| s.groups.get(group)) else {
            return nogroup();
        };
        if g.pel.is_empty() {
            return Reply::Array(vec![Reply::Int(0), Reply::Nil, Reply::Nil, Reply::NilArray]);
        }
        let first = *g.pel.keys().next().unwrap();
        let last = *g.pel.keys().next_back().unwrap();
        let cons: Vec<Reply> = g
            .consumers
            .iter()
            .filter(|(_, c)| !c.pel.is_empty())
            .map(|(n, c)| Reply::Array(vec![bulk(n), bulk(c.pel.len().to_string().as_bytes())]))
            .collect();
        Reply::Array(vec![
            Reply::Int(g.pel.len() as i64),
            rid(first),
            rid(last),
            Reply::Array(cons),
        ])
    }

    #[allow(clippy::too_many_arguments)]
    pub fn xpending_ext(
        &self,
        now: i64,
        key: &[u8],
        group: &[u8],
        minidle: i64,
        start: Id,
        end: Id,
        count: i64,
        consumer: Option<&[u8]>,
    ) -> Reply {
        let Some(g) = self.keys.get(key).and_then(|s| s.groups.get(group)) else {
            return nogroup();
        };
        let ids: Vec<Id> = match consumer {
            Some(c) => match g.consumers.get(c) {
                None => return Reply::Array(vec![]),
                Some(c) => c.pel.range(start..).copied().collect(),
            },
            None => g.pel.range(start..).map(|(k, _)| *k).collect(),
        };
        let mut left = count.max(0);
        let mut out = Vec::new();
        for id in ids {
            if left == 0 || id > end {
                break;
            }
            let n = &g.pel[&id];
            if n.owner.is_some() && minidle != 0 && now - n.time < minidle {
                continue;
            }
            left -= 1;
            let (owner, elapsed) = match &n.owner {
                Some(o) => (o.clone(), (now - n.time).max(0)),
                None => (Vec::new(), -1),
            };
            out.push(Reply::Array(vec![
                rid(id),
                Reply::Bulk(owner),
                Reply::Int(elapsed),
                Reply::Int(n.count as i64),
            ]));
        }
        Reply::Array(out)
    }

    pub fn xinfo_groups(&self, key: &[u8]) -> Reply {
        let Some(s) = self.keys.get(key) else {
            return err("ERR no such key");
        };
        Reply::Array(
            s.groups
                .iter()
                .map(|(name, g)| {
                    kv_map(vec![
                        ("name", bulk(name)),
                        ("consumers", Reply::Int(g.consumers.len() as i64)),
                        ("pending", Reply::Int(g.pel.len() as i64)),
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
                    ])
                })
                .collect(),
        )
    }

    pub fn xinfo_consumers(&self, now: i64, key: &[u8], group: &[u8]) -> Reply {
        let Some(s) = self.keys.get(key) else {
            return err("ERR no such key");
        };
        let Some(g) = s.groups.get(group) else {
            return nogroup();
        };
        Reply::Array(
            g.consumers
                .iter()
                .map(|(n, c)| {
                    kv_map(vec![
                        ("name", bulk(n)),
                        ("pending", Reply::Int(c.pel.len() as i64)),
                        ("idle", Reply::Int((now - c.seen).max(0))),
                        (
                            "inactive",
                            Reply::Int(if c.active != -1 { now - c.active } else { -1 }),
                        ),
                    ])
                })
                .collect(),
        )
    }
}
