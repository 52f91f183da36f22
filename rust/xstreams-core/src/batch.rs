//! Batch entry points for columnar callers (the Arrow paths of the Python binding, the
//! Spark dedup transformation and replay reader).
//!
//! - [`Store::xadd_rows`]: many XADDs under one lock. Each row is turned into the argument
//!   vector of one `XADD` and run by the command layer, so every row has exactly the
//!   semantics (and error) of that XADD sent alone; the outcome says whether it added an
//!   entry or was recognised as an IDMP duplicate. Rows may carry their own command time
//!   (in-memory stores), which is how the dedup transformation replays event time.
//! - [`Entries`]: entries in flat, Arrow-shaped buffers (IDs, and field names/values as
//!   offset + data arrays), filled by [`Store::range_entries`] (XRANGE / XREVRANGE) and
//!   [`Entries::from_read_reply`] (XREAD / XREADGROUP replies).
//! - [`replay`]: reading a persisted store by stream and ID range without opening it.

pub mod replay;

use std::collections::HashMap;

use crate::command::{self, Ctx, Outcome};
use crate::db::{KeyEntry, Keyspace, Value, NUM_DBS};
use crate::error::CmdError;
use crate::group::ConsumerGroup;
use crate::id::{parse_id, StreamId};
use crate::reply::Reply;
use crate::store::{Store, CLOSED_ERROR};
use crate::stream::Stream;

/// The values of one column of a batch of rows.
#[derive(Clone, Debug)]
pub enum Col<'a> {
    /// The same value on every row.
    Const(&'a [u8]),
    /// One value per row; `None` is a null.
    Rows(Vec<Option<&'a [u8]>>),
}

impl<'a> Col<'a> {
    /// The value on `row` (`None` for a null).
    pub fn get(&self, row: usize) -> Option<&'a [u8]> {
        match self {
            Col::Const(v) => Some(v),
            Col::Rows(r) => r[row],
        }
    }
}

/// Idempotent-producer options of a batch of XADDs.
#[derive(Clone, Debug, Default)]
pub enum Idmp<'a> {
    /// Plain XADDs.
    #[default]
    Off,
    /// `IDMP pid iid`.
    Iid { pid: Col<'a>, iid: Col<'a> },
    /// `IDMPAUTO pid` (the IID is the hash of the row's field/value pairs).
    Auto { pid: Col<'a> },
}

/// A batch of XADDs, one per row, described column by column.
///
/// Row `i` runs as
/// `XADD key [options...] [IDMP pid iid | IDMPAUTO pid] [trim...] <id | *> field value ...`
/// where a null key, pid or IID is sent as an empty argument (the binding rejects them
/// before), a null ID is `*`, and a field whose value is null is left out of that row (a
/// row left with no field fails with XADD's arity error, as the same XADD would).
#[derive(Clone, Debug, Default)]
pub struct XaddRows<'a> {
    /// Number of rows.
    pub len: usize,
    pub key: Option<Col<'a>>,
    /// Explicit IDs (`None`, or a null value: `*`).
    pub id: Option<Col<'a>>,
    /// Tokens before the IDMP option: `NOMKSTREAM`, `KEEPREF`/`DELREF`/`ACKED`.
    pub options: Vec<&'a [u8]>,
    pub idmp: Idmp<'a>,
    /// Tokens after the IDMP option: `MAXLEN|MINID [=|~] threshold [LIMIT count]`.
    pub trim: Vec<&'a [u8]>,
    /// Field names and their values.
    pub fields: Vec<(&'a [u8], Col<'a>)>,
    /// Per-row command time in ms: the store clock is pinned at `times[i]` while row `i`
    /// runs, then restored (in-memory stores only).
    pub times: Option<Vec<i64>>,
    /// Dedup mode, for private stores fed rows grouped by key: when the key changes the
    /// previous key is deleted (its answers are final), and after the last row the
    /// entries of the last key are trimmed away (its IDMP state is kept for the next
    /// batch). Replies are unaffected; memory stays bounded by the IDMP maps.
    pub forget: bool,
}

