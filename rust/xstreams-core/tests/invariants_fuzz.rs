//! Invariant fuzzing: random sequences of valid AND malformed commands (mutated
//! arguments, C-quirk IDs, huge IDs near u64::MAX, several keys/groups/consumers, a
//! pinned clock advancing by random steps, RESP2/RESP3, two databases, BLOCK with short
//! waits) run through the store. After EVERY command:
//!
//! * `store.validate()` must be Ok, and
//! * an independent checker, using only the public API, re-verifies the invariants the
//!   issue names: group PEL == union of consumer PELs + unowned NACKed entries; the time
//!   list visits every pending entry once, the NACK zone is its prefix and holds exactly
//!   the unowned entries (all with delivery time 0), times are sorted outside the zone;
//!   `nacked_count` agrees; delivery counters never exceed i64::MAX; the reference index
//!   matches the PELs; IDMP producers never exceed maxsize and the counters agree; nodes
//!   never hold more than `stream-node-max-entries` entries; XRANGE/XREVRANGE are
//!   consistent with each other, with XLEN and with the stream's first ID.
//! * after an explicit `store.sweep()`, no producer's oldest IID is expired (and, when
//!   no XIDMPRECORD was used, no expired IID remains at all).
//!
//! No command may panic. Cases: `PROPTEST_CASES` (default 3000); sequence length:
//! `XS_MAX_OPS` (default 150).
//!
//! Failing cases are replayable: proptest saves the seed of each failure in
//! `tests/invariants_fuzz.proptest-regressions` (committed; replayed before any new case on every
//! run) and prints the shrunk input. `PROPTEST_RNG_SEED=<u64>` fixes the seed of a whole
//! run (see docs/reliability.md).

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, FileFailurePersistence};
use xstreams_core::db::Keyspace;
use xstreams_core::reply::Reply;
use xstreams_core::store::Step;
use xstreams_core::stream::Stream;
use xstreams_core::{Config, Store, StreamId};

/// Longest action sequence per case: `XS_MAX_OPS` (default 150).
fn max_ops() -> usize {
    std::env::var("XS_MAX_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150usize)
        .max(2)
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

// ------------------------------------------------------------------ token pools

const KEYS: &[&str] = &[
    "s0", "s0", "s0", "s0", "s0", "s0", "s1", "s1", "s1", "k", "nokey",
];
const GROUPS: &[&str] = &["g1", "g1", "g1", "g1", "g1", "g2", "g2", "g2", "nog"];
const CONSUMERS: &[&str] = &["c1", "c1", "c2", "c3", ""];
/// Valid (if quirky) IDs come first; `IDS[..VALID_IDS]` are accepted by the strict parser
/// or are special tokens some commands take.
const VALID_IDS: usize = 23;
const IDS: &[&str] = &[
    "1-1",
    "1-2",
    "2-0",
    "3",
    "0-1",
    "0-0",
    "0",
    "5-5",
    "18446744073709551615-18446744073709551615",
    "18446744073709551615-18446744073709551614",
    "18446744073709551614-18446744073709551615",
    "18446744073709551615",
    "18446744073709551615-0",
    "18446744073709551616-0",
    "1-18446744073709551616",
    "+5-3",
    " 1-1",
    "1--0",
    "1- -1",
    "1--1",
    "01-01",
    "-",
    "+",
    "(1-1",
    "(-",
    "(+",
    "(18446744073709551615-18446744073709551615",
    "(0-0",
    "1-*",
    "*",
    ">",
    "$",
    "1-1\0junk",
    "",
    "abc",
    "1-1-1",
];
const NUMS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "5",
    "10",
    "100",
    "1000",
    "-1",
    "-5",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "abc",
    "1.5",
    "",
    "007",
    "+1",
];
const WORDS: &[&str] = &[
    "MAXLEN",
    "MINID",
    "~",
    "=",
    "LIMIT",
    "KEEPREF",
    "DELREF",
    "ACKED",
    "NOMKSTREAM",
    "IDMP",
    "IDMPAUTO",
    "IDS",
    "COUNT",
    "BLOCK",
    "STREAMS",
    "GROUP",
    "NOACK",
    "CLAIM",
    "IDLE",
    "TIME",
    "RETRYCOUNT",
    "FORCE",
    "JUSTID",
    "LASTID",
    "MKSTREAM",
    "ENTRIESREAD",
    "ENTRIESADDED",
    "MAXDELETEDID",
    "FULL",
    "SILENT",
    "FAIL",
    "FATAL",
    "IDMP-DURATION",
    "IDMP-MAXSIZE",
];
const FIELDS: &[&str] = &[
    "a",
    "b",
    "12",
    "-1",
    "f\0x",
    "",
    "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv",
];

/// A byte-driven command builder: every random decision consumes one choice.
struct Gen<'a> {
    choices: &'a [u16],
    pos: usize,
    /// IDs the store actually generated (so that commands hit real entries).
    known: &'a [String],
}

