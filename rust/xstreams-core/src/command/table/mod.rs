//! The one command table: every command the engine and the server know, with everything
//! a command has — name, arity, flags, key positions (legacy first/last/step and key
//! specifications), ACL categories, tips, the documentation `COMMAND DOCS` returns, and
//! what runs it — and the one resolver over it.
//!
//! A row's [`Run`] says who executes it: an engine [`Handler`] (run by
//! [`crate::command::execute`]), a [`ServerCmd`] (a connection-level command that only
//! the RESP server can run: AUTH, CLIENT, MULTI, ...; the embedded store answers it as an
//! unknown command), or nothing (a container whose subcommands run).
//!
//! Adding a command is one row in one of the row modules ([`streams`], [`keyspace`],
//! [`server`]) and one handler; the row also says how the fuzz generator, the replay
//! reader and the Python client treat the command ([`lists`]). The rows are data only; this module holds the types, the
//! index and the resolution rules (redis-server's unknown-command, unknown-subcommand and
//! arity errors).

mod keyspace;
mod lists;
mod server;
mod streams;

pub use lists::{
    fuzz_commands, log_effect, native_client_commands, Client, Lists, Log, NativeReply,
};
use lists::{fuzzed, lists, logs, served};

use std::sync::OnceLock;

use super::Handler;
use crate::error::CmdError;

/// Command flags (redis-server's `CMD_*` flags), a bit set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Flags(u32);

impl Flags {
    pub const WRITE: Flags = Flags(1);
    pub const READONLY: Flags = Flags(1 << 1);
    pub const DENYOOM: Flags = Flags(1 << 2);
    pub const ADMIN: Flags = Flags(1 << 3);
    pub const NOSCRIPT: Flags = Flags(1 << 4);
    pub const BLOCKING: Flags = Flags(1 << 5);
    pub const LOADING: Flags = Flags(1 << 6);
    pub const STALE: Flags = Flags(1 << 7);
    pub const SKIP_SLOWLOG: Flags = Flags(1 << 8);
    pub const FAST: Flags = Flags(1 << 9);
    pub const NO_AUTH: Flags = Flags(1 << 10);
    pub const NO_ASYNC_LOADING: Flags = Flags(1 << 11);
    pub const NO_MULTI: Flags = Flags(1 << 12);
    pub const MOVABLEKEYS: Flags = Flags(1 << 13);
    pub const ALLOW_BUSY: Flags = Flags(1 << 14);
    /// Not listed by `COMMAND INFO` (redis-server does not report it either).
    pub const PROTECTED: Flags = Flags(1 << 15);

    /// The union of `list`.
    pub const fn of(list: &[Flags]) -> Flags {
        let mut bits = 0;
        let mut i = 0;
        while i < list.len() {
            bits |= list[i].0;
            i += 1;
        }
        Flags(bits)
    }

    /// Are all flags of `f` set?
    pub const fn has(self, f: Flags) -> bool {
        self.0 & f.0 == f.0
    }
}

/// Flag names as `COMMAND INFO` lists them, in redis-server's order.
pub const FLAG_NAMES: &[(Flags, &str)] = &[
    (Flags::WRITE, "write"),
    (Flags::READONLY, "readonly"),
    (Flags::DENYOOM, "denyoom"),
    (Flags::ADMIN, "admin"),
    (Flags::NOSCRIPT, "noscript"),
    (Flags::BLOCKING, "blocking"),
    (Flags::LOADING, "loading"),
    (Flags::STALE, "stale"),
    (Flags::SKIP_SLOWLOG, "skip_slowlog"),
    (Flags::FAST, "fast"),
    (Flags::NO_AUTH, "no_auth"),
    (Flags::NO_ASYNC_LOADING, "no_async_loading"),
    (Flags::NO_MULTI, "no_multi"),
    (Flags::MOVABLEKEYS, "movablekeys"),
    (Flags::ALLOW_BUSY, "allow_busy"),
];