impl<'a> XaddRows<'a> {
    /// The XADD arguments of row `row`, into `out`.
    pub fn argv(&self, row: usize, out: &mut Vec<&'a [u8]>) {
        out.clear();
        out.push(b"XADD");
        out.push(self.key.as_ref().and_then(|k| k.get(row)).unwrap_or(b""));
        out.extend_from_slice(&self.options);
        match &self.idmp {
            Idmp::Off => {}
            Idmp::Iid { pid, iid } => {
                out.push(b"IDMP");
                out.push(pid.get(row).unwrap_or(b""));
                out.push(iid.get(row).unwrap_or(b""));
            }
            Idmp::Auto { pid } => {
                out.push(b"IDMPAUTO");
                out.push(pid.get(row).unwrap_or(b""));
            }
        }
        out.extend_from_slice(&self.trim);
        out.push(self.id.as_ref().and_then(|c| c.get(row)).unwrap_or(b"*"));
        for (name, col) in &self.fields {
            if let Some(v) = col.get(row) {
                out.push(name);
                out.push(v);
            }
        }
    }
}

/// What one row's XADD did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowOutcome {
    /// A new entry with this ID.
    Added(StreamId),
    /// An IDMP duplicate: the reply is the ID of the entry first added for (pid, iid).
    Duplicate(StreamId),
    /// A null reply (`NOMKSTREAM` on a missing key).
    Nil,
    /// The error line the XADD replied with.
    Error(String),
}

impl RowOutcome {
    /// The reply's ID, if any.
    pub fn id(&self) -> Option<StreamId> {
        match self {
            RowOutcome::Added(id) | RowOutcome::Duplicate(id) => Some(*id),
            _ => None,
        }
    }
}

/// Run one command directly on the keyspace, collecting the keys it signals.
fn run_one(
    ks: &mut Keyspace,
    db: usize,
    now: i64,
    argv: &[&[u8]],
    signals: &mut Vec<(usize, Vec<u8>)>,
    flushed_dbs: &mut u32,
) -> Reply {
    let mut ctx = Ctx::new(ks, db, now, 2);
    ctx.deny_blocking = true;
    let out = command::execute(&mut ctx, argv);
    for s in ctx.signals.drain(..) {
        if !signals.contains(&s) {
            signals.push(s);
        }
    }
    *flushed_dbs |= ctx.flushed_dbs;
    match out {
        Outcome::Reply(r) => r,
        Outcome::Block(_) => Reply::NilArray,
    }
}

fn duplicates_of(ks: &Keyspace, db: usize, key: &[u8]) -> u64 {
    match ks.dbs[db].get(key) {
        Some(KeyEntry {
            value: Value::Stream(s),
            ..
        }) => s.idmp.iids_duplicates,
        _ => 0,
    }
}

fn reply_id(b: &[u8]) -> Option<StreamId> {
    parse_id(b, 0, true, false).map(|p| p.id)
}

fn outcome(reply: Reply, duplicate: bool) -> RowOutcome {
    match reply {
        Reply::Bulk(b) => match reply_id(&b) {
            Some(id) if duplicate => RowOutcome::Duplicate(id),
            Some(id) => RowOutcome::Added(id),
            None => RowOutcome::Error(format!(
                "ERR unexpected XADD reply {}",
                String::from_utf8_lossy(&b)
            )),
        },
        Reply::Nil | Reply::NilArray => RowOutcome::Nil,
        Reply::Error(e) => RowOutcome::Error(e),
        other => RowOutcome::Error(format!("ERR unexpected XADD reply {other:?}")),
    }
}

/// The last-generated-id field of an `XINFO STREAM` reply (0-0 for a missing key).
fn xinfo_last_id(r: &Reply) -> StreamId {
    let pairs: Vec<(&Reply, &Reply)> = match r {
        Reply::Map(p) => p.iter().map(|(k, v)| (k, v)).collect(),
        Reply::Array(a) => a.chunks_exact(2).map(|c| (&c[0], &c[1])).collect(),
        _ => return StreamId::MIN,
    };
    for (k, v) in pairs {
        let name: &[u8] = match k {
            Reply::Bulk(b) => b,
            Reply::Status(s) => s.as_bytes(),
            _ => continue,
        };
        if name == b"last-generated-id" {
            if let Reply::Bulk(b) = v {
                return reply_id(b).unwrap_or(StreamId::MIN);
            }
        }
    }
    StreamId::MIN
}

