//! Batch entry points for columnar callers (the Arrow paths of the Python binding, the
//! Spark dedup transformation and replay reader).
//!
//! - [`Store::xadd_rows`]: many XADDs under one lock. The options the rows share are
//!   parsed once by XADD's own parser; each row then runs as typed [`XaddArgs`] through
//!   the one XADD implementation (`command::xadd_typed`), with no argument vector and no
//!   reply, and every row has exactly the semantics (and error) of that XADD sent alone;
//!   the outcome says whether it added an entry or was recognised as an IDMP duplicate.
//!   (Rows whose XADD cannot be typed, because the shared options fail or the row's ID is
//!   not an ID, run as their argument vector, so they fail with XADD's own error in its
//!   own order.) Rows may carry their own command time (in-memory stores), which is how
//!   the dedup transformation replays event time.
//! - [`Entries`]: entries in flat, Arrow-shaped buffers (IDs, and field names/values as
//!   offset + data arrays), filled by the store's typed reads [`Store::range_entries`]
//!   (XRANGE / XREVRANGE) and [`Store::read`] (XREAD / XREADGROUP, as a
//!   [`crate::structures::read::ReadSink`]).
//! - [`replay`]: reading a persisted store by stream and ID range without opening it.

pub mod replay;

pub use crate::structures::entries::Entries;

