//! Reading a persisted store (snapshot + logs) by stream and ID range, from several
//! processes at once and without opening it (no lock): what the Spark replay reader runs.
//!
//! A read is planned once ([`plan`]) and its parts run anywhere ([`read_part`]). The
//! plan pins the store's files as they are then: the manifest's snapshot and logs, each
//! log's size (a part reads a log only up to that size), so every part sees the same
//! state even while a writer appends. A compaction during the read removes files the plan
//! names; the parts then fail (and the read can be planned again).
//!
//! How a stream is read depends on what the logs did to it since the snapshot:
//!
//! - nothing ([`LogTouch::Untouched`]): its entries are exactly the snapshot's. Parts are
//!   ID ranges of the snapshot's nodes (from its index), and a part reads only its nodes'
//!   sections ([`SnapshotReader`]).
//! - only appends ([`LogTouch::Appends`]: XADDs without trimming, plus, when no group is
//!   read, group commands, which leave entries alone): the snapshot's entries are still
//!   all there, and the logs add entries above the snapshot's last ID. Snapshot parts as
//!   above, plus one tail part that replays the stream's XADDs from the logs on the
//!   stream's snapshot header (its last ID and IDMP state, no entries).
//! - anything else ([`LogTouch::Other`]: deletes, trims, renames, flushes...): the
//!   store is loaded whole ([`load`]), once per process by the caller, and parts are ID
//!   ranges of that.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::{nogroup, Entries};
use crate::base::config::Config;
use crate::command::table::{self, Log};
use crate::command::{self, Ctx};
use crate::error::CmdError;
use crate::keyspace::db::{KeyEntry, Keyspace, Value, NUM_DBS};
use crate::store::persist::log::{self as plog, LogItem, ParseStop};
use crate::store::persist::snapshot::{self, KeyIndex};
use crate::store::persist::{
    corrupt, io_err, log_name, replay_log, snapshot_name, Manifest, PersistError, MANIFEST,
};
use crate::structures::id::StreamId;
use crate::structures::stream::Stream;

/// A failed read: a store problem, or an error reply (NOGROUP, WRONGTYPE).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    Store(PersistError),
    Reply(CmdError),
}

impl From<PersistError> for ReadError {
    fn from(e: PersistError) -> Self {
        ReadError::Store(e)
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Store(e) => write!(f, "{e}"),
            ReadError::Reply(e) => f.write_str(e.line()),
        }
    }
}

/// The files of a store as a plan pins them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreFiles {
    pub dir: PathBuf,
    /// The manifest's text (a compaction changes it).
    pub manifest: String,
    /// The snapshot and its size.
    pub snapshot: Option<(PathBuf, u64)>,
    /// The logs, in order, and the size each is read up to.
    pub logs: Vec<(PathBuf, u64)>,
}

impl StoreFiles {
    /// The files of the store in `dir`, as they are now.
    pub fn open(dir: &Path) -> Result<StoreFiles, PersistError> {
        let mpath = dir.join(MANIFEST);
        let text = match std::fs::read(&mpath) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(PersistError::no_store(dir, MANIFEST))
            }
            Err(e) => return Err(io_err(&mpath, e)),
        };
        let Manifest { base, incr } =
            Manifest::parse(&text).map_err(|(off, msg)| corrupt(&mpath, off, msg))?;
        let text = String::from_utf8(text).expect("a parsed manifest is text");
        let snapshot = match base {
            Some(b) => {
                let p = dir.join(snapshot_name(b));
                let size = std::fs::metadata(&p).map_err(|e| io_err(&p, e))?.len();
                Some((p, size))
            }
            None => None,
        };
        let mut logs = Vec::with_capacity(incr.len());
        let last = incr.len() - 1;
        for (i, seq) in incr.into_iter().enumerate() {
            let p = dir.join(log_name(seq));
            let size = match std::fs::metadata(&p) {
                Ok(m) => m.len(),
                // As a load does: the newest log may not exist yet.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && i == last => 0,
                Err(e) => return Err(io_err(&p, e)),
            };
            logs.push((p, size));
        }
        Ok(StoreFiles {
            dir: dir.to_path_buf(),
            manifest: text,
            snapshot,
            logs,
        })
    }

    /// Fail if the store was compacted since the files were pinned.
    pub fn check(&self) -> Result<(), PersistError> {
        let mpath = self.dir.join(MANIFEST);
        let now = std::fs::read(&mpath).map_err(|e| io_err(&mpath, e))?;
        if now != self.manifest.as_bytes() {
            return Err(PersistError::compacted_since_planned(&self.dir));
        }
        Ok(())
    }

    /// The bytes of log `i` up to its pinned size.
    fn log_bytes(&self, i: usize) -> Result<Vec<u8>, PersistError> {
        let (p, size) = &self.logs[i];
        if *size == 0 {
            return Ok(Vec::new());
        }
        let mut f = File::open(p).map_err(|e| io_err(p, e))?;
        let mut buf = vec![0u8; *size as usize];
        f.read_exact(&mut buf).map_err(|e| io_err(p, e))?;
        Ok(buf)
    }
}

