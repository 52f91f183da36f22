//! The stream commands of an `Op` as arguments for the store and the model's reply.

use super::*;

impl Harness {
    /// A stream (or keyspace, clock) `Op`: its arguments and the model's reply.
    pub(crate) fn prepare_stream(&mut self, op: &Op, now: i64) -> Option<(Vec<String>, Reply)> {
        Some(match op {
            Op::Advance(i) => {
                let d = [0i64, 1, 7, 100, 999, 1000, 5000, 100_000][*i as usize % 8];
                self.now += d;
                self.store.advance_clock(d);
                self.log.push(format!("<advance {d}>"));
                return None;
            }
            Op::Sweep => {
                self.store.sweep();
                self.model.sweep(self.now);
                self.log.push("<sweep>".into());
                return None;
            }
            Op::Xadd {
                key,
                nomk,
                id,
                pairs,
                trim,
                idmp,
            } => {
                let k = KEYS[*key as usize];
                let mut args = vec!["XADD".to_string(), k.to_string()];
                if *nomk {
                    args.push("NOMKSTREAM".into());
                }
                let mut idmp_m = None;
                if let Some((pid, iid)) = idmp {
                    let pid = format!("p{pid}");
                    match iid {
                        Some(i) => {
                            let iid = format!("i{i}");
                            args.extend(["IDMP".into(), pid.clone(), iid.clone()]);
                            idmp_m = Some((pid.into_bytes(), Some(iid.into_bytes())));
                        }
                        None => {
                            args.extend(["IDMPAUTO".into(), pid.clone()]);
                            idmp_m = Some((pid.into_bytes(), None));
                        }
                    }
                }
                let trim_m = trim.as_ref().map(|t| self.trim(t, &mut args));
                let last = self.last_id(k);
                let (idarg, spec) = match id {
                    XId::Auto => ("*".to_string(), AddId::Auto),
                    XId::Zero => ("0-0".to_string(), AddId::Given(MIN)),
                    XId::Raw(sel) => {
                        let i = self.id(sel);
                        (s(i), AddId::Given(i))
                    }
                    XId::AfterLast(d) => {
                        let d = *d as u64 % 4;
                        let i = match last.seq.checked_add(d + 1) {
                            Some(q) => StreamId::new(last.ms, q),
                            None => StreamId::new(last.ms.saturating_add(1), d),
                        };
                        (s(i), AddId::Given(i))
                    }
                    XId::MsStar(sel) => {
                        let ms = match sel % 4 {
                            0 => last.ms,
                            1 => last.ms.saturating_add(1),
                            2 => self.now as u64,
                            _ => MS[*sel as usize % MS.len()],
                        };
                        (format!("{ms}-*"), AddId::MsStar(ms))
                    }
                };
                args.push(idarg);
                let pairs: Vec<(Vec<u8>, Vec<u8>)> = pairs
                    .iter()
                    .map(|(f, v)| (FIELDS[*f as usize].as_bytes().to_vec(), value(*v)))
                    .collect();
                for (f, v) in &pairs {
                    args.push(String::from_utf8(f.clone()).unwrap());
                    args.push(String::from_utf8(v.clone()).unwrap());
                }
                let expected = if idmp_m.is_some() && !matches!(spec, AddId::Auto) {
                    err("ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs")
                } else {
                    match trim_m {
                        Some(Err(e)) => e,
                        t => {
                            let t = t.map(|x| x.unwrap());
                            self.model
                                .xadd(now, k.as_bytes(), *nomk, spec, &pairs, t, idmp_m)
                        }
                    }
                };
                if let Reply::Bulk(b) = &expected {
                    let t = String::from_utf8(b.clone()).unwrap();
                    let (a, b) = t.split_once('-').unwrap();
                    let id = StreamId::new(a.parse().unwrap(), b.parse().unwrap());
                    if !self.known.contains(&id) {
                        self.known.push(id);
                    }
                }
                (args, expected)
            }
            Op::Xtrim { key, trim } => {
                let k = KEYS[*key as usize];
                let mut args = vec!["XTRIM".to_string(), k.to_string()];
                let expected = match self.trim(trim, &mut args) {
                    Err(e) => e,
                    Ok(t) => self.model.xtrim(k.as_bytes(), t),
                };
                (args, expected)
            }
            Op::Xdel { key, ids } => {
                let k = KEYS[*key as usize];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let mut args = vec!["XDEL".to_string(), k.to_string()];
                args.extend(ids.iter().map(|i| s(*i)));
                (args, self.model.xdel(k.as_bytes(), &ids))
            }
            Op::Xdelex { key, policy, ids } => {
                let k = KEYS[*key as usize];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let (pn, p) = policy_of(*policy);
                let mut args = vec!["XDELEX".to_string(), k.to_string()];
                if let Some(pn) = pn {
                    args.push(pn.into());
                }
                args.push("IDS".into());
                args.push(ids.len().to_string());
                args.extend(ids.iter().map(|i| s(*i)));
                (args, self.model.xdelex(k.as_bytes(), p, &ids))
            }
            Op::Read { count, streams } => {
                let mut args = vec!["XREAD".to_string()];
                if let Some(n) = count {
                    args.push("COUNT".into());
                    args.push(n.to_string());
                }
                args.push("STREAMS".into());
                let mut ms = Vec::new();
                for (k, _) in streams {
                    args.push(KEYS[*k as usize].into());
                }
                for (k, r) in streams {
                    let (a, rr) = match r {
                        RId::Dollar => ("$".to_string(), ReadId::Dollar),
                        RId::Plus => ("+".to_string(), ReadId::Plus),
                        RId::Zero => ("0-0".to_string(), ReadId::Id(MIN)),
                        RId::Id(sel) => {
                            let i = self.id(sel);
                            (s(i), ReadId::Id(i))
                        }
                    };
                    args.push(a);
                    ms.push((KEYS[*k as usize].as_bytes().to_vec(), rr));
                }
                (
                    args,
                    self.model.xread(count.map(|c| c as u64).unwrap_or(0), &ms),
                )
            }
            Op::Range {
                key,
                rev,
                start,
                end,
                count,
            } => {
                let k = KEYS[*key as usize];
                let (sa, st) = self.bound(start, true);
                let (ea, en) = self.bound(end, false);
                let mut args = vec![
                    if *rev { "XREVRANGE" } else { "XRANGE" }.to_string(),
                    k.into(),
                ];
                if *rev {
                    args.push(ea);
                    args.push(sa);
                } else {
                    args.push(sa);
                    args.push(ea);
                }
                let count = count.map(|c| [0i64, 1, 2, 5, -1][c as usize % 5]);
                if let Some(c) = count {
                    args.push("COUNT".into());
                    args.push(c.to_string());
                }
                let expected = match (st, en) {
                    (Err(()), _) => err("ERR invalid start ID for the interval"),
                    (_, Err(())) => err("ERR invalid end ID for the interval"),
                    (Ok(st), Ok(en)) => self.model.xrange(k.as_bytes(), st, en, count, *rev),
                };
                (args, expected)
            }
            Op::Len { key } => {
                let k = KEYS[*key as usize];
                (vec!["XLEN".into(), k.into()], self.model.xlen(k.as_bytes()))
            }
            Op::InfoStream { key } => {
                let k = KEYS[*key as usize];
                (
                    vec!["XINFO".into(), "STREAM".into(), k.into()],
                    self.model.xinfo_stream(k.as_bytes()),
                )
            }
            Op::InfoFull { key, count } => {
                let k = KEYS[*key as usize];
                let mut args = vec![
                    "XINFO".to_string(),
                    "STREAM".into(),
                    k.into(),
                    "FULL".into(),
                ];
                let count = count.map(|c| [0i64, 1, 3, -2][c as usize % 4]);
                if let Some(c) = count {
                    args.push("COUNT".into());
                    args.push(c.to_string());
                }
                (args, self.model.xinfo_full(k.as_bytes(), count))
            }
            Op::SetIdStream {
                key,
                id,
                raw,
                ea,
                md,
            } => {
                let k = KEYS[*key as usize];
                let st = self.model.keys.get(k.as_bytes());
                let last_live = st.and_then(|s| s.last_live()).unwrap_or(MIN);
                let last = self.last_id(k);
                let target = match id % 5 {
                    0 => last,
                    1 => last_live,
                    2 => incr(last_live).unwrap_or(last_live),
                    3 => incr(last).unwrap_or(last),
                    _ => self.id(raw),
                };
                let mut args = vec!["XSETID".to_string(), k.into(), s(target)];
                let ea = ea.map(|e| {
                    let (len, added) = st
                        .map(|s| (s.length as i64, s.entries_added as i64))
                        .unwrap_or((0, 0));
                    [0i64, len, added, added + 5, -1][e as usize % 5]
                });
                if let Some(e) = ea {
                    args.push("ENTRIESADDED".into());
                    args.push(e.to_string());
                }
                let md = md.as_ref().map(|m| self.id(m));
                if let Some(m) = md {
                    args.push("MAXDELETEDID".into());
                    args.push(s(m));
                }
                (args, self.model.xsetid(k.as_bytes(), target, ea, md))
            }
            Op::CfgSet { key, dur, max } => {
                let k = KEYS[*key as usize];
                let mut args = vec!["XCFGSET".to_string(), k.into()];
                let dur = dur.map(|d| [1u64, 2, 100][d as usize % 3]);
                let max = max.map(|d| [1u64, 2, 3, 100][d as usize % 4]);
                if let Some(d) = dur {
                    args.push("IDMP-DURATION".into());
                    args.push(d.to_string());
                }
                if let Some(m) = max {
                    args.push("IDMP-MAXSIZE".into());
                    args.push(m.to_string());
                }
                (args, self.model.xcfgset(k.as_bytes(), dur, max))
            }
            Op::IdmpRecord { key, pid, iid, id } => {
                let k = KEYS[*key as usize];
                let (p, i) = (format!("p{pid}"), format!("i{iid}"));
                let id = self.id(id);
                (
                    vec!["XIDMPRECORD".into(), k.into(), p.clone(), i.clone(), s(id)],
                    self.model
                        .xidmprecord(now, k.as_bytes(), p.as_bytes(), i.as_bytes(), id),
                )
            }
            Op::Del { key } => {
                let k = KEYS[*key as usize];
                (vec!["DEL".into(), k.into()], self.model.del(k.as_bytes()))
            }
            _ => unreachable!("a group command"),
        })
    }
}