impl Gen<'_> {
    fn pick(&mut self, n: usize) -> usize {
        let c = self.choices[self.pos % self.choices.len()] as usize;
        self.pos += 1;
        c % n
    }
    /// 0..=4 (harmless keyspace commands), rarely 5 (FLUSHALL).
    fn pick_rare_flush(&mut self) -> usize {
        let n = if self.chance(90) { 5 } else { 6 };
        self.pick(n)
    }
    fn chance(&mut self, pct: usize) -> bool {
        self.pick(100) < pct
    }
    fn of(&mut self, pool: &[&str]) -> String {
        pool[self.pick(pool.len())].to_string()
    }
    fn key(&mut self) -> String {
        self.of(KEYS)
    }
    fn group(&mut self) -> String {
        self.of(GROUPS)
    }
    fn consumer(&mut self) -> String {
        self.of(CONSUMERS)
    }
    fn num(&mut self) -> String {
        if self.chance(70) {
            self.pick(6).to_string()
        } else {
            self.of(NUMS)
        }
    }
    fn id(&mut self) -> String {
        if !self.known.is_empty() && self.chance(60) {
            let k = self.known[self.pick(self.known.len())].clone();
            match self.pick(12) {
                0 => format!("({k}"),
                1 => k.split('-').next().unwrap().to_string(),
                _ => k,
            }
        } else if self.chance(85) {
            IDS[self.pick(VALID_IDS)].to_string()
        } else {
            self.of(IDS)
        }
    }
    fn ids(&mut self, args: &mut Vec<String>) {
        let n = 1 + self.pick(3);
        for _ in 0..n {
            let id = self.id();
            args.push(id);
        }
    }
    fn policy(&mut self, args: &mut Vec<String>) {
        match self.pick(5) {
            0 => args.push("KEEPREF".into()),
            1 => args.push("DELREF".into()),
            2 => args.push("ACKED".into()),
            _ => {}
        }
    }
    fn trim(&mut self, args: &mut Vec<String>) {
        if self.chance(60) {
            args.push("MAXLEN".into());
        } else {
            args.push("MINID".into());
        }
        match self.pick(3) {
            0 => args.push("~".into()),
            1 => args.push("=".into()),
            _ => {}
        }
        if args[args.len() - 1] == "MINID" || (args.len() > 1 && args[args.len() - 2] == "MINID") {
            let id = self.id();
            args.push(id);
        } else {
            let n = self.num();
            args.push(n);
        }
        if self.chance(25) {
            args.push("LIMIT".into());
            let n = self.num();
            args.push(n);
        }
    }
    fn ids_block(&mut self, args: &mut Vec<String>) {
        args.push("IDS".into());
        let n = 1 + self.pick(3);
        let declared = if self.chance(90) {
            n.to_string()
        } else {
            self.num()
        };
        args.push(declared);
        for _ in 0..n {
            let id = self.id();
            args.push(id);
        }
    }
    fn fields(&mut self, args: &mut Vec<String>) {
        let n = 1 + self.pick(3);
        for _ in 0..n {
            let f = self.of(FIELDS);
            args.push(f);
            let v = if self.chance(50) {
                self.num()
            } else {
                self.of(FIELDS)
            };
            args.push(v);
        }
    }

    fn command(&mut self) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        let w = |s: &str| s.to_string();
        match self.pick(40) {
            0..=7 => {
                a.extend([w("XADD"), self.key()]);
                if self.chance(5) {
                    a.push(w("NOMKSTREAM"));
                }
                self.policy(&mut a);
                if self.chance(15) {
                    if self.chance(50) {
                        a.extend([
                            w("IDMP"),
                            format!("p{}", self.pick(2)),
                            format!("i{}", self.pick(6)),
                        ]);
                    } else {
                        a.extend([w("IDMPAUTO"), format!("p{}", self.pick(2))]);
                    }
                }
                if self.chance(25) {
                    self.trim(&mut a);
                }
                if self.chance(60) {
                    a.push(w("*"));
                } else {
                    let id = self.id();
                    a.push(id);
                }
                self.fields(&mut a);
            }
            8 => {
                a.extend([w("XTRIM"), self.key()]);
                self.trim(&mut a);
                self.policy(&mut a);
            }
            9 => {
                a.extend([w("XDEL"), self.key()]);
                self.ids(&mut a);
            }
            10 => {
                a.extend([w("XDELEX"), self.key()]);
                self.policy(&mut a);
                self.ids_block(&mut a);
            }
            11 => {
                a.extend([w("XACK"), self.key(), self.group()]);
                self.ids(&mut a);
            }
            12 => {
                a.extend([w("XACKDEL"), self.key(), self.group()]);
                self.policy(&mut a);
                self.ids_block(&mut a);
            }
            13 | 14 => {
                let mode = ["SILENT", "FAIL", "FATAL", "BOGUS"][self.pick(4)];
                a.extend([w("XNACK"), self.key(), self.group(), w(mode)]);
                self.ids_block(&mut a);
                if self.chance(30) {
                    a.push(w("RETRYCOUNT"));
                    let n = self.num();
                    a.push(n);
                }
                if self.chance(40) {
                    a.push(w("FORCE"));
                }
            }
            15 | 16 => {
                a.extend([w("XGROUP"), w("CREATE"), self.key(), self.group()]);
                let id = if self.chance(40) { w("$") } else { self.id() };
                a.push(id);
                if self.chance(50) {
                    a.push(w("MKSTREAM"));
                }
                if self.chance(20) {
                    a.push(w("ENTRIESREAD"));
                    let n = self.num();
                    a.push(n);
                }
            }
            17 => {
                a.extend([w("XGROUP"), w("SETID"), self.key(), self.group()]);
                let id = if self.chance(30) { w("$") } else { self.id() };
                a.push(id);
                if self.chance(30) {
                    a.push(w("ENTRIESREAD"));
                    let n = self.num();
                    a.push(n);
                }
            }
            18 => {
                let sub = ["DESTROY", "CREATECONSUMER", "DELCONSUMER", "HELP"][self.pick(4)];
                a.extend([w("XGROUP"), w(sub)]);
                if sub != "HELP" {
                    a.extend([self.key(), self.group()]);
                    if sub != "DESTROY" {
                        a.push(self.consumer());
                    }
                }
            }
            19..=23 => {
                a.extend([w("XREADGROUP"), w("GROUP"), self.group(), self.consumer()]);
                if self.chance(50) {
                    a.push(w("COUNT"));
                    let n = self.num();
                    a.push(n);
                }
                if self.chance(35) {
                    a.push(w("CLAIM"));
                    let n = if self.chance(80) {
                        ["0", "1", "10", "100", "1000", "60000"][self.pick(6)].to_string()
                    } else {
                        self.num()
                    };
                    a.push(n);
                }
                if self.chance(15) {
                    a.push(w("NOACK"));
                }
                if self.chance(10) {
                    a.extend([w("BLOCK"), w(["0", "1", "5"][self.pick(3)])]);
                }
                a.push(w("STREAMS"));
                let n = 1 + self.pick(2);
                let keys: Vec<String> = (0..n).map(|_| self.key()).collect();
                a.extend(keys);
                for _ in 0..n {
                    let id = if self.chance(70) { w(">") } else { self.id() };
                    a.push(id);
                }
            }
            24 => {
                a.push(w("XREAD"));
                if self.chance(50) {
                    a.push(w("COUNT"));
                    let n = self.num();
                    a.push(n);
                }
                if self.chance(10) {
                    a.extend([w("BLOCK"), w(["0", "1"][self.pick(2)])]);
                }
                a.push(w("STREAMS"));
                let n = 1 + self.pick(2);
                let keys: Vec<String> = (0..n).map(|_| self.key()).collect();
                a.extend(keys);
                for _ in 0..n {
                    let id = if self.chance(40) {
                        w(["$", "+"][self.pick(2)])
                    } else {
                        self.id()
                    };
                    a.push(id);
                }
            }
            25 | 26 => {
                a.extend([w("XCLAIM"), self.key(), self.group(), self.consumer()]);
                let n = if self.chance(70) {
                    w(["0", "1", "100", "5000"][self.pick(4)])
                } else {
                    self.num()
                };
                a.push(n);
                self.ids(&mut a);
                for _ in 0..self.pick(3) {
                    match self.pick(6) {
                        0 => {
                            a.push(w("IDLE"));
                            let n = self.num();
                            a.push(n);
                        }
                        1 => {
                            a.push(w("TIME"));
                            let n = self.num();
                            a.push(n);
                        }
                        2 => {
                            a.push(w("RETRYCOUNT"));
                            let n = self.num();
                            a.push(n);
                        }
                        3 => a.push(w("FORCE")),
                        4 => a.push(w("JUSTID")),
                        _ => {
                            a.push(w("LASTID"));
                            let id = self.id();
                            a.push(id);
                        }
                    }
                }
            }
            27 | 28 => {
                a.extend([w("XAUTOCLAIM"), self.key(), self.group(), self.consumer()]);
                let n = if self.chance(70) {
                    w(["0", "1", "100"][self.pick(3)])
                } else {
                    self.num()
                };
                a.push(n);
                let id = if self.chance(40) { w("-") } else { self.id() };
                a.push(id);
                if self.chance(50) {
                    a.push(w("COUNT"));
                    let n = self.num();
                    a.push(n);
                }
                if self.chance(30) {
                    a.push(w("JUSTID"));
                }
            }
            29 | 30 => {
                a.extend([w("XPENDING"), self.key(), self.group()]);
                if self.chance(70) {
                    if self.chance(30) {
                        a.push(w("IDLE"));
                        let n = self.num();
                        a.push(n);
                    }
                    let s = if self.chance(50) { w("-") } else { self.id() };
                    let e = if self.chance(50) { w("+") } else { self.id() };
                    let n = self.num();
                    a.extend([s, e, n]);
                    if self.chance(40) {
                        a.push(self.consumer());
                    }
                }
            }
            31 => {
                a.push(w(if self.chance(50) {
                    "XRANGE"
                } else {
                    "XREVRANGE"
                }));
                a.push(self.key());
                let s = if self.chance(30) { w("-") } else { self.id() };
                let e = if self.chance(30) { w("+") } else { self.id() };
                a.extend([s, e]);
                if self.chance(30) {
                    a.push(w("COUNT"));
                    let n = self.num();
                    a.push(n);
                }
            }
            32 => match self.pick(4) {
                0 => a.extend([w("XINFO"), w("GROUPS"), self.key()]),
                1 => a.extend([w("XINFO"), w("CONSUMERS"), self.key(), self.group()]),
                2 => a.extend([w("XINFO"), w("STREAM"), self.key()]),
                _ => {
                    a.extend([w("XINFO"), w("STREAM"), self.key(), w("FULL")]);
                    if self.chance(50) {
                        a.push(w("COUNT"));
                        let n = self.num();
                        a.push(n);
                    }
                }
            },
            33 => {
                a.extend([w("XSETID"), self.key()]);
                let id = self.id();
                a.push(id);
                if self.chance(30) {
                    a.push(w("ENTRIESADDED"));
                    let n = self.num();
                    a.push(n);
                }
                if self.chance(30) {
                    a.push(w("MAXDELETEDID"));
                    let id = self.id();
                    a.push(id);
                }
            }
            34 => {
                a.extend([w("XCFGSET"), self.key()]);
                if self.chance(60) {
                    a.push(w("IDMP-DURATION"));
                    a.push(w(["1", "2", "100", "0", "86401"][self.pick(5)]));
                }
                if self.chance(60) {
                    a.push(w("IDMP-MAXSIZE"));
                    a.push(w(["1", "2", "3", "0", "10001"][self.pick(5)]));
                }
            }
            35 => {
                a.extend([
                    w("XIDMPRECORD"),
                    self.key(),
                    format!("p{}", self.pick(2)),
                    format!("i{}", self.pick(6)),
                ]);
                let id = self.id();
                a.push(id);
            }
            36 => {
                let c = [
                    "DEL", "EXISTS", "TYPE", "XLEN", "GET", "EXISTS", "TYPE", "XLEN",
                ][self.pick(8)];
                a.extend([w(c), self.key()]);
            }
            37 => {
                let k = if self.chance(97) { w("k") } else { self.key() };
                a.extend([w("SET"), k, w("v")]);
            }
            38 => match self.pick_rare_flush() {
                0 => a.extend([w("KEYS"), w("*")]),
                1 => a.extend([w("SCAN"), w("0")]),
                2 => a.push(w("DBSIZE")),
                3 => a.push(w("PING")),
                4 => a.extend([w("XINFO"), w("HELP")]),
                _ => a.push(w("FLUSHALL")),
            },
            _ => {
                // Pure garbage built from keywords.
                let n = 1 + self.pick(6);
                let name = [
                    "XADD",
                    "XREADGROUP",
                    "XCLAIM",
                    "XNACK",
                    "XGROUP",
                    "XPENDING",
                    "XTRIM",
                ][self.pick(7)];
                a.push(w(name));
                for _ in 0..n {
                    let t = match self.pick(4) {
                        0 => self.of(WORDS),
                        1 => self.id(),
                        2 => self.num(),
                        _ => self.key(),
                    };
                    a.push(t);
                }
            }
        }
        a
    }

    /// Damage a well-formed command: replace, drop, duplicate or insert one argument.
    fn mutate(&mut self, a: &mut Vec<String>) {
        if a.len() < 2 {
            return;
        }
        let i = 1 + self.pick(a.len() - 1);
        let tok = match self.pick(4) {
            0 => self.of(WORDS),
            1 => self.id(),
            2 => self.num(),
            _ => self.key(),
        };
        match self.pick(4) {
            0 => a[i] = tok,
            1 => {
                a.remove(i);
            }
            2 => {
                let d = a[i].clone();
                a.insert(i, d);
            }
            _ => a.insert(i, tok),
        }
    }
}