/// A snapshot read section by section: a buffer the size of the file of which only the
/// header, trailer, index and the sections asked for are read (the rest stays
/// zero-filled, untouched memory), so the snapshot parsers run on it as on the file.
pub struct SnapshotReader {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
    index: Vec<KeyIndex>,
}

impl SnapshotReader {
    /// Read the header, trailer and index of the snapshot at `path` (`size` bytes long).
    pub fn open(path: &Path, size: u64) -> Result<SnapshotReader, PersistError> {
        let file = File::open(path).map_err(|e| io_err(path, e))?;
        if size < 48 {
            return Err(corrupt(path, 0, "not an xstreams snapshot (too short)"));
        }
        let mut r = SnapshotReader {
            path: path.to_path_buf(),
            file,
            buf: vec![0u8; size as usize],
            index: Vec::new(),
        };
        r.fill(0, 24)?;
        r.fill(size - 24, 24)?;
        let t = (size - 24) as usize;
        let ioff = u64::from_le_bytes(r.buf[t..t + 8].try_into().expect("8 bytes"));
        let ilen = u64::from_le_bytes(r.buf[t + 8..t + 16].try_into().expect("8 bytes"));
        r.fill(ioff, ilen)?;
        r.index = snapshot::read_index(&r.buf).map_err(|e| corrupt(path, e.offset, &e.message))?;
        Ok(r)
    }

    fn fill(&mut self, off: u64, len: u64) -> Result<(), PersistError> {
        let end = off
            .checked_add(len)
            .filter(|&e| e <= self.buf.len() as u64)
            .ok_or_else(|| corrupt(&self.path, off, "section runs past the end of the file"))?;
        self.file
            .seek(SeekFrom::Start(off))
            .map_err(|e| io_err(&self.path, e))?;
        self.file
            .read_exact(&mut self.buf[off as usize..end as usize])
            .map_err(|e| io_err(&self.path, e))
    }

    /// The index: every key with its section and its nodes' ID ranges and offsets.
    pub fn index(&self) -> &[KeyIndex] {
        &self.index
    }

    /// The index entry of a key.
    pub fn key(&self, db: usize, key: &[u8]) -> Option<&KeyIndex> {
        self.index
            .iter()
            .find(|k| k.db as usize == db && k.key == key)
    }

    /// The stream under `key` with only its entries in `[start, end]` (whole nodes: a few
    /// more may come along), its groups and IDMP state; `None` if the snapshot has no
    /// such key, WRONGTYPE for another type. With `start > end`: no entries at all.
    pub fn stream(
        &mut self,
        db: usize,
        key: &[u8],
        start: StreamId,
        end: StreamId,
    ) -> Result<Option<Stream>, ReadError> {
        let Some(k) = self.key(db, key) else {
            return Ok(None);
        };
        if k.kind != 1 {
            return Err(ReadError::Reply(crate::error::CmdError::wrong_type()));
        }
        let mut want = vec![(k.offset, k.len)];
        want.extend(
            k.nodes
                .iter()
                .filter(|n| !(n.last < start || n.master > end))
                .map(|n| (n.offset, n.len)),
        );
        for (off, len) in want {
            self.fill(off, len)?;
        }
        snapshot::load_stream_range(&self.buf, db as u8, key, start, end)
            .map_err(|e| ReadError::Store(corrupt(&self.path, e.offset, &e.message)))
    }
}

