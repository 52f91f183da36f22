//! The invariants checked after every command: every stream's structure, counters,
//! groups and IDMP bounds, and what a sweep must have removed.

use super::*;

pub(crate) fn check_stream(s: &Stream, cfg: &Config, where_: &str) -> Result<(), String> {
    let fail = |m: String| Err(format!("{where_}: {m}"));
    // Nodes.
    let mut live_total = 0;
    for n in s.nodes() {
        live_total += n.live();
        if cfg.stream_node_max_entries > 0
            && (n.live() + n.deleted()) as i64 > cfg.stream_node_max_entries
        {
            return fail(format!(
                "node {} holds {} entries > stream-node-max-entries {}",
                n.master_id(),
                n.live() + n.deleted(),
                cfg.stream_node_max_entries
            ));
        }
    }
    if live_total != s.length {
        return fail(format!(
            "length {} but nodes hold {live_total} live entries",
            s.length
        ));
    }
    // Iteration.
    let fwd: Vec<StreamId> = s
        .range(StreamId::MIN, StreamId::MAX, false)
        .map(|e| e.id)
        .collect();
    let mut rev: Vec<StreamId> = s
        .range(StreamId::MIN, StreamId::MAX, true)
        .map(|e| e.id)
        .collect();
    rev.reverse();
    if fwd != rev {
        return fail(format!(
            "forward {fwd:?} and reversed backward {rev:?} iteration differ"
        ));
    }
    if fwd.windows(2).any(|w| w[0] >= w[1]) {
        return fail(format!("iteration not strictly ascending: {fwd:?}"));
    }
    if fwd.len() as u64 != s.length {
        return fail(format!(
            "iteration yields {} entries, length {}",
            fwd.len(),
            s.length
        ));
    }
    let first = fwd.first().copied().unwrap_or(StreamId::MIN);
    if first != s.first_id {
        return fail(format!("first id {} but first entry {first}", s.first_id));
    }
    if let Some(&last) = fwd.last() {
        if last > s.last_id {
            return fail(format!("entry {last} beyond last id {}", s.last_id));
        }
    }
    for id in &fwd {
        if !s.contains(*id) || s.get(*id).map(|e| e.id) != Some(*id) {
            return fail(format!("{id} iterated but not found by get()"));
        }
    }
    // Groups.
    let mut all_pending: std::collections::BTreeMap<StreamId, Vec<usize>> = Default::default();
    for (name, gi, g) in s.groups.iter() {
        let gname = String::from_utf8_lossy(name).into_owned();
        let gfail = |m: String| fail(format!("group {gname}: {m}"));
        let pel: Vec<(StreamId, usize)> = g.pel_range(StreamId::MIN, StreamId::MAX).collect();
        if pel.len() != g.pel_len() {
            return gfail(format!(
                "pel_range yields {} of pel_len {}",
                pel.len(),
                g.pel_len()
            ));
        }
        let mut owned = std::collections::BTreeSet::new();
        let mut unowned = std::collections::BTreeSet::new();
        for &(id, p) in &pel {
            all_pending.entry(id).or_default().push(gi);
            let r = g.record(p);
            if r.id != id {
                return gfail(format!("record {} under {id}", r.id));
            }
            if r.delivery_count > i64::MAX as u64 {
                return gfail(format!(
                    "{id} delivery count {} > i64::MAX",
                    r.delivery_count
                ));
            }
            match r.consumer {
                Some(c) => {
                    if !g.consumer(c).pel.contains(&id) {
                        return gfail(format!("{id} owned by a consumer whose PEL lacks it"));
                    }
                    if r.nacked {
                        return gfail(format!("{id} owned and NACKed"));
                    }
                    owned.insert(id);
                }
                None => {
                    if !r.nacked {
                        return gfail(format!("{id} unowned but not in the NACK zone"));
                    }
                    unowned.insert(id);
                }
            }
        }
        let mut union = std::collections::BTreeSet::new();
        for (_, c) in g.consumers() {
            for id in &c.pel {
                if !union.insert(*id) {
                    return gfail(format!("{id} in two consumer PELs"));
                }
            }
        }
        if union != owned {
            return gfail(format!(
                "consumer PELs {union:?} != owned entries {owned:?}"
            ));
        }
        let order: Vec<(StreamId, bool, i64)> = g
            .time_order()
            .map(|(_, r)| (r.id, r.nacked, r.delivery_time))
            .collect();
        if order.len() != pel.len() {
            return gfail(format!(
                "time list has {} of {} entries",
                order.len(),
                pel.len()
            ));
        }
        let set: std::collections::BTreeSet<StreamId> = order.iter().map(|x| x.0).collect();
        if set.len() != order.len() || set.iter().ne(pel.iter().map(|x| &x.0)) {
            return gfail("time list does not visit every pending entry exactly once".into());
        }
        let zone = order.iter().take_while(|x| x.1).count();
        if zone as u64 != g.nacked_count() {
            return gfail(format!(
                "NACK zone prefix {zone} but nacked_count {}",
                g.nacked_count()
            ));
        }
        if zone != unowned.len() {
            return gfail(format!(
                "NACK zone {zone} but {} unowned entries",
                unowned.len()
            ));
        }
        if order[..zone].iter().any(|x| x.2 != 0) {
            return gfail("NACK zone entry with a delivery time".into());
        }
        if order[zone..].iter().any(|x| x.1) {
            return gfail("NACKed entry outside the zone prefix".into());
        }
        if order[zone..].windows(2).any(|w| w[0].2 > w[1].2) {
            return gfail(format!("time list out of order: {:?}", &order[zone..]));
        }
        for (_, c) in g.consumers() {
            if g.consumer_idx(&c.name).is_none() {
                return gfail("consumer not found by name".into());
            }
        }
    }
    for (id, gs) in &all_pending {
        let mut have = s.groups.refs_of(id).to_vec();
        have.sort_unstable();
        let mut want = gs.clone();
        want.sort_unstable();
        if have != want {
            return fail(format!("refs_of({id}) = {have:?}, PELs say {want:?}"));
        }
    }
    for id in &fwd {
        if !all_pending.contains_key(id) && !s.groups.refs_of(id).is_empty() {
            return fail(format!("refs_of({id}) non-empty but no PEL holds it"));
        }
    }
    // IDMP.
    let mut total = 0u64;
    for (pid, p) in s.idmp.producers() {
        if p.len() as u64 > s.idmp.maxsize {
            return fail(format!(
                "producer {pid:?} holds {} > maxsize {}",
                p.len(),
                s.idmp.maxsize
            ));
        }
        total += p.len() as u64;
        for (iid, id) in p.iter() {
            if p.lookup(iid) != Some(id) {
                return fail(format!("iid {iid:?} not found by lookup"));
            }
        }
    }
    if total != s.idmp.iids_tracked() {
        return fail(format!(
            "iids_tracked {} but producers hold {total}",
            s.idmp.iids_tracked()
        ));
    }
    if s.idmp.pids_tracked() != s.idmp.producers().count() {
        return fail("pids_tracked disagrees with producers()".into());
    }
    Ok(())
}

