//! The harness: one store and one model fed the same commands, with the known IDs and
//! the command log; after every step the replies and the whole state must agree.

use super::*;

pub(crate) struct Harness {
    /// Also require `store.validate()` after every command.
    pub(crate) check_validate: bool,
    pub(crate) store: Store,
    pub(crate) model: Model,
    pub(crate) now: i64,
    pub(crate) known: Vec<StreamId>,
    pub(crate) log: Vec<String>,
}

pub(crate) fn policy_of(p: Option<u8>) -> (Option<&'static str>, Policy) {
    match p {
        None => (None, Policy::KeepRef),
        Some(0) => (Some("KEEPREF"), Policy::KeepRef),
        Some(1) => (Some("DELREF"), Policy::DelRef),
        _ => (Some("ACKED"), Policy::Acked),
    }
}

pub(crate) fn s(id: StreamId) -> String {
    format!("{}-{}", id.ms, id.seq)
}

impl Harness {
    pub(crate) fn new(cfg: Config) -> Self {
        let store = Store::new(cfg.clone());
        store.set_clock(Some(BASE));
        let model = Model::new(NodeCfg {
            max_entries: cfg.stream_node_max_entries,
            max_bytes: cfg.stream_node_max_bytes,
            idmp_duration: cfg.stream_idmp_duration as u64,
            idmp_maxsize: cfg.stream_idmp_maxsize as u64,
        });
        Harness {
            check_validate: true,
            store,
            model,
            now: BASE,
            known: vec![StreamId::new(1, 0)],
            log: Vec::new(),
        }
    }

    pub(crate) fn id(&self, sel: &IdSel) -> StreamId {
        let k = |i: u16| self.known[i as usize % self.known.len()];
        match *sel {
            IdSel::Known(i) => k(i),
            IdSel::Pel(i) => {
                let pending: Vec<StreamId> = self
                    .model
                    .keys
                    .values()
                    .flat_map(|s| s.groups.values().flat_map(|g| g.pel.keys().copied()))
                    .collect();
                if pending.is_empty() {
                    k(i)
                } else {
                    pending[i as usize % pending.len()]
                }
            }
            IdSel::Near(i, d) => {
                let b = k(i);
                match d % 6 {
                    0 => incr(b).unwrap_or(b),
                    1 => decr(b).unwrap_or(b),
                    2 => StreamId::new(b.ms, 0),
                    3 => StreamId::new(b.ms, u64::MAX),
                    4 => StreamId::new(b.ms.saturating_add(1), 0),
                    _ => b,
                }
            }
            IdSel::Raw(a, b) => {
                StreamId::new(MS[a as usize % MS.len()], SEQ[b as usize % SEQ.len()])
            }
        }
    }

    pub(crate) fn last_id(&self, key: &str) -> StreamId {
        self.model
            .keys
            .get(key.as_bytes())
            .map(|s| s.last_id)
            .unwrap_or(MIN)
    }

    pub(crate) fn bound(&self, b: &Bound, is_start: bool) -> (String, Result<StreamId, ()>) {
        match b {
            Bound::Minus => ("-".into(), Ok(MIN)),
            Bound::Plus => ("+".into(), Ok(MAX)),
            Bound::Incl(i) => {
                let id = self.id(i);
                (s(id), Ok(id))
            }
            Bound::Excl(i) => {
                let id = self.id(i);
                let r = if is_start { incr(id) } else { decr(id) };
                (format!("({}", s(id)), r.ok_or(()))
            }
            Bound::MsOnly(i) => {
                let id = self.id(i);
                let seq = if is_start { 0 } else { u64::MAX };
                (id.ms.to_string(), Ok(StreamId::new(id.ms, seq)))
            }
        }
    }

    pub(crate) fn trim(&self, t: &TrimSpec, args: &mut Vec<String>) -> Result<Trim, Reply> {
        let approx = t.approx == 2;
        let strategy = match t.maxlen {
            Some(n) => {
                args.push("MAXLEN".into());
                TrimBy::MaxLen(n as u64)
            }
            None => {
                args.push("MINID".into());
                TrimBy::MinId(self.id(&t.minid))
            }
        };
        match t.approx {
            1 => args.push("=".into()),
            2 => args.push("~".into()),
            _ => {}
        }
        args.push(match strategy {
            TrimBy::MaxLen(n) => n.to_string(),
            TrimBy::MinId(id) => s(id),
        });
        let limit = t.limit.map(|l| [0u64, 1, 2, 5, 100][l as usize % 5]);
        if let Some(l) = limit {
            args.push("LIMIT".into());
            args.push(l.to_string());
        }
        let (pname, policy) = policy_of(t.policy);
        if let Some(p) = pname {
            args.push(p.into());
        }
        if limit.is_some() && !approx {
            return Err(err(
                "ERR syntax error, LIMIT cannot be used without the special ~",
            ));
        }
        Ok(Trim {
            strategy,
            approx,
            limit: self.model.default_trim_limit(approx, limit),
            policy,
        })
    }

