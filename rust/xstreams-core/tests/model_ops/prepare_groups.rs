//! The consumer-group commands of an `Op` as arguments for the store and the model's
//! reply.

use super::*;

impl Harness {
    /// A consumer-group `Op`: its arguments and the model's reply.
    pub(crate) fn prepare_group(&mut self, op: &Op, now: i64) -> Option<(Vec<String>, Reply)> {
        Some(match op {
            Op::Xack { key, group, ids } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let mut args = vec!["XACK".to_string(), k.to_string(), g.to_string()];
                args.extend(ids.iter().map(|i| s(*i)));
                (args, self.model.xack(k.as_bytes(), g.as_bytes(), &ids))
            }
            Op::Xackdel {
                key,
                group,
                policy,
                ids,
            } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let (pn, p) = policy_of(*policy);
                let mut args = vec!["XACKDEL".to_string(), k.to_string(), g.to_string()];
                if let Some(pn) = pn {
                    args.push(pn.into());
                }
                args.push("IDS".into());
                args.push(ids.len().to_string());
                args.extend(ids.iter().map(|i| s(*i)));
                (
                    args,
                    self.model.xackdel(k.as_bytes(), g.as_bytes(), p, &ids),
                )
            }
            Op::Xnack {
                key,
                group,
                mode,
                ids,
                retry,
                force,
            } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let (mn, mm) = match mode {
                    0 => ("SILENT", NackMode::Silent),
                    1 => ("FAIL", NackMode::Fail),
                    _ => ("FATAL", NackMode::Fatal),
                };
                let mut args = vec!["XNACK".to_string(), k.to_string(), g.to_string(), mn.into()];
                args.push("IDS".into());
                args.push(ids.len().to_string());
                args.extend(ids.iter().map(|i| s(*i)));
                let retry = retry.map(|r| [0u64, 1, 2, 7, i64::MAX as u64][r as usize % 5]);
                if let Some(r) = retry {
                    args.push("RETRYCOUNT".into());
                    args.push(r.to_string());
                }
                if *force {
                    args.push("FORCE".into());
                }
                (
                    args,
                    self.model
                        .xnack(k.as_bytes(), g.as_bytes(), mm, &ids, retry, *force),
                )
            }
            Op::Create {
                key,
                group,
                id,
                mkstream,
                er,
            } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                let (a, gid) = self.gid(id);
                let mut args = vec![
                    "XGROUP".to_string(),
                    "CREATE".into(),
                    k.to_string(),
                    g.to_string(),
                    a,
                ];
                if *mkstream {
                    args.push("MKSTREAM".into());
                }
                let er = self.er(*er, &mut args);
                (
                    args,
                    self.model
                        .xgroup_create(now, k.as_bytes(), g.as_bytes(), gid, *mkstream, er),
                )
            }
            Op::SetId { key, group, id, er } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                let (a, gid) = self.gid(id);
                let mut args = vec![
                    "XGROUP".to_string(),
                    "SETID".into(),
                    k.to_string(),
                    g.to_string(),
                    a,
                ];
                let er = self.er(*er, &mut args);
                (
                    args,
                    self.model.xgroup_setid(k.as_bytes(), g.as_bytes(), gid, er),
                )
            }
            Op::Destroy { key, group } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                (
                    vec!["XGROUP".into(), "DESTROY".into(), k.into(), g.into()],
                    self.model.xgroup_destroy(k.as_bytes(), g.as_bytes()),
                )
            }
            Op::CreateConsumer {
                key,
                group,
                consumer,
            } => {
                let (k, g, c) = (
                    KEYS[*key as usize],
                    GROUPS[*group as usize],
                    CONSUMERS[*consumer as usize],
                );
                (
                    vec![
                        "XGROUP".into(),
                        "CREATECONSUMER".into(),
                        k.into(),
                        g.into(),
                        c.into(),
                    ],
                    self.model
                        .xgroup_createconsumer(now, k.as_bytes(), g.as_bytes(), c.as_bytes()),
                )
            }
            Op::DelConsumer {
                key,
                group,
                consumer,
            } => {
                let (k, g, c) = (
                    KEYS[*key as usize],
                    GROUPS[*group as usize],
                    CONSUMERS[*consumer as usize],
                );
                (
                    vec![
                        "XGROUP".into(),
                        "DELCONSUMER".into(),
                        k.into(),
                        g.into(),
                        c.into(),
                    ],
                    self.model
                        .xgroup_delconsumer(k.as_bytes(), g.as_bytes(), c.as_bytes()),
                )
            }
            Op::ReadGroup {
                group,
                consumer,
                count,
                claim,
                noack,
                streams,
            } => {
                let g = GROUPS[*group as usize];
                let c = CONSUMERS[*consumer as usize];
                let mut args = vec!["XREADGROUP".to_string(), "GROUP".into(), g.into(), c.into()];
                if let Some(n) = count {
                    args.push("COUNT".into());
                    args.push(n.to_string());
                }
                let claim = claim.map(|i| [0i64, 1, 10, 100, 1000, 50_000][i as usize % 6]);
                if let Some(m) = claim {
                    args.push("CLAIM".into());
                    args.push(m.to_string());
                }
                if *noack {
                    args.push("NOACK".into());
                }
                args.push("STREAMS".into());
                let mut ms = Vec::new();
                for (k, _) in streams {
                    args.push(KEYS[*k as usize].into());
                }
                for (k, r) in streams {
                    let (a, rr) = match r {
                        RgId::Gt => (">".to_string(), ReadId::Gt),
                        RgId::Zero => ("0".to_string(), ReadId::Id(MIN)),
                        RgId::Id(sel) => {
                            let i = self.id(sel);
                            (s(i), ReadId::Id(i))
                        }
                    };
                    args.push(a);
                    ms.push((KEYS[*k as usize].as_bytes().to_vec(), rr));
                }
                (
                    args,
                    self.model.xreadgroup(
                        now,
                        g.as_bytes(),
                        c.as_bytes(),
                        count.map(|c| c as u64).unwrap_or(0),
                        claim,
                        *noack,
                        &ms,
                    ),
                )
            }
            Op::Claim {
                key,
                group,
                consumer,
                minidle,
                ids,
                idle,
                time,
                retry,
                force,
                justid,
                lastid,
            } => {
                let (k, g, c) = (
                    KEYS[*key as usize],
                    GROUPS[*group as usize],
                    CONSUMERS[*consumer as usize],
                );
                let minidle = [0i64, 1, 50, 1000, 10_000, -5][*minidle as usize % 6];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let mut args = vec![
                    "XCLAIM".to_string(),
                    k.into(),
                    g.into(),
                    c.into(),
                    minidle.to_string(),
                ];
                args.extend(ids.iter().map(|i| s(*i)));
                let mut dt: i64 = -1;
                if let Some(i) = idle {
                    let v = [0i64, 10, 1000, 100_000, -5][*i as usize % 5];
                    args.push("IDLE".into());
                    args.push(v.to_string());
                    dt = now - v;
                }
                if let Some(t) = time {
                    let v =
                        [0i64, 1, now - 10, now - 5000, now, now + 1000, -1, -100][*t as usize % 8];
                    args.push("TIME".into());
                    args.push(v.to_string());
                    dt = v;
                }
                let mut rc: i64 = -1;
                if let Some(r) = retry {
                    rc = [0i64, 1, 3, i64::MAX, -1][*r as usize % 5];
                    args.push("RETRYCOUNT".into());
                    args.push(rc.to_string());
                }
                if *force {
                    args.push("FORCE".into());
                }
                if *justid {
                    args.push("JUSTID".into());
                }
                let mut last = MIN;
                if let Some(l) = lastid {
                    last = self.id(l);
                    args.push("LASTID".into());
                    args.push(s(last));
                }
                (
                    args,
                    self.model.xclaim(
                        now,
                        k.as_bytes(),
                        g.as_bytes(),
                        c.as_bytes(),
                        minidle,
                        &ids,
                        dt,
                        rc,
                        *force,
                        *justid,
                        last,
                    ),
                )
            }
            Op::AutoClaim {
                key,
                group,
                consumer,
                minidle,
                start,
                count,
                justid,
            } => {
                let (k, g, c) = (
                    KEYS[*key as usize],
                    GROUPS[*group as usize],
                    CONSUMERS[*consumer as usize],
                );
                let minidle = [0i64, 1, 50, 1000, 10_000, -5][*minidle as usize % 6];
                let (sa, st) = self.bound(start, true);
                let mut args = vec![
                    "XAUTOCLAIM".to_string(),
                    k.into(),
                    g.into(),
                    c.into(),
                    minidle.to_string(),
                    sa,
                ];
                if let Some(n) = count {
                    args.push("COUNT".into());
                    args.push(n.to_string());
                }
                if *justid {
                    args.push("JUSTID".into());
                }
                let expected = match st {
                    Err(()) => err("ERR invalid start ID for the interval"),
                    Ok(st) => self.model.xautoclaim(
                        now,
                        k.as_bytes(),
                        g.as_bytes(),
                        c.as_bytes(),
                        minidle,
                        st,
                        count.map(|c| c as i64).unwrap_or(100),
                        *justid,
                    ),
                };
                (args, expected)
            }
            Op::PendingSummary { key, group } => {
                let (k, g) = (KEYS[*key as usize], GROUPS[*group as usize]);
                (
                    vec!["XPENDING".into(), k.into(), g.into()],
                    self.model.xpending_summary(k.as_bytes(), g.as_bytes()),
                )
            }
            Op::PendingExt {
                key,
                group,
                idle,
                start,
                end,
                count,
                consumer,
            } => {
                let (k, g) = (KEYS[*key as usize], GROUPS[*group as usize]);
                let mut args = vec!["XPENDING".to_string(), k.into(), g.into()];
                let mut minidle = 0;
                if let Some(i) = idle {
                    minidle = [0i64, 1, 50, 1000, 100_000, -3][*i as usize % 6];
                    args.push("IDLE".into());
                    args.push(minidle.to_string());
                }
                let (sa, st) = self.bound(start, true);
                let (ea, en) = self.bound(end, false);
                let count = [0i64, 1, 2, 3, 100, -1][*count as usize % 6];
                args.push(sa);
                args.push(ea);
                args.push(count.to_string());
                let cname = consumer.map(|c| CONSUMERS[c as usize]);
                if let Some(c) = cname {
                    args.push(c.into());
                }
                let expected = match (st, en) {
                    (Err(()), _) => err("ERR invalid start ID for the interval"),
                    (_, Err(())) => err("ERR invalid end ID for the interval"),
                    (Ok(st), Ok(en)) => self.model.xpending_ext(
                        now,
                        k.as_bytes(),
                        g.as_bytes(),
                        minidle,
                        st,
                        en,
                        count,
                        cname.map(|c| c.as_bytes()),
                    ),
                };
                (args, expected)
            }
            Op::InfoGroups { key } => {
                let k = KEYS[*key as usize];
                (
                    vec!["XINFO".into(), "GROUPS".into(), k.into()],
                    self.model.xinfo_groups(k.as_bytes()),
                )
            }
            Op::InfoConsumers { key, group } => {
                let (k, g) = (KEYS[*key as usize], GROUPS[*group as usize]);
                (
                    vec!["XINFO".into(), "CONSUMERS".into(), k.into(), g.into()],
                    self.model.xinfo_consumers(now, k.as_bytes(), g.as_bytes()),
                )
            }
            _ => unreachable!("a stream command"),
        })
    }
}