pub(crate) fn check_all(ks: &Keyspace) -> Result<(), String> {
    for (i, db) in ks.dbs.iter().enumerate() {
        for (k, s) in db.streams() {
            check_stream(
                s,
                &ks.config,
                &format!("db {i} key {}", String::from_utf8_lossy(k)),
            )?;
        }
    }
    Ok(())
}

pub(crate) fn check_after_sweep(ks: &Keyspace, now: i64, strict: bool) -> Result<(), String> {
    for db in &ks.dbs {
        for (k, s) in db.streams() {
            // redis-server's threshold is unsigned: `server.mstime - duration*1000`.
            let threshold = (now as u64).wrapping_sub(s.idmp.duration.wrapping_mul(1000));
            for (pid, p) in s.idmp.producers() {
                // Only expired IIDs are checked (a producer is never empty here: a failed
                // XADD removes the one it created, docs/differences.md
                // "idmp-failed-producer").
                if p.is_empty() {
                    return Err(format!("{k:?}: producer {pid:?} holds no IID"));
                }
                let mut it = p.iter();
                if let Some((iid, id)) = it.next() {
                    if id.ms <= threshold {
                        return Err(format!(
                            "{k:?}: oldest IID {iid:?} -> {id} expired but kept"
                        ));
                    }
                }
                if strict {
                    for (iid, id) in p.iter() {
                        if id.ms <= threshold {
                            return Err(format!("{k:?}: IID {iid:?} -> {id} expired but kept"));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}