/// A connection-level command: in the table (so `COMMAND` lists it and resolution is
/// one), executed by the RESP server only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerCmd {
    Auth,
    Hello,
    Quit,
    Reset,
    Select,
    Client,
    Multi,
    Exec,
    Discard,
    Watch,
    Unwatch,
    Shutdown,
    Command,
    Info,
    Config,
    Debug,
    Function,
    Script,
    Save,
    BgSave,
    BgRewriteAof,
    LastSave,
    Role,
}

/// What executes a command.
#[derive(Clone, Copy)]
pub enum Run {
    /// An engine command.
    Engine(Handler),
    /// A connection-level command of the server.
    Server(ServerCmd),
    /// A command both run: the embedded store with the engine handler, the server with
    /// its own fuller answer (INFO's connections, CONFIG's server parameters).
    Shared(Handler, ServerCmd),
    /// A container: its subcommands run.
    Container,
}

/// Where a key specification starts searching.
#[derive(Clone, Copy, Debug)]
pub enum Begin {
    Index(i64),
    Keyword(&'static str, i64),
}

/// A key specification (begin search + a `range` find-keys step).
#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    /// Upper-case key-spec flags (`RW`, `UPDATE`, ...).
    pub flags: &'static [&'static str],
    pub begin: Begin,
    pub lastkey: i64,
    pub keystep: i64,
    pub limit: i64,
}

/// The documentation `COMMAND DOCS` returns.
#[derive(Clone, Copy, Debug)]
pub struct Doc {
    pub summary: &'static str,
    pub since: &'static str,
    pub group: &'static str,
    /// Upper-case doc flags (`DEPRECATED`, `SYSCMD`).
    pub flags: &'static [&'static str],
    /// The version that deprecated the command (empty when it is not deprecated).
    pub deprecated_since: &'static str,
}

/// A command or subcommand.
pub struct CommandSpec {
    /// Lower-case name (`xadd`, or `create` for `xgroup|create`).
    pub name: &'static str,
    /// Redis arity: `n` exactly n arguments, `-n` at least n (name included).
    pub arity: i32,
    pub flags: Flags,
    /// Declared ACL categories, upper case (the implied ones: [`CommandSpec::acl_categories`]).
    pub acl: &'static [&'static str],
    /// Command tips, upper case.
    pub tips: &'static [&'static str],
    pub keys: &'static [KeySpec],
    /// Legacy (first key, last key, step).
    pub range: (i32, i32, i32),
    pub doc: Doc,
    pub run: Run,
    pub subcommands: &'static [CommandSpec],
    /// The row's entries in the lists derived from the table (fuzzing, log replay, the
    /// Python client).
    pub lists: Lists,
}

/// ACL categories in redis-server's order.
const ACL_ORDER: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

impl CommandSpec {
    /// The engine handler, if the engine runs this command.
    pub fn handler(&self) -> Option<Handler> {
        match self.run {
            Run::Engine(h) | Run::Shared(h, _) => Some(h),
            _ => None,
        }
    }

    /// The server command, if the server runs this command.
    pub fn server_cmd(&self) -> Option<ServerCmd> {
        match self.run {
            Run::Server(s) | Run::Shared(_, s) => Some(s),
            _ => None,
        }
    }

    /// Can a caller of `scope` run this command (the embedded engine does not know the
    /// server's connection-level commands)?
    pub fn runs_in(&self, scope: Scope) -> bool {
        scope == Scope::Server || !matches!(self.run, Run::Server(_))
    }