impl Store {
    /// Run one XADD per row of `rows` on database `db`, under one lock: no other command
    /// runs in between. Every row runs exactly as that XADD sent alone would (the command
    /// layer parses and executes it); a failing row does not stop the others (as in a
    /// pipeline). Returns one outcome per row.
    ///
    /// In-memory stores run the rows directly on the keyspace, each at its own command
    /// time when `rows.times` is set, and tell duplicates from the stream's
    /// `iids-duplicates` counter. Durable stores run them as one atomic
    /// [`Store::execute_batch`] (so each row is logged as that XADD would be); a duplicate
    /// is then a reply that is not above the stream's last ID when the row ran.
    /// Per-row times and `forget` are refused for durable stores.
    pub fn xadd_rows(&self, db: usize, rows: &XaddRows<'_>) -> Result<Vec<RowOutcome>, String> {
        if db >= NUM_DBS {
            return Err("ERR DB index is out of range".into());
        }
        if let Some(t) = &rows.times {
            if t.len() != rows.len {
                return Err(format!("ERR {} row times for {} rows", t.len(), rows.len));
            }
        }
        if self.is_closed() {
            return Err(CLOSED_ERROR.into());
        }
        if rows.len == 0 {
            return Ok(Vec::new());
        }
        if self.is_durable() {
            if rows.times.is_some() || rows.forget {
                return Err("ERR per-row times need an in-memory store".into());
            }
            return Ok(self.xadd_rows_logged(db, rows));
        }
        // A store opened read-only has no journal; every row gets the refusal a write sees.
        if self.is_read_only() {
            let e = crate::store::READ_ONLY_ERROR.to_string();
            return Ok(vec![RowOutcome::Error(e); rows.len]);
        }
        Ok(self.xadd_rows_direct(db, rows))
    }

    fn xadd_rows_direct(&self, db: usize, rows: &XaddRows<'_>) -> Vec<RowOutcome> {
        let mut out = Vec::with_capacity(rows.len);
        self.with_keyspace_signaling(|ks, signals, flushed_dbs| {
            let saved = ks.clock;
            let mut argv: Vec<&[u8]> = Vec::with_capacity(8 + 2 * rows.fields.len());
            let mut prev: Option<&[u8]> = None;
            let idmp = !matches!(rows.idmp, Idmp::Off);
            let mut last: Option<(&[u8], u64)> = None;
            for i in 0..rows.len {
                rows.argv(i, &mut argv);
                let key = argv[1];
                if let Some(t) = &rows.times {
                    ks.clock.set(Some(t[i]));
                }
                let now = ks.command_time();
                if rows.forget {
                    if let Some(p) = prev.filter(|p| *p != key) {
                        run_one(ks, db, now, &[b"DEL", p], signals, flushed_dbs);
                        last = None;
                    }
                    prev = Some(key);
                }
                ks.sweep(now, false);
                // Only an IDMP row can be a duplicate; nothing else changes the counter
                // between two rows, so the previous row's count of the same key serves.
                let before = match last {
                    _ if !idmp => 0,
                    Some((k, n)) if k == key => n,
                    _ => duplicates_of(ks, db, key),
                };
                let reply = run_one(ks, db, now, &argv, signals, flushed_dbs);
                let dup = idmp && {
                    let after = duplicates_of(ks, db, key);
                    last = Some((key, after));
                    after > before
                };
                out.push(outcome(reply, dup));
            }
            if let Some(p) = prev {
                let now = ks.command_time();
                run_one(
                    ks,
                    db,
                    now,
                    &[b"XTRIM", p, b"MAXLEN", b"0"],
                    signals,
                    flushed_dbs,
                );
            }
            if rows.times.is_some() {
                ks.clock = saved;
            }
        });
        out
    }