// ------------------------------------------------------------------ the checker

fn check_stream(s: &Stream, cfg: &Config, where_: &str) -> Result<(), String> {
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

fn check_all(ks: &Keyspace) -> Result<(), String> {
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

fn check_after_sweep(ks: &Keyspace, now: i64, strict: bool) -> Result<(), String> {
    for db in &ks.dbs {
        for (k, s) in db.streams() {
            // redis-server's threshold is unsigned: `server.mstime - duration*1000`.
            let threshold = (now as u64).wrapping_sub(s.idmp.duration.wrapping_mul(1000));
            for (pid, p) in s.idmp.producers() {
                // An empty producer can survive: redis-server creates the producer before
                // the lookup, and an XADD that then fails (exhausted stream) leaves it on a
                // key the cron does not track. So only expired IIDs are checked.
                let _ = pid;
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

// ------------------------------------------------------------------ driver

#[derive(Clone, Debug)]
enum Action {
    Cmd {
        choices: Vec<u16>,
        mutate: bool,
        resp3: bool,
        db1: bool,
    },
    Advance(u8),
    Sweep,
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        20 => (
            prop::collection::vec(any::<u16>(), 24),
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.05),
        )
            .prop_map(|(choices, mutate, resp3, db1)| Action::Cmd { choices, mutate, resp3, db1 }),
        3 => (0u8..7).prop_map(Action::Advance),
        1 => Just(Action::Sweep),
    ]
}

fn run(cfg: Config, start: i64, actions: &[Action]) -> Result<(), String> {
    let store = Store::new(cfg.clone());
    store.set_clock(Some(start));
    let mut now = start;
    let mut known: Vec<String> = Vec::new();
    let mut log: Vec<String> = Vec::new();
    let mut used_record = false;
    let prelude: &[&[&str]] = &[
        &["XGROUP", "CREATE", "s0", "g1", "$", "MKSTREAM"],
        &["XGROUP", "CREATE", "s0", "g2", "0"],
        &["XGROUP", "CREATE", "s1", "g1", "$", "MKSTREAM"],
        &["XGROUP", "CREATE", "s1", "g2", "0"],
    ];
    for p in prelude {
        let refs: Vec<&[u8]> = p.iter().map(|a| a.as_bytes()).collect();
        store.execute(&refs);
        log.push(format!("{p:?}"));
    }
    for a in actions {
        match a {
            Action::Advance(i) => {
                let d = [0i64, 1, 10, 100, 1000, 60_000, 200_000][*i as usize % 7];
                now += d;
                store.advance_clock(d);
                log.push(format!("<advance {d}>"));
            }
            Action::Sweep => {
                store.sweep();
                log.push("<sweep>".into());
                store
                    .with_keyspace(|ks| check_after_sweep(ks, now, !used_record))
                    .map_err(|e| format!("{e}\n{}", log.join("\n")))?;
            }
            Action::Cmd {
                choices,
                mutate,
                resp3,
                db1,
            } => {
                let mut g = Gen {
                    choices,
                    pos: 0,
                    known: &known,
                };
                let mut args = g.command();
                if *mutate {
                    g.mutate(&mut args);
                }
                if args[0] == "XIDMPRECORD" {
                    used_record = true;
                }
                let db = usize::from(*db1);
                let proto = if *resp3 { 3 } else { 2 };
                log.push(format!("[db{db} resp{proto}] {args:?}"));
                let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
                let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match store
                    .start(db, proto, &refs)
                {
                    Step::Done(r) => r,
                    Step::Blocked(call) => match store.wait(call, Some(Duration::from_millis(3))) {
                        Step::Done(r) => r,
                        Step::Blocked(call) => {
                            store.cancel(call);
                            Reply::NilArray
                        }
                    },
                }))
                .map_err(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    format!("PANIC: {msg}\n{}", log.join("\n"))
                })?;
                if args[0] == "XADD" {
                    if let Reply::Bulk(b) = &reply {
                        let s = String::from_utf8_lossy(b).into_owned();
                        if !known.contains(&s) {
                            known.push(s);
                        }
                    }
                }
                store
                    .validate()
                    .map_err(|e| format!("validate(): {e}\n{}", log.join("\n")))?;
                store
                    .with_keyspace(|ks| check_all(ks))
                    .map_err(|e| format!("checker: {e}\n{}", log.join("\n")))?;
            }
        }
    }
    Ok(())
}

fn cfg_strategy() -> impl Strategy<Value = Config> {
    (
        prop_oneof![Just(0i64), Just(1), Just(2), Just(3), Just(100)],
        prop_oneof![Just(0u64), Just(1), Just(50), Just(4096)],
        prop_oneof![Just(1i64), Just(100)],
        prop_oneof![Just(1i64), Just(2), Just(100)],
    )
        .prop_map(|(e, b, d, m)| Config {
            stream_node_max_entries: e,
            stream_node_max_bytes: b,
            stream_idmp_duration: d,
            stream_idmp_maxsize: m,
            ..Config::default()
        })
}

proptest! {
    #![proptest_config(PtConfig {
        cases: cases(3000),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        max_shrink_iters: 20_000,
        ..PtConfig::default()
    })]

    #[test]
    fn invariants_hold_after_every_command(
        cfg in cfg_strategy(),
        start in prop_oneof![Just(1_700_000_000_000i64), Just(100_000_000i64)],
        actions in prop::collection::vec(action(), 1..max_ops()),
    ) {
        if let Err(e) = run(cfg, start, &actions) {
            return Err(TestCaseError::fail(e));
        }
    }
}

