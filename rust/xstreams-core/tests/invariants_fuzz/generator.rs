//! The command generator of the invariants fuzzer: token pools (keys, groups, IDs,
//! numbers, option words) and `Gen`, which builds valid, mutated and malformed commands.

pub(crate) const KEYS: &[&str] = &[
    "s0", "s0", "s0", "s0", "s0", "s0", "s1", "s1", "s1", "k", "nokey",
];
pub(crate) const GROUPS: &[&str] = &["g1", "g1", "g1", "g1", "g1", "g2", "g2", "g2", "nog"];
pub(crate) const CONSUMERS: &[&str] = &["c1", "c1", "c2", "c3", ""];
/// Valid (if quirky) IDs come first; `IDS[..VALID_IDS]` are accepted by the strict parser
/// or are special tokens some commands take.
pub(crate) const VALID_IDS: usize = 23;
pub(crate) const IDS: &[&str] = &[
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
pub(crate) const NUMS: &[&str] = &[
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
pub(crate) const WORDS: &[&str] = &[
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
pub(crate) const FIELDS: &[&str] = &[
    "a",
    "b",
    "12",
    "-1",
    "f\0x",
    "",
    "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv",
];

/// A byte-driven command builder: every random decision consumes one choice.
pub(crate) struct Gen<'a> {
    pub(crate) choices: &'a [u16],
    pub(crate) pos: usize,
    /// IDs the store actually generated (so that commands hit real entries).
    pub(crate) known: &'a [String],
}

impl Gen<'_> {
    pub(crate) fn pick(&mut self, n: usize) -> usize {
        let c = self.choices[self.pos % self.choices.len()] as usize;
        self.pos += 1;
        c % n
    }
    /// 0..=4 (harmless keyspace commands), rarely 5 (FLUSHALL).
    pub(crate) fn pick_rare_flush(&mut self) -> usize {
        let n = if self.chance(90) { 5 } else { 6 };
        self.pick(n)
    }
    pub(crate) fn chance(&mut self, pct: usize) -> bool {
        self.pick(100) < pct
    }
    pub(crate) fn of(&mut self, pool: &[&str]) -> String {
        pool[self.pick(pool.len())].to_string()
    }
    pub(crate) fn key(&mut self) -> String {
        self.of(KEYS)
    }
    pub(crate) fn group(&mut self) -> String {
        self.of(GROUPS)
    }
    pub(crate) fn consumer(&mut self) -> String {
        self.of(CONSUMERS)
    }
    pub(crate) fn num(&mut self) -> String {
        if self.chance(70) {
            self.pick(6).to_string()
        } else {
            self.of(NUMS)
        }
    }
    pub(crate) fn id(&mut self) -> String {
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
    pub(crate) fn ids(&mut self, args: &mut Vec<String>) {
        let n = 1 + self.pick(3);
        for _ in 0..n {
            let id = self.id();
            args.push(id);
        }
    }
    pub(crate) fn policy(&mut self, args: &mut Vec<String>) {
        match self.pick(5) {
            0 => args.push("KEEPREF".into()),
            1 => args.push("DELREF".into()),
            2 => args.push("ACKED".into()),
            _ => {}
        }
    }
    pub(crate) fn trim(&mut self, args: &mut Vec<String>) {
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
    pub(crate) fn ids_block(&mut self, args: &mut Vec<String>) {
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
    pub(crate) fn fields(&mut self, args: &mut Vec<String>) {
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

    pub(crate) fn command(&mut self) -> Vec<String> {
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
    pub(crate) fn mutate(&mut self, a: &mut Vec<String>) {
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