/// What the logs did to a stream since the snapshot (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogTouch {
    Untouched,
    Appends,
    Other,
}

fn any_eq(args: &[Vec<u8>], words: &[&str]) -> bool {
    args.iter()
        .any(|a| words.iter().any(|w| a.eq_ignore_ascii_case(w.as_bytes())))
}

/// How the logs touched each of `keys` in database `db`. With `group`, anything but
/// an append counts as [`LogTouch::Other`] (group state must then be read from a full
/// load).
///
/// Each logged command is judged by its row's log effect in the command table
/// ([`table::Log`]). Conservative by design: a command is taken to touch a key whenever
/// one of its arguments equals the key (an append: its key argument); only appends
/// without their `unless` words (XADD without MAXLEN/MINID) count as appends, and,
/// without `group`, commands that change only group state (XACK, XCLAIM, XAUTOCLAIM,
/// XREADGROUP, XNACK, XGROUP but CREATE ... MKSTREAM) are ignored; FLUSHALL, SWAPDB and
/// FLUSHDB touch everything. Misjudging toward `Other` only costs a full load.
pub fn scan_logs(
    files: &StoreFiles,
    db: usize,
    keys: &[Vec<u8>],
    group: bool,
) -> Result<Vec<LogTouch>, PersistError> {
    let mut out = vec![LogTouch::Untouched; keys.len()];
    for i in 0..files.logs.len() {
        let data = files.log_bytes(i)?;
        let (items, stop) = plog::parse(&data);
        if let ParseStop::Corrupt { offset, message } = stop {
            return Err(corrupt(&files.logs[i].0, offset as u64, &message));
        }
        let mut cur = 0usize;
        for (_, item) in items {
            match item {
                LogItem::Command(argv) => {
                    let effect = table::log_effect(&argv);
                    if effect == Log::Select && argv.len() == 2 {
                        cur = std::str::from_utf8(&argv[1])
                            .ok()
                            .and_then(|s| s.parse().ok())
                            .unwrap_or(usize::MAX);
                        continue;
                    }
                    let global =
                        effect == Log::AllDatabases || (effect == Log::Database && cur == db);
                    for (k, t) in keys.iter().zip(out.iter_mut()) {
                        if *t == LogTouch::Other {
                            continue;
                        }
                        if global {
                            *t = LogTouch::Other;
                            continue;
                        }
                        let names_key = if let Log::Appends { .. } = effect {
                            argv.get(1) == Some(k)
                        } else {
                            argv[1..].iter().any(|a| a == k)
                        };
                        if !names_key {
                            continue;
                        }
                        if cur != db {
                            if effect == Log::OtherDb {
                                *t = LogTouch::Other;
                            }
                            continue;
                        }
                        match effect {
                            Log::Appends { unless } if !any_eq(&argv, unless) => {
                                *t = LogTouch::Appends;
                            }
                            Log::GroupState { unless } if !group && !any_eq(&argv, unless) => {}
                            _ => *t = LogTouch::Other,
                        }
                    }
                }
                LogItem::ConsumerTimes { key, .. } if group && cur == db => {
                    for (k, t) in keys.iter().zip(out.iter_mut()) {
                        if *k == key {
                            *t = LogTouch::Other;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

/// How a part is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    /// From the snapshot's node sections.
    Snapshot,
    /// The stream's XADDs in the logs, replayed on its snapshot header.
    Tail,
    /// From a full load of the store.
    Full,
}

/// One part of a read: the entries of one stream with IDs in `[start, end]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub key: Vec<u8>,
    pub kind: PartKind,
    pub start: StreamId,
    pub end: StreamId,
    /// Entries expected (from the snapshot index; 0 when unknown).
    pub rows: u64,
}

/// How [`plan`] splits each stream's range of snapshot nodes.
#[derive(Clone, Copy, Debug)]
pub struct Split {
    /// At most about this many entries a part.
    pub rows_per_part: u64,
    /// At least this many parts for the whole read (so that a small read still keeps
    /// every core busy), shared evenly among the streams that have snapshot entries in
    /// the range; a stream is split into at most one part per node.
    pub min_parts: u64,
}

impl Split {
    /// Parts of about `rows_per_part` entries, no minimum count.
    pub fn rows(rows_per_part: u64) -> Self {
        Split {
            rows_per_part,
            min_parts: 1,
        }
    }

    /// How many parts `total` entries in `nodes` nodes take.
    fn parts(self, total: u64, nodes: usize) -> u64 {
        let per = self.rows_per_part.max(1);
        total
            .div_ceil(per)
            .max(self.min_parts)
            .min(nodes as u64)
            .max(1)
    }
}

/// Split the read of `keys` (database `db`, IDs in `[start, end]`, with or without a
/// group) into parts as `split` says. Parts of one stream cover `[start, end]` without
/// overlap, in ID order.
pub fn plan(
    files: &StoreFiles,
    db: usize,
    keys: &[Vec<u8>],
    start: StreamId,
    end: StreamId,
    group: bool,
    split: Split,
) -> Result<Vec<Part>, ReadError> {
    if db >= NUM_DBS {
        return Err(ReadError::Reply(CmdError::db_index_out_of_range()));
    }
    let touch = scan_logs(files, db, keys, group)?;
    let snap = match &files.snapshot {
        Some((p, size)) => Some(SnapshotReader::open(p, *size)?),
        None => None,
    };
    // Each stream's snapshot nodes in the range (none: not a stream in the snapshot).
    let mut ranges = Vec::with_capacity(keys.len());
    for (key, &t) in keys.iter().zip(&touch) {
        let index = snap.as_ref().and_then(|s| s.key(db, key));
        if let Some(k) = index {
            if k.kind != 1 && t == LogTouch::Untouched {
                return Err(ReadError::Reply(crate::error::CmdError::wrong_type()));
            }
        }
        let nodes: Vec<_> = match index.filter(|k| k.kind == 1) {
            Some(k) => k
                .nodes
                .iter()
                .filter(|n| !(n.last < start || n.master > end))
                .collect(),
            None => Vec::new(),
        };
        ranges.push(nodes);
    }
    // min_parts is the read's: each stream with entries to split takes an even share.
    let splittable = ranges
        .iter()
        .filter(|nodes| nodes.iter().any(|n| n.live > 0))
        .count() as u64;
    let split = Split {
        min_parts: split.min_parts.div_ceil(splittable.max(1)),
        ..split
    };
    let mut parts = Vec::new();
    for ((key, t), nodes) in keys.iter().zip(touch).zip(ranges) {
        let snap_kind = if t == LogTouch::Other {
            PartKind::Full
        } else {
            PartKind::Snapshot
        };
        let mut covered: Option<StreamId> = None; // last ID covered by snapshot parts
        if !nodes.is_empty() {
            // Part k ends at the first node where the entries so far reach k/n of the
            // total: the parts come out even (two parts of 300,000 rather than 500,000
            // and 100,000), give or take a node; and a part never grows past
            // rows_per_part (1: a part per node).
            let live: u64 = nodes.iter().map(|n| n.live).sum();
            let count = u128::from(split.parts(live, nodes.len()));
            let (total, cap) = (u128::from(live), split.rows_per_part.max(1));
            let mut next_cut = 1u128;
            let mut part_start = start;
            let (mut acc, mut sum) = (0u64, 0u128);
            for (i, n) in nodes.iter().enumerate() {
                acc += n.live;
                sum += u128::from(n.live);
                let last_node = i + 1 == nodes.len();
                let even_cut = total > 0 && sum * count >= next_cut * total;
                if even_cut || acc >= cap || last_node {
                    // The next cut: the first k/n the entries so far have not reached.
                    next_cut = sum * count / total.max(1) + 1;
                    let part_end = n.last.min(end);
                    if part_start <= part_end {
                        parts.push(Part {
                            key: key.clone(),
                            kind: snap_kind,
                            start: part_start,
                            end: part_end,
                            rows: acc,
                        });
                    }
                    covered = Some(part_end);
                    acc = 0;
                    match part_end.incr() {
                        Some(next) => part_start = next,
                        None => break,
                    }
                }
            }
        }
        if t != LogTouch::Untouched {
            let tail_start = match covered {
                Some(c) => match c.incr() {
                    Some(n) => n.max(start),
                    None => continue,
                },
                None => start,
            };
            if tail_start <= end {
                parts.push(Part {
                    key: key.clone(),
                    kind: if t == LogTouch::Appends {
                        PartKind::Tail
                    } else {
                        PartKind::Full
                    },
                    start: tail_start,
                    end,
                    rows: 0,
                });
            }
        }
    }
    Ok(parts)
}

/// Check that `group` exists on each of `keys` that the plan does not read from a full
/// load (those are checked when read): in the snapshot's header of the stream (a stream
/// the logs only appended to has the snapshot's groups; a missing stream has no group).
pub fn check_group(
    files: &StoreFiles,
    db: usize,
    keys: &[Vec<u8>],
    parts: &[Part],
    group: &[u8],
) -> Result<(), ReadError> {
    let mut snap = match &files.snapshot {
        Some((p, size)) => Some(SnapshotReader::open(p, *size)?),
        None => None,
    };
    for key in keys {
        if parts
            .iter()
            .any(|p| p.key == *key && p.kind == PartKind::Full)
        {
            continue;
        }
        let s = match snap.as_mut() {
            Some(r) => r.stream(db, key, StreamId::MAX, StreamId::MIN)?,
            None => None,
        };
        if s.is_none_or(|s| s.groups.lookup(group).is_none()) {
            return Err(ReadError::Reply(nogroup(key, group)));
        }
    }
    Ok(())
}

fn push_from(
    out: &mut Entries,
    s: &Stream,
    key: &[u8],
    start: StreamId,
    end: StreamId,
    group: Option<&[u8]>,
) -> Result<(), ReadError> {
    let g = match group {
        Some(name) => match s.groups.lookup(name) {
            Some(g) => Some(s.groups.get(g)),
            None => return Err(ReadError::Reply(nogroup(key, name))),
        },
        None => None,
    };
    let si = out.add_key(key);
    out.push_stream(si, s, start, end, g);
    Ok(())
}

/// Read a [`PartKind::Snapshot`] or [`PartKind::Tail`] part into `out` (optionally only
/// the entries `group` has not acknowledged).
pub fn read_part(
    files: &StoreFiles,
    db: usize,
    part: &Part,
    group: Option<&[u8]>,
    out: &mut Entries,
) -> Result<(), ReadError> {
    files.check()?;
    let mut snap = match &files.snapshot {
        Some((p, size)) => Some(SnapshotReader::open(p, *size)?),
        None => None,
    };
    match part.kind {
        PartKind::Full => Err(ReadError::Reply(CmdError::full_load_part())),
        PartKind::Snapshot => {
            let Some(snap) = snap.as_mut() else {
                return Err(ReadError::Store(corrupt(
                    &files.dir,
                    0,
                    "the store has no snapshot",
                )));
            };
            match snap.stream(db, &part.key, part.start, part.end)? {
                Some(s) => push_from(out, &s, &part.key, part.start, part.end, group),
                None if group.is_some() => Err(ReadError::Reply(nogroup(
                    &part.key,
                    group.unwrap_or_default(),
                ))),
                None => Ok(()),
            }
        }
        PartKind::Tail => {
            let base = match snap.as_mut() {
                Some(s) => s.stream(db, &part.key, StreamId::MAX, StreamId::MIN)?,
                None => None,
            };
            match tail_stream(files, db, &part.key, base)? {
                Some(s) => push_from(out, &s, &part.key, part.start, part.end, group),
                None if group.is_some() => Err(ReadError::Reply(nogroup(
                    &part.key,
                    group.unwrap_or_default(),
                ))),
                None => Ok(()),
            }
        }
    }
}

/// Replay the XADDs of `key` (database `db`) from the logs on `base` (the stream's
/// snapshot header: last ID, IDMP state, groups; no entries), as loading the store would
/// run them: the entries the logs added.
fn tail_stream(
    files: &StoreFiles,
    db: usize,
    key: &[u8],
    base: Option<Stream>,
) -> Result<Option<Stream>, PersistError> {
    let mut ks = Keyspace::new(Config::default());
    if let Some(s) = base {
        let tracked = s.idmp.is_tracked();
        ks.dbs[db].set(key, Value::Stream(Box::new(s)), None);
        if tracked {
            ks.dbs[db].idmp_keys.insert(key.to_vec());
        }
    }
    for i in 0..files.logs.len() {
        let path = &files.logs[i].0;
        let data = files.log_bytes(i)?;
        let (items, stop) = plog::parse(&data);
        if let ParseStop::Corrupt { offset, message } = stop {
            return Err(corrupt(path, offset as u64, &message));
        }
        let mut cur = 0usize;
        let mut now = ks.clock.now_ms();
        for (offset, item) in items {
            match item {
                LogItem::Time(t) => now = t,
                LogItem::Config(n, v) => {
                    let _ = ks.config.set(&n, &v);
                }
                LogItem::Command(argv) => {
                    if argv[0].eq_ignore_ascii_case(b"SELECT") && argv.len() == 2 {
                        cur = std::str::from_utf8(&argv[1])
                            .ok()
                            .and_then(|s| s.parse().ok())
                            .unwrap_or(usize::MAX);
                        continue;
                    }
                    if cur != db
                        || !argv[0].eq_ignore_ascii_case(b"XADD")
                        || argv.get(1).map(|k| k.as_slice()) != Some(key)
                    {
                        continue;
                    }
                    let refs: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
                    ks.cron_idmp(now);
                    let mut ctx = Ctx::new(&mut ks, db, now, 2);
                    ctx.replaying = true;
                    ctx.deny_blocking = true;
                    // The logged XADD through its table row (arity) and its typed
                    // implementation: an error comes back typed, no reply is looked at.
                    let added =
                        command::resolve(&refs).and_then(|_| command::xadd_argv(&mut ctx, &refs));
                    if let Err(e) = added {
                        return Err(corrupt(
                            path,
                            offset as u64,
                            &format!("XADD failed on replay: {e}"),
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(match ks.dbs[db].remove(key) {
        Some(KeyEntry {
            value: Value::Stream(s),
            ..
        }) => Some(*s),
        _ => None,
    })
}

/// Load the whole store as the plan pinned it: the snapshot, then each log up to its
/// pinned size (as opening the store read-only would, at the time of the plan).
pub fn load(files: &StoreFiles, config: Config) -> Result<Keyspace, PersistError> {
    files.check()?;
    let mut ks = match &files.snapshot {
        Some((p, size)) => {
            let mut f = File::open(p).map_err(|e| io_err(p, e))?;
            let mut data = vec![0u8; *size as usize];
            f.read_exact(&mut data).map_err(|e| io_err(p, e))?;
            snapshot::load(&data, config).map_err(|e| corrupt(p, e.offset, &e.message))?
        }
        None => Keyspace::new(config),
    };
    for i in 0..files.logs.len() {
        let data = files.log_bytes(i)?;
        replay_log(&mut ks, &files.logs[i].0, &data)?;
    }
    Ok(ks)
}

/// Read a part from a keyspace [`load`] returned.
pub fn read_loaded(
    ks: &Keyspace,
    db: usize,
    part: &Part,
    group: Option<&[u8]>,
    out: &mut Entries,
) -> Result<(), ReadError> {
    if db >= NUM_DBS {
        return Err(ReadError::Reply(CmdError::db_index_out_of_range()));
    }
    match ks.dbs[db].get(&part.key) {
        None => match group {
            Some(g) => Err(ReadError::Reply(nogroup(&part.key, g))),
            None => Ok(()),
        },
        Some(KeyEntry {
            value: Value::Stream(s),
            ..
        }) => push_from(out, s, &part.key, part.start, part.end, group),
        Some(_) => Err(ReadError::Reply(CmdError::wrong_type())),
    }
}