    /// Does `argc` (name included) satisfy the arity?
    pub fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i32;
        let a = self.arity;
        !((a > 0 && a != argc) || argc < -a)
    }

    /// A subcommand by name (case-insensitive).
    pub fn sub(&self, name: &[u8]) -> Option<&'static CommandSpec> {
        self.subcommands
            .iter()
            .find(|c| c.name.as_bytes().eq_ignore_ascii_case(name))
    }

    /// ACL categories including the ones implied by the flags (as redis-server computes
    /// them), lower case, in redis-server's order.
    pub fn acl_categories(&self) -> Vec<&'static str> {
        let mut have: Vec<String> = self.acl.iter().map(|a| a.to_ascii_lowercase()).collect();
        let scripting = have.iter().any(|a| a == "scripting");
        let f = self.flags;
        if f.has(Flags::WRITE) {
            have.push("write".into());
        }
        if f.has(Flags::READONLY) && !scripting {
            have.push("read".into());
        }
        if f.has(Flags::ADMIN) {
            have.push("admin".into());
            have.push("dangerous".into());
        }
        if f.has(Flags::FAST) {
            have.push("fast".into());
        }
        if f.has(Flags::BLOCKING) {
            have.push("blocking".into());
        }
        if !have.iter().any(|a| a == "fast") {
            have.push("slow".into());
        }
        ACL_ORDER
            .iter()
            .copied()
            .filter(|a| have.iter().any(|h| h == a))
            .collect()
    }

    /// Keys of a command according to its key specifications (COMMAND GETKEYS, and the
    /// keys a blocked command waits on).
    pub fn keys_of<'a, A: AsRef<[u8]>>(&self, args: &'a [A]) -> Vec<&'a [u8]> {
        let mut out = Vec::new();
        let argc = args.len() as i64;
        for k in self.keys {
            let start = match k.begin {
                Begin::Index(pos) => pos,
                Begin::Keyword(kw, from) => {
                    let found = (from..argc).find(|&i| {
                        args[i as usize]
                            .as_ref()
                            .eq_ignore_ascii_case(kw.as_bytes())
                    });
                    match found {
                        Some(i) => i + 1,
                        None => continue,
                    }
                }
            };
            let last = if k.lastkey >= 0 {
                start + k.lastkey
            } else if k.limit > 1 {
                start + (argc - start) / k.limit - 1
            } else {
                argc + k.lastkey
            };
            let mut i = start;
            while i <= last && i < argc {
                out.push(args[i as usize].as_ref());
                i += k.keystep.max(1);
            }
        }
        out
    }
}

/// Every top-level command: the engine's stream and keyspace commands, then the
/// server's connection-level commands.
pub fn commands() -> &'static [&'static CommandSpec] {
    &index().all
}

struct Index {
    all: Vec<&'static CommandSpec>,
    /// Lower-case name -> position in `all`.
    by_name: hashbrown::HashMap<&'static str, usize>,
    /// Position in `all` -> slot of the command (its subcommands follow).
    first_slot: Vec<usize>,
    /// Slot -> full name (`xadd`, `xgroup|create`).
    names: Vec<String>,
}

fn index() -> &'static Index {
    static I: OnceLock<Index> = OnceLock::new();
    I.get_or_init(|| {
        let all: Vec<&'static CommandSpec> = streams::ROWS
            .iter()
            .chain(keyspace::ROWS.iter())
            .chain(server::ROWS.iter())
            .collect();
        let mut by_name = hashbrown::HashMap::new();
        let mut first_slot = Vec::new();
        let mut names = Vec::new();
        for (i, c) in all.iter().enumerate() {
            let dup = by_name.insert(c.name, i);
            assert!(dup.is_none(), "command {} twice in the table", c.name);
            first_slot.push(names.len());
            names.push(c.name.to_string());
            for s in c.subcommands {
                names.push(format!("{}|{}", c.name, s.name));
            }
        }
        Index {
            all,
            by_name,
            first_slot,
            names,
        }
    })
}

/// Number of slots: one per command and subcommand (the server's statistics index).
pub fn slot_count() -> usize {
    index().names.len()
}

/// Full name of a slot (`xgroup|create`).
pub fn slot_name(slot: usize) -> &'static str {
    &index().names[slot]
}

fn position(name: &[u8]) -> Option<usize> {
    let mut buf = [0u8; 32];
    let out = buf.get_mut(..name.len())?;
    out.copy_from_slice(name);
    out.make_ascii_lowercase();
    let s = std::str::from_utf8(out).ok()?;
    index().by_name.get(s).copied()
}

/// A top-level command by name (case-insensitive).
pub fn lookup(name: &[u8]) -> Option<&'static CommandSpec> {
    position(name).map(|i| index().all[i])
}