    fn xadd_rows_logged(&self, db: usize, rows: &XaddRows<'_>) -> Vec<RowOutcome> {
        let mut out: Vec<Option<RowOutcome>> = vec![None; rows.len];
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut key_of: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut cmds: Vec<Vec<Vec<u8>>> = Vec::new();
        let mut cmd_rows: Vec<(usize, usize)> = Vec::new();
        let mut argv: Vec<&[u8]> = Vec::new();
        for i in 0..rows.len {
            rows.argv(i, &mut argv);
            if let Err(e) = command::resolve(&argv) {
                // Refused before running (arity): alone, it fails the same way; inside an
                // atomic batch it would discard the others.
                out[i] = Some(RowOutcome::Error(e.0));
                continue;
            }
            let k = match key_of.get(argv[1]) {
                Some(&k) => k,
                None => {
                    keys.push(argv[1].to_vec());
                    key_of.insert(argv[1].to_vec(), keys.len() - 1);
                    keys.len() - 1
                }
            };
            cmd_rows.push((i, k));
            cmds.push(argv.iter().map(|a| a.to_vec()).collect());
        }
        let mut all: Vec<Vec<Vec<u8>>> = keys
            .iter()
            .map(|k| vec![b"XINFO".to_vec(), b"STREAM".to_vec(), k.clone()])
            .collect();
        all.extend(cmds);
        let replies = self.execute_batch(db, 2, &all, true);
        let mut last: Vec<StreamId> = replies[..keys.len()].iter().map(xinfo_last_id).collect();
        for ((i, k), r) in cmd_rows
            .into_iter()
            .zip(replies.into_iter().skip(keys.len()))
        {
            let o = match outcome(r, false) {
                RowOutcome::Added(id) if id <= last[k] => RowOutcome::Duplicate(id),
                RowOutcome::Added(id) => {
                    last[k] = id;
                    RowOutcome::Added(id)
                }
                o => o,
            };
            out[i] = Some(o);
        }
        out.into_iter()
            .map(|o| o.expect("every row has an outcome"))
            .collect()
    }

    /// The entries `XRANGE key start end [COUNT count]` (or, with `rev`, `XREVRANGE key
    /// end start [COUNT count]`) replies with, as flat buffers. The same checks, in the
    /// same order, and the same error lines as the commands: the bounds, then the count,
    /// then the key's type. A negative count reads nothing, as `COUNT 0`.
    pub fn range_entries(
        &self,
        db: usize,
        key: &[u8],
        start: &[u8],
        end: &[u8],
        count: Option<i64>,
        rev: bool,
    ) -> Result<Entries, String> {
        if db >= NUM_DBS {
            return Err("ERR DB index is out of range".into());
        }
        if self.is_closed() {
            return Err(CLOSED_ERROR.into());
        }
        let start = command::args::range_start(start).map_err(|e| e.0)?;
        let end = command::args::range_end(end).map_err(|e| e.0)?;
        let limit = match count {
            None => usize::MAX,
            Some(c) if c <= 0 => 0,
            Some(c) => c as usize,
        };
        self.with_keyspace(|ks| {
            let now = ks.command_time();
            ks.sweep(now, false);
            let mut ctx = Ctx::new(ks, db, now, 2);
            let mut out = Entries::new();
            let Some(s) = ctx.stream(key).map_err(|e| e.0)? else {
                return Ok(out);
            };
            let si = out.add_key(key);
            for e in s.range(start, end, rev).take(limit) {
                out.push(si, e.id, e.pairs());
            }
            Ok(out)
        })
    }
}

/// Entries in flat buffers shaped like Arrow arrays: entry `i` has ID `ids[i]`, belongs
/// to stream `keys[stream[i]]`, and its field/value pairs are `pair_offsets[i] ..
/// pair_offsets[i + 1]`; pair `j`'s name is `names[name_offsets[j] .. name_offsets[j +
/// 1]]`, its value likewise in `values`. `present[i]` is false for an entry an XREADGROUP
/// history read lists but that no longer exists (it has no pairs).
#[derive(Clone, Debug)]
pub struct Entries {
    pub keys: Vec<Vec<u8>>,
    pub stream: Vec<u32>,
    pub ids: Vec<StreamId>,
    pub present: Vec<bool>,
    pub pair_offsets: Vec<i64>,
    pub name_offsets: Vec<i64>,
    pub names: Vec<u8>,
    pub value_offsets: Vec<i64>,
    pub values: Vec<u8>,
}

impl Default for Entries {
    fn default() -> Self {
        Entries::new()
    }
}