    /// Build the command and the model's expected reply.
    pub(crate) fn prepare(&mut self, op: &Op) -> Option<(Vec<String>, Reply)> {
        let now = self.now;
        if !matches!(op, Op::Advance(_) | Op::Sweep) {
            self.model.cron(now);
        }
        match op {
            Op::Xack { .. }
            | Op::Xackdel { .. }
            | Op::Xnack { .. }
            | Op::Create { .. }
            | Op::SetId { .. }
            | Op::Destroy { .. }
            | Op::CreateConsumer { .. }
            | Op::DelConsumer { .. }
            | Op::ReadGroup { .. }
            | Op::Claim { .. }
            | Op::AutoClaim { .. }
            | Op::PendingSummary { .. }
            | Op::PendingExt { .. }
            | Op::InfoGroups { .. }
            | Op::InfoConsumers { .. } => self.prepare_group(op, now),
            _ => self.prepare_stream(op, now),
        }
    }

    pub(crate) fn gid(&self, g: &GId) -> (String, GroupId) {
        match g {
            GId::Dollar => ("$".into(), GroupId::Dollar),
            GId::Zero => ("0".into(), GroupId::Id(MIN)),
            GId::Minus => ("-".into(), GroupId::Minus),
            GId::Plus => ("+".into(), GroupId::Plus),
            GId::Id(sel) => {
                let i = self.id(sel);
                (s(i), GroupId::Id(i))
            }
        }
    }

    pub(crate) fn er(&self, er: Option<u8>, args: &mut Vec<String>) -> i64 {
        match er {
            None => -1,
            Some(e) => {
                let v = [-1i64, 0, 1, 2, 5, 1000][e as usize % 6];
                args.push("ENTRIESREAD".into());
                args.push(v.to_string());
                v
            }
        }
    }

    pub(crate) fn step(&mut self, op: &Op) -> Result<(), String> {
        let Some((args, expected)) = self.prepare(op) else {
            return self.compare_state(matches!(op, Op::Sweep));
        };
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let got = self.store.execute(&refs);
        let short: Vec<String> = args
            .iter()
            .map(|a| {
                if a.len() > 20 {
                    format!("<{} bytes>", a.len())
                } else {
                    a.clone()
                }
            })
            .collect();
        self.log.push(short.join(" "));
        let ok = match (&got, &expected) {
            (Reply::Error(g), Reply::Error(e)) => g.line().starts_with(e.line()),
            (Reply::Map(g), Reply::Map(e)) if args[0] == "XINFO" && args[1] == "STREAM" => {
                let skip = ["radix-tree-nodes", "pids-tracked", "iids-tracked"];
                let g: Vec<_> = g
                    .iter()
                    .filter(|(k, _)| {
                        !skip
                            .iter()
                            .any(|s| *k == Reply::Bulk(s.as_bytes().to_vec()))
                    })
                    .cloned()
                    .collect();
                &g == e
            }
            _ => got == expected,
        };
        if !ok {
            return Err(format!(
                "reply mismatch for `{}`\n  engine: {:?}\n  model:  {:?}",
                short.join(" "),
                got,
                expected
            ));
        }
        if self.check_validate {
            self.store
                .validate()
                .map_err(|e| format!("validate() failed after `{}`: {e}", short.join(" ")))?;
        }
        self.compare_state(false)
    }

    pub(crate) fn compare_state(&self, idmp_contents: bool) -> Result<(), String> {
        for k in KEYS {
            let e = engine_snap(&self.store, k, idmp_contents);
            let m = self
                .model
                .keys
                .get(k.as_bytes())
                .map(|s| model_snap(s, idmp_contents));
            if e != m {
                return Err(format!(
                    "state mismatch on key {k} after `{}`\n  engine: {:#?}\n  model:  {:#?}",
                    self.log.last().cloned().unwrap_or_default(),
                    e,
                    m
                ));
            }
        }
        Ok(())
    }
}