/// A command or subcommand by full name (`xgroup|create`, case-insensitive), with its
/// full name in lower case.
pub fn lookup_fullname(name: &[u8]) -> Option<(&'static CommandSpec, String)> {
    let s = std::str::from_utf8(name).ok()?.to_ascii_lowercase();
    let mut parts = s.splitn(2, '|');
    let base = lookup(parts.next()?.as_bytes())?;
    match parts.next() {
        None => Some((base, base.name.to_string())),
        Some(sub) => {
            let sub = base.subcommands.iter().find(|c| c.name == sub)?;
            Some((sub, format!("{}|{}", base.name, sub.name)))
        }
    }
}

/// A resolved command: its spec, its parent's for a subcommand, and its slot.
#[derive(Clone, Copy)]
pub struct Resolved {
    pub spec: &'static CommandSpec,
    pub parent: Option<&'static CommandSpec>,
    pub slot: usize,
}

impl Resolved {
    /// The full name (`xgroup|create`).
    pub fn fullname(&self) -> &'static str {
        slot_name(self.slot)
    }
}

/// Why a command could not be resolved: redis-server's error, and the slot of the
/// command when it was found but its arity is wrong (it counts as rejected).
#[derive(Debug)]
pub struct Unresolved {
    pub slot: Option<usize>,
    pub error: CmdError,
}

/// Which rows a caller can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The embedded engine: server rows are unknown commands.
    Engine,
    /// The RESP server: every row.
    Server,
}

/// Resolve `args` as redis-server does (unknown command, unknown subcommand, arity).
pub fn resolve<A: AsRef<[u8]>>(args: &[A], scope: Scope) -> Result<Resolved, Unresolved> {
    let unknown = || {
        let rest: Vec<&[u8]> = args[1..].iter().map(|a| a.as_ref()).collect();
        Unresolved {
            slot: None,
            error: CmdError::unknown_command(args[0].as_ref(), &rest),
        }
    };
    let Some(first) = args.first() else {
        return Err(Unresolved {
            slot: None,
            error: CmdError::err("empty command"),
        });
    };
    let Some(pos) = position(first.as_ref()) else {
        return Err(unknown());
    };
    let ix = index();
    let base = ix.all[pos];
    if !base.runs_in(scope) {
        return Err(unknown());
    }
    let first_slot = ix.first_slot[pos];
    let resolved = if base.subcommands.is_empty() || args.len() == 1 {
        Resolved {
            spec: base,
            parent: None,
            slot: first_slot,
        }
    } else {
        let sub = args[1].as_ref();
        match base
            .subcommands
            .iter()
            .position(|c| c.name.as_bytes().eq_ignore_ascii_case(sub))
        {
            Some(i) => Resolved {
                spec: &base.subcommands[i],
                parent: Some(base),
                slot: first_slot + 1 + i,
            },
            None => {
                return Err(Unresolved {
                    slot: None,
                    error: CmdError::unknown_subcommand(sub, &base.name.to_ascii_uppercase()),
                })
            }
        }
    };
    if !resolved.spec.arity_ok(args.len()) {
        return Err(Unresolved {
            slot: Some(resolved.slot),
            error: CmdError::arity(resolved.fullname()),
        });
    }
    Ok(resolved)
}

// Row builders, shared by the row modules.

/// A command row without keys, tips or doc flags; `run` is set by [`engine`]/[`srv`].
pub(crate) const fn m(
    name: &'static str,
    arity: i32,
    flags: &[Flags],
    acl: &'static [&'static str],
    group: &'static str,
    since: &'static str,
    summary: &'static str,
) -> CommandSpec {
    CommandSpec {
        name,
        arity,
        flags: Flags::of(flags),
        acl,
        tips: &[],
        keys: &[],
        range: (0, 0, 0),
        doc: Doc {
            summary,
            since,
            group,
            flags: &[],
            deprecated_since: "",
        },
        run: Run::Container,
        subcommands: &[],
        lists: Lists::UNDECLARED,
    }
}