use crate::command::reply::Reply;
use crate::command::{self, Ctx, XaddArgs, XaddOutcome};
use crate::error::CmdError;
use crate::keyspace::db::NUM_DBS;
use crate::store::{Session, Store};
use crate::structures::id::{parse_id, StreamId};
use crate::structures::stream::TrimArgs;

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
/// Row `i` runs as (and is typed from)
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
    /// The key of row `row` (a null key is empty).
    fn key(&self, row: usize) -> &'a [u8] {
        self.key.as_ref().and_then(|k| k.get(row)).unwrap_or(b"")
    }

    /// The number of arguments of row `row`'s XADD, given its number of field/value
    /// arguments.
    fn argc(&self, pairs: usize) -> usize {
        let idmp = match self.idmp {
            Idmp::Off => 0,
            Idmp::Iid { .. } => 3,
            Idmp::Auto { .. } => 2,
        };
        3 + self.options.len() + idmp + self.trim.len() + pairs
    }

    /// The XADD arguments of row `row`, into `out`.
    pub fn argv(&self, row: usize, out: &mut Vec<&'a [u8]>) {
        out.clear();
        out.push(b"XADD");
        out.push(self.key(row));
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
    /// The error the XADD replied with.
    Error(CmdError),
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

impl RowOutcome {
    fn from_result(r: Result<Option<XaddOutcome>, CmdError>) -> RowOutcome {
        match r {
            Ok(Some(o)) if o.duplicate => RowOutcome::Duplicate(o.id),
            Ok(Some(o)) => RowOutcome::Added(o.id),
            Ok(None) => RowOutcome::Nil,
            Err(e) => RowOutcome::Error(e),
        }
    }
}

/// Run a command given as arguments inside a session (the dedup mode's DEL and XTRIM).
fn run_argv(sess: &mut Session<'_>, db: usize, argv: &[&[u8]]) {
    let _ = sess.run(db, |ctx| Ok(command::execute(ctx, argv)));
}

impl Store {
    /// Run one XADD per row of `rows` on database `db`, under one lock: no other command
    /// runs in between. Every row runs exactly as that XADD sent alone would (the same
    /// parser and implementation, the same log record in a durable store); a failing row
    /// does not stop the others (as in a pipeline). Returns one outcome per row, typed:
    /// nothing is parsed back from a reply.
    ///
    /// In a durable store the rows' records are written together when the call ends, or
    /// ahead in chunks while it runs (as redis-server writes a pipeline's AOF records once
    /// per event-loop turn), not one write per row; a failed write refuses later writes
    /// (MISCONF) until a retry writes what waits, and under `always` also fails this call
    /// with the MISCONF error (the rows ran in memory); a crash keeps the whole rows
    /// written before it.
    ///
    /// In-memory stores may run each row at its own command time (`rows.times`) and in
    /// dedup mode (`rows.forget`); both are refused for durable stores.
    pub fn xadd_rows(&self, db: usize, rows: &XaddRows<'_>) -> Result<Vec<RowOutcome>, CmdError> {
        if db >= NUM_DBS {
            return Err(CmdError::db_index_out_of_range());
        }
        let mut sess = self.session()?;
        // The rows' records reach the log together (or ahead in chunks), not one write
        // per row; a failed write fails the call.
        sess.batch_log();
        let out = xadd_rows_in(&mut sess, db, rows)?;
        sess.commit()?;
        Ok(out)
    }

    /// [`Store::xadd_rows`], then the commands `after` (argument lists, e.g. a sink's
    /// marker), as one atomic step: in a durable store the rows and `after` are one block
    /// in the log, so a crash leaves all of them or none. Returns the rows' outcomes and
    /// the replies of `after`.
    pub fn xadd_rows_atomic(
        &self,
        db: usize,
        rows: &XaddRows<'_>,
        after: &[Vec<Vec<u8>>],
    ) -> Result<(Vec<RowOutcome>, Vec<Reply>), CmdError> {
        if db >= NUM_DBS {
            return Err(CmdError::db_index_out_of_range());
        }
        let mut sess = self.session()?;
        sess.atomic();
        let out = xadd_rows_in(&mut sess, db, rows)?;
        let replies = after
            .iter()
            .map(|c| {
                let argv: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
                match sess.run(db, |ctx| Ok(command::execute(ctx, &argv))) {
                    Ok(command::Outcome::Reply(r)) => r,
                    // A session never blocks: a blocking command answers as in MULTI.
                    Ok(command::Outcome::Block(_)) => Reply::NilArray,
                    Err(e) => e.into(),
                }
            })
            .collect();
        sess.commit()?;
        Ok((out, replies))
    }
}

/// The rows of [`Store::xadd_rows`] inside a session.
fn xadd_rows_in(
    sess: &mut Session<'_>,
    db: usize,
    rows: &XaddRows<'_>,
) -> Result<Vec<RowOutcome>, CmdError> {
    if let Some(t) = &rows.times {
        if t.len() != rows.len {
            return Err(CmdError::row_times_mismatch(t.len(), rows.len));
        }
    }
    if rows.len == 0 {
        return Ok(Vec::new());
    }
    if sess.is_durable() && (rows.times.is_some() || rows.forget) {
        return Err(CmdError::row_times_need_memory());
    }
    let mut out = Vec::with_capacity(rows.len);
    let saved = sess.keyspace().clock;
    let mut shape: Option<Shape> = None;
    let mut pairs: Vec<&[u8]> = Vec::with_capacity(2 * rows.fields.len());
    let mut argv: Vec<&[u8]> = Vec::new();
    let mut prev: Option<&[u8]> = None;
    for i in 0..rows.len {
        let key = rows.key(i);
        if let Some(t) = &rows.times {
            sess.keyspace().clock.set(Some(t[i]));
        }
        if rows.forget {
            if let Some(p) = prev.filter(|p| *p != key) {
                run_argv(sess, db, &[b"DEL", p]);
            }
            prev = Some(key);
        }
        pairs.clear();
        for (name, col) in &rows.fields {
            if let Some(v) = col.get(i) {
                pairs.push(name);
                pairs.push(v);
            }
        }
        let r = sess.run(db, |ctx| {
            // XADD's arity (-5), checked before its arguments as the command table does.
            if rows.argc(pairs.len()) < 5 {
                return Err(CmdError::arity("xadd"));
            }
            let shape = shape.get_or_insert_with(|| Shape::parse(ctx, rows));
            match shape.args(rows, i, key, &pairs) {
                Some(args) => command::xadd_typed(ctx, &args),
                None => {
                    rows.argv(i, &mut argv);
                    command::xadd_argv(ctx, &argv)
                }
            }
        });
        out.push(RowOutcome::from_result(r));
    }
    if let Some(p) = prev {
        run_argv(sess, db, &[b"XTRIM", p, b"MAXLEN", b"0"]);
    }
    if rows.times.is_some() {
        sess.keyspace().clock = saved;
    }
    Ok(out)
}

/// What the rows of a batch share: the options before and after IDMP, parsed once by
/// XADD's own parser from the first row's shape (`XADD k options [IDMP p i | IDMPAUTO p]
/// trim * f v`), since only the key, the IDMP values, the ID and the fields vary.
enum Shape {
    /// The options parsed: each row becomes typed [`XaddArgs`].
    Typed {
        no_mkstream: bool,
        trim: Option<TrimArgs>,
    },
    /// The options fail (or do not parse as the positions they were given in): every row
    /// runs as its argument vector, so that it fails with exactly the error that XADD
    /// sent alone gives (which may depend on the row: an empty producer comes first).
    Argv,
}

impl Shape {
    fn parse(ctx: &Ctx<'_>, rows: &XaddRows<'_>) -> Shape {
        let mut tpl: Vec<&[u8]> = vec![b"XADD", b"k"];
        tpl.extend_from_slice(&rows.options);
        match &rows.idmp {
            Idmp::Off => {}
            Idmp::Iid { .. } => tpl.extend_from_slice(&[b"IDMP", b"p", b"i"]),
            Idmp::Auto { .. } => tpl.extend_from_slice(&[b"IDMPAUTO", b"p"]),
        }
        tpl.extend_from_slice(&rows.trim);
        let id_pos = tpl.len();
        tpl.extend_from_slice(&[b"*", b"f", b"v"]);
        match command::parse_add_trim(ctx, &tpl, true) {
            Ok(o)
                if o.id_pos == id_pos
                    && o.id.is_none()
                    && o.idmp.is_some() != matches!(rows.idmp, Idmp::Off) =>
            {
                Shape::Typed {
                    no_mkstream: o.no_mkstream,
                    trim: o.trim,
                }
            }
            _ => Shape::Argv,
        }
    }

    /// Row `row` as typed arguments, or `None` when it must run as its argument vector:
    /// the options failed, or its ID is not one (XADD's parser would then see it as an
    /// option keyword or fail on it, in its own order).
    fn args<'a>(
        &self,
        rows: &XaddRows<'a>,
        row: usize,
        key: &'a [u8],
        pairs: &'a [&'a [u8]],
    ) -> Option<XaddArgs<'a>> {
        let Shape::Typed { no_mkstream, trim } = self else {
            return None;
        };
        let id = match rows.id.as_ref().and_then(|c| c.get(row)) {
            None | Some(b"*") => None,
            Some(v) if v.first() == Some(&b'*') => return None,
            Some(v) => {
                let p = parse_id(v, 0, true, true)?;
                Some((p.id, p.seq_given))
            }
        };
        let idmp = match &rows.idmp {
            Idmp::Off => None,
            Idmp::Iid { pid, iid } => Some((
                pid.get(row).unwrap_or(b""),
                Some(iid.get(row).unwrap_or(b"")),
            )),
            Idmp::Auto { pid } => Some((pid.get(row).unwrap_or(b""), None)),
        };
        Some(XaddArgs {
            key,
            id,
            no_mkstream: *no_mkstream,
            idmp,
            trim: *trim,
            pairs,
        })
    }
}