impl Entries {
    /// No entries.
    pub fn new() -> Self {
        Entries {
            keys: Vec::new(),
            stream: Vec::new(),
            ids: Vec::new(),
            present: Vec::new(),
            pair_offsets: vec![0],
            name_offsets: vec![0],
            names: Vec::new(),
            value_offsets: vec![0],
            values: Vec::new(),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// No entries?
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Register a stream key; returns its index.
    pub fn add_key(&mut self, key: &[u8]) -> u32 {
        if let Some(i) = self.keys.iter().position(|k| k == key) {
            return i as u32;
        }
        self.keys.push(key.to_vec());
        (self.keys.len() - 1) as u32
    }

    /// Append an entry of stream `stream` (an index from [`Entries::add_key`]).
    pub fn push<'x>(
        &mut self,
        stream: u32,
        id: StreamId,
        pairs: impl Iterator<Item = (&'x [u8], &'x [u8])>,
    ) {
        for (f, v) in pairs {
            self.names.extend_from_slice(f);
            self.name_offsets.push(self.names.len() as i64);
            self.values.extend_from_slice(v);
            self.value_offsets.push(self.values.len() as i64);
        }
        self.stream.push(stream);
        self.ids.push(id);
        self.present.push(true);
        self.pair_offsets.push((self.name_offsets.len() - 1) as i64);
    }

    /// Append an entry that no longer exists (no pairs).
    pub fn push_missing(&mut self, stream: u32, id: StreamId) {
        self.stream.push(stream);
        self.ids.push(id);
        self.present.push(false);
        self.pair_offsets.push((self.name_offsets.len() - 1) as i64);
    }

    /// Append the entries of `s` with `start <= id <= end`, ascending; with a group, only
    /// those it has not acknowledged: the entries of its PEL that still exist, then the
    /// entries after its last-delivered ID.
    pub fn push_stream(
        &mut self,
        stream: u32,
        s: &Stream,
        start: StreamId,
        end: StreamId,
        group: Option<&ConsumerGroup>,
    ) {
        let Some(g) = group else {
            for e in s.range(start, end, false) {
                self.push(stream, e.id, e.pairs());
            }
            return;
        };
        if start > end {
            return;
        }
        let read_end = end.min(g.last_id);
        for (id, _) in g.pel_range(start, read_end) {
            if let Some(e) = s.get(id) {
                self.push(stream, e.id, e.pairs());
            }
        }
        if let Some(unread) = g.last_id.incr() {
            for e in s.range(start.max(unread), end, false) {
                self.push(stream, e.id, e.pairs());
            }
        }
    }

    /// The entries of an `XREAD` / `XREADGROUP` reply (RESP2 or RESP3 shape; a null reply
    /// is no entry).
    pub fn from_read_reply(reply: &Reply) -> Result<Entries, String> {
        let mut out = Entries::new();
        let streams: Vec<(&Reply, &Reply)> = match reply {
            Reply::Nil | Reply::NilArray => return Ok(out),
            Reply::Error(e) => return Err(e.clone()),
            Reply::Map(p) => p.iter().map(|(k, v)| (k, v)).collect(),
            Reply::Array(items) => {
                let mut v = Vec::with_capacity(items.len());
                for it in items {
                    match it {
                        Reply::Array(kv) if kv.len() == 2 => v.push((&kv[0], &kv[1])),
                        _ => return Err("ERR unexpected read reply".into()),
                    }
                }
                v
            }
            _ => return Err("ERR unexpected read reply".into()),
        };
        let bad = || "ERR unexpected read reply".to_string();
        for (k, entries) in streams {
            let Reply::Bulk(key) = k else {
                return Err(bad());
            };
            let si = out.add_key(key);
            let Reply::Array(entries) = entries else {
                continue;
            };
            for e in entries {
                let Reply::Array(parts) = e else {
                    return Err(bad());
                };
                let (Some(Reply::Bulk(id)), Some(fv)) = (parts.first(), parts.get(1)) else {
                    return Err(bad());
                };
                let id = reply_id(id).ok_or_else(bad)?;
                match fv {
                    Reply::Array(fv) => {
                        let mut pairs = Vec::with_capacity(fv.len() / 2);
                        for c in fv.chunks_exact(2) {
                            match (&c[0], &c[1]) {
                                (Reply::Bulk(f), Reply::Bulk(v)) => {
                                    pairs.push((f.as_slice(), v.as_slice()))
                                }
                                _ => return Err(bad()),
                            }
                        }
                        out.push(si, id, pairs.into_iter());
                    }
                    Reply::Map(fv) => {
                        let mut pairs = Vec::with_capacity(fv.len());
                        for (f, v) in fv {
                            match (f, v) {
                                (Reply::Bulk(f), Reply::Bulk(v)) => {
                                    pairs.push((f.as_slice(), v.as_slice()))
                                }
                                _ => return Err(bad()),
                            }
                        }
                        out.push(si, id, pairs.into_iter());
                    }
                    _ => out.push_missing(si, id),
                }
            }
        }
        Ok(out)
    }
}

/// The error a reader gets for a missing group (XREADGROUP's wording without the
/// command name).
pub fn nogroup(key: &[u8], group: &[u8]) -> String {
    CmdError::nogroup_key_or_group(key, group).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn rows<'a>(key: &'a [u8], vals: &'a [&'a [u8]]) -> XaddRows<'a> {
        XaddRows {
            len: vals.len(),
            key: Some(Col::Const(key)),
            fields: vec![(b"f", Col::Rows(vals.iter().map(|v| Some(*v)).collect()))],
            ..XaddRows::default()
        }
    }

    #[test]
    fn rows_match_single_xadds() {
        let a = Store::new(Config::default());
        let b = Store::new(Config::default());
        // (A clock below the IDMP duration wraps, as in Redis: every IID expires at once.)
        a.set_clock(Some(1_700_000_000_000));
        b.set_clock(Some(1_700_000_000_000));
        let vals: Vec<&[u8]> = vec![b"x", b"y", b"x"];
        let mut r = rows(b"s", &vals);
        r.idmp = Idmp::Auto {
            pid: Col::Const(b"p"),
        };
        let got = a.xadd_rows(0, &r).unwrap();
        let mut want = Vec::new();
        for v in &vals {
            want.push(b.execute(&[b"XADD", b"s", b"IDMPAUTO", b"p", b"*", b"f", v]));
        }
        assert_eq!(got.len(), 3);
        let t = 1_700_000_000_000;
        assert_eq!(got[0], RowOutcome::Added(StreamId::new(t, 0)));
        assert_eq!(got[1], RowOutcome::Added(StreamId::new(t, 1)));
        assert_eq!(got[2], RowOutcome::Duplicate(StreamId::new(t, 0)));
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(Reply::id(&g.id().unwrap()), *w);
        }
        let e = a.range_entries(0, b"s", b"-", b"+", None, false).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(&e.values, b"xy");
    }

    #[test]
    fn per_row_times_and_errors() {
        let a = Store::new(Config::default());
        let vals: Vec<&[u8]> = vec![b"1", b"2", b"3"];
        let mut r = rows(b"s", &vals);
        r.times = Some(vec![5, 3, 9]);
        r.id = Some(Col::Rows(vec![None, None, Some(b"1-1")]));
        let got = a.xadd_rows(0, &r).unwrap();
        assert_eq!(got[0], RowOutcome::Added(StreamId::new(5, 0)));
        assert_eq!(got[1], RowOutcome::Added(StreamId::new(5, 1)));
        assert!(matches!(&got[2], RowOutcome::Error(e) if e.contains("equal or smaller")));
        let empty: Vec<&[u8]> = vec![];
        let mut r = rows(b"s", &empty);
        r.len = 1;
        r.fields[0].1 = Col::Rows(vec![None]);
        let got = a.xadd_rows(0, &r).unwrap();
        assert_eq!(
            got[0],
            RowOutcome::Error("ERR wrong number of arguments for 'xadd' command".into())
        );
    }

    #[test]
    fn read_reply_roundtrip() {
        let a = Store::new(Config::default());
        a.execute(&[b"XADD", b"s", b"1-1", b"a", b"1", b"b", b"2"]);
        let r = a.execute(&[b"XREAD", b"STREAMS", b"s", b"0"]);
        let e = Entries::from_read_reply(&r).unwrap();
        assert_eq!(e.ids, vec![StreamId::new(1, 1)]);
        assert_eq!(e.pair_offsets, vec![0, 2]);
        assert_eq!(&e.names, b"ab");
    }
}