/// A container of subcommands.
pub(crate) const fn container(
    name: &'static str,
    group: &'static str,
    since: &'static str,
    summary: &'static str,
    subs: &'static [CommandSpec],
) -> CommandSpec {
    let mut c = m(name, -2, &[], &[], group, since, summary);
    c.subcommands = subs;
    c
}

pub(crate) const fn engine(mut c: CommandSpec, h: Handler) -> CommandSpec {
    c.run = Run::Engine(h);
    c
}

pub(crate) const fn srv(mut c: CommandSpec, s: ServerCmd) -> CommandSpec {
    c.run = Run::Server(s);
    c
}

pub(crate) const fn shared(mut c: CommandSpec, h: Handler, s: ServerCmd) -> CommandSpec {
    c.run = Run::Shared(h, s);
    c
}

pub(crate) const fn with_keys(
    mut c: CommandSpec,
    keys: &'static [KeySpec],
    range: (i32, i32, i32),
) -> CommandSpec {
    c.keys = keys;
    c.range = range;
    c
}

pub(crate) const fn tips(mut c: CommandSpec, tips: &'static [&'static str]) -> CommandSpec {
    c.tips = tips;
    c
}

pub(crate) const fn doc_flags(mut c: CommandSpec, f: &'static [&'static str]) -> CommandSpec {
    c.doc.flags = f;
    c
}

/// A deprecated command: the `DEPRECATED` doc flag and the version that deprecated it.
pub(crate) const fn deprecated(mut c: CommandSpec, since: &'static str) -> CommandSpec {
    c.doc.flags = &["DEPRECATED"];
    c.doc.deprecated_since = since;
    c
}

pub(crate) const fn subs(mut c: CommandSpec, subs: &'static [CommandSpec]) -> CommandSpec {
    c.subcommands = subs;
    c
}

/// A key specification at a fixed index.
pub(crate) const fn ks1(flags: &'static [&'static str], pos: i64) -> KeySpec {
    KeySpec {
        flags,
        begin: Begin::Index(pos),
        lastkey: 0,
        keystep: 1,
        limit: 0,
    }
}

pub(crate) const ND: &[&str] = &["NONDETERMINISTIC_OUTPUT"];
pub(crate) const ST: &[&str] = &["STREAM"];
pub(crate) const KS: &[&str] = &["KEYSPACE"];
pub(crate) const CONN: &[&str] = &["CONNECTION"];
pub(crate) const RO_ACCESS: &[KeySpec] = &[ks1(&["RO", "ACCESS"], 1)];
pub(crate) const RO: &[KeySpec] = &[ks1(&["RO"], 1)];

/// Short flag names for the rows.
pub(crate) mod f {
    use super::Flags;
    pub const WRITE: Flags = Flags::WRITE;
    pub const READONLY: Flags = Flags::READONLY;
    pub const DENYOOM: Flags = Flags::DENYOOM;
    pub const ADMIN: Flags = Flags::ADMIN;
    pub const NOSCRIPT: Flags = Flags::NOSCRIPT;
    pub const BLOCKING: Flags = Flags::BLOCKING;
    pub const LOADING: Flags = Flags::LOADING;
    pub const STALE: Flags = Flags::STALE;
    pub const SKIP_SLOWLOG: Flags = Flags::SKIP_SLOWLOG;
    pub const FAST: Flags = Flags::FAST;
    pub const NO_AUTH: Flags = Flags::NO_AUTH;
    pub const NO_ASYNC_LOADING: Flags = Flags::NO_ASYNC_LOADING;
    pub const NO_MULTI: Flags = Flags::NO_MULTI;
    pub const MOVABLEKEYS: Flags = Flags::MOVABLEKEYS;
    pub const ALLOW_BUSY: Flags = Flags::ALLOW_BUSY;
    pub const PROTECTED: Flags = Flags::PROTECTED;
}
pub(crate) const K1: (i32, i32, i32) = (1, 1, 1);
pub(crate) const K2: (i32, i32, i32) = (2, 2, 1);

#[cfg(test)]
mod tests;