/// The error a reader gets for a missing group (XREADGROUP's wording without the
/// command name).
pub fn nogroup(key: &[u8], group: &[u8]) -> CmdError {
    CmdError::nogroup_key_or_group(key, group)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::config::Config;
    use crate::command::reply::Reply;
    use crate::command::ReadArgs;

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

    /// Every row's outcome is what the same XADD sent alone replies, for shared options
    /// that parse and that fail, and for rows whose producer, IID, ID or fields fail.
    #[test]
    fn typed_rows_match_the_commands_errors() {
        let ids: Vec<Option<&[u8]>> = vec![
            None,
            Some(b"*"),
            Some(b"5-*"),
            Some(b"9-1"),
            Some(b"0-0"),
            Some(b"bad"),
            Some(b"MAXLEN"),
            Some(b"nomkstream"),
            Some(b"*x"),
            Some(b"3"),
        ];
        let pids: Vec<Option<&[u8]>> = vec![Some(b"p"), Some(b""), Some(b"p")];
        let iids: Vec<Option<&[u8]>> = vec![Some(b"i1"), Some(b"i2"), Some(b"")];
        let vals: Vec<Option<&[u8]>> = vec![Some(b"v"), None];
        // (options before IDMP, trimming options after it)
        type Opts = Vec<&'static [u8]>;
        let option_sets: Vec<(Opts, Opts)> = vec![
            (vec![], vec![]),
            (vec![b"NOMKSTREAM"], vec![]),
            (vec![b"DELREF"], vec![b"MAXLEN", b"~", b"2"]),
            (vec![], vec![b"MAXLEN", b"=", b"1"]),
            (vec![], vec![b"MINID", b"4"]),
            (vec![], vec![b"MAXLEN", b"-1"]),
            (vec![], vec![b"MAXLEN", b"1", b"LIMIT", b"5"]),
            (vec![], vec![b"LIMIT", b"5"]),
            (vec![b"ACKED", b"KEEPREF"], vec![]),
            (vec![], vec![b"MAXLEN"]),
        ];
        let mut checked = 0;
        for (options, trim) in &option_sets {
            for idmp_mode in 0..3 {
                let a = Store::new(Config::default());
                let b = Store::new(Config::default());
                a.set_clock(Some(1_700_000_000_000));
                b.set_clock(Some(1_700_000_000_000));
                let n = ids.len() * pids.len() * vals.len();
                let row = |r: usize| (r % ids.len(), (r / ids.len()) % 3, r / (ids.len() * 3));
                let col =
                    |f: &dyn Fn(usize) -> Option<&'static [u8]>| Col::Rows((0..n).map(f).collect());
                let idmp = match idmp_mode {
                    0 => Idmp::Off,
                    1 => Idmp::Iid {
                        pid: col(&|r| pids[row(r).1]),
                        iid: col(&|r| iids[row(r).1]),
                    },
                    _ => Idmp::Auto {
                        pid: col(&|r| pids[row(r).1]),
                    },
                };
                let rows = XaddRows {
                    len: n,
                    key: Some(Col::Rows(
                        (0..n)
                            .map(|r| Some(if r % 4 == 0 { &b"t"[..] } else { b"s" }))
                            .collect(),
                    )),
                    id: Some(col(&|r| ids[row(r).0])),
                    options: options.clone(),
                    idmp,
                    trim: trim.clone(),
                    fields: vec![(b"f", col(&|r| vals[row(r).2]))],
                    ..XaddRows::default()
                };
                let got = a.xadd_rows(0, &rows).unwrap();
                let mut argv = Vec::new();
                for (r, g) in got.iter().enumerate() {
                    rows.argv(r, &mut argv);
                    let want = b.execute(&argv);
                    let have = match g {
                        RowOutcome::Added(id) | RowOutcome::Duplicate(id) => Reply::id(id),
                        RowOutcome::Nil => Reply::Nil,
                        RowOutcome::Error(e) => Reply::Error(e.clone()),
                    };
                    assert_eq!(have, want, "row {r}: {argv:?}");
                    checked += 1;
                }
                assert_eq!(
                    a.execute(&[b"XRANGE", b"s", b"-", b"+"]),
                    b.execute(&[b"XRANGE", b"s", b"-", b"+"])
                );
            }
        }
        assert_eq!(checked, option_sets.len() * 3 * ids.len() * 3 * 2);
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
        assert!(matches!(&got[2], RowOutcome::Error(e) if e.line().contains("equal or smaller")));
        let empty: Vec<&[u8]> = vec![];
        let mut r = rows(b"s", &empty);
        r.len = 1;
        r.fields[0].1 = Col::Rows(vec![None]);
        let got = a.xadd_rows(0, &r).unwrap();
        assert_eq!(got[0], RowOutcome::Error(CmdError::arity("xadd")));
    }

    #[test]
    fn typed_read_matches_the_reply() {
        let a = Store::new(Config::default());
        a.execute(&[b"XADD", b"s", b"1-1", b"a", b"1", b"b", b"2"]);
        let keys: [&[u8]; 1] = [b"s"];
        let ids: [&[u8]; 1] = [b"0"];
        let e = a.read(0, &ReadArgs::xread(&keys, &ids)).unwrap();
        assert_eq!(e.ids, vec![StreamId::new(1, 1)]);
        assert_eq!(e.pair_offsets, vec![0, 2]);
        assert_eq!(&e.names, b"ab");
        assert_eq!(e.delivery, vec![None]);
    }
}