#[test]
#[ignore = "debug helper: prints statistics about generated commands"]
fn fuzz_stats() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::default();
    let mut hist: std::collections::BTreeMap<String, (u32, u32)> = Default::default();
    let mut errs: std::collections::BTreeMap<String, u32> = Default::default();
    for _ in 0..40 {
        let actions = prop::collection::vec(action(), 100..150)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let store = Store::new(Config::default());
        store.set_clock(Some(1_700_000_000_000));
        for p in [
            ["XGROUP", "CREATE", "s0", "g1", "$", "MKSTREAM"],
            ["XGROUP", "CREATE", "s0", "g2", "0", "MKSTREAM"],
        ] {
            let refs: Vec<&[u8]> = p.iter().map(|a| a.as_bytes()).collect();
            store.execute(&refs);
        }
        let mut known: Vec<String> = vec![];
        for a in &actions {
            if let Action::Cmd {
                choices, mutate, ..
            } = a
            {
                let mut g = Gen {
                    choices,
                    pos: 0,
                    known: &known,
                };
                let mut args = g.command();
                if *mutate {
                    g.mutate(&mut args);
                }
                if args.iter().any(|a| a == "BLOCK") {
                    continue;
                }
                let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
                let r = store.execute(&refs);
                if let (true, Reply::Bulk(b)) = (args[0] == "XADD", &r) {
                    known.push(String::from_utf8_lossy(b).into());
                }
                let name = if args[0] == "XGROUP" || args[0] == "XINFO" {
                    format!("{} {}", args[0], args.get(1).cloned().unwrap_or_default())
                } else {
                    args[0].clone()
                };
                let e = hist.entry(name).or_default();
                e.0 += 1;
                if let Reply::Error(m) = &r {
                    e.1 += 1;
                    *errs
                        .entry(format!(
                            "{} :: {}",
                            args[0],
                            m.chars().take(50).collect::<String>()
                        ))
                        .or_default() += 1;
                }
            }
        }
    }
    for (k, (n, e)) in hist {
        println!("{k:28} {n:5} errors {e:5}");
    }
    for (k, n) in errs {
        println!("{n:5} {k}");
    }
}
