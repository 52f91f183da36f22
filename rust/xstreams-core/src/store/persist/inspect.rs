//! Checking a store directory file by file without loading it into a keyspace (what
//! `xstreams check` reports), and the key details no command shows (for `xstreams dump`).
//!
//! The files are read with the parsers the load uses ([`Manifest::parse`],
//! [`snapshot::walk`], [`log::parse_replayable`]), so a file judged sound here is one the
//! load accepts, except for a command that fails on replay, which only a replay finds.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::time::Duration;

use super::log::{self, LogItem, ParseStop};
use super::snapshot::{self, Visit};
use super::{log_name, no_store, snapshot_name, Manifest, PersistError, LOCK, MANIFEST};
use crate::base::config::Config;
use crate::keyspace::db::{Keyspace, Value};
use crate::structures::id::StreamId;

/// What is wrong with a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// Listed in the MANIFEST but absent.
    Missing,
    /// Present but unreadable (permissions, I/O error).
    Unreadable,
    /// Not a valid file of its kind; the offset is where the damage is.
    Damaged,
    /// The last log ends inside a command, as a crash during a write leaves it; the offset
    /// is where the incomplete command starts (a writable open drops it).
    TruncatedTail,
}

impl ProblemKind {
    pub fn name(self) -> &'static str {
        match self {
            ProblemKind::Missing => "missing",
            ProblemKind::Unreadable => "unreadable",
            ProblemKind::Damaged => "damaged",
            ProblemKind::TruncatedTail => "truncated-tail",
        }
    }
}

/// The first problem found in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    pub offset: u64,
    pub message: String,
}

/// One section of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionSummary {
    pub offset: u64,
    pub tag: u8,
    /// Bytes of the whole section (13 + payload).
    pub len: u64,
    /// (db, key) of a string, stream or node section.
    pub key: Option<(u8, Vec<u8>)>,
}

/// What a sound snapshot holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotSummary {
    /// The header's creation time (Unix ms).
    pub created_ms: i64,
    pub streams: u64,
    pub strings: u64,
    /// Node sections.
    pub nodes: u64,
    /// Live entries of all streams.
    pub entries: u64,
    /// Every section in file order, the index last.
    pub sections: Vec<SectionSummary>,
}

impl SnapshotSummary {
    pub fn keys(&self) -> u64 {
        self.streams + self.strings
    }
}

/// What a log holds, up to where it stops.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogSummary {
    /// Commands replay applies (not SELECT, not the MULTI/EXEC wrappers).
    pub commands: u64,
    /// The same, per upper-cased command name.
    pub commands_by_name: BTreeMap<String, u64>,
    pub selects: u64,
    /// Annotation lines (`#...`), the `#XS:T` ones included.
    pub annotations: u64,
    /// `#XS:T` lines.
    pub times: u64,
    /// The last `#XS:T` time.
    pub last_time: Option<i64>,
    /// Where an incomplete last command starts (a problem either way: a cut tail in the
    /// last log, damage in an earlier one).
    pub cut_at: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Summary {
    Snapshot(SnapshotSummary),
    Log(LogSummary),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Snapshot,
    Log,
}

/// The check of one file the MANIFEST lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileReport {
    pub name: String,
    pub kind: FileKind,
    /// `None` when the file could not be read.
    pub size: Option<u64>,
    /// A snapshot's only when it is sound; a log's always (up to where it stops).
    pub summary: Option<Summary>,
    pub problem: Option<Problem>,
}

/// The process holding the writer lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockHolder {
    /// As written in `LOCK` (`None` if unreadable).
    pub pid: Option<u32>,
}

/// What [`inspect`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspection {
    pub manifest_size: u64,
    /// The MANIFEST, or its problem (then no file is checked).
    pub manifest: Result<Manifest, Problem>,
    /// The listed files, snapshot first, in MANIFEST order.
    pub files: Vec<FileReport>,
    /// Directory entries the MANIFEST does not list (other than MANIFEST and LOCK), sorted.
    pub leftovers: Vec<String>,
    /// Set when a writer holds the store open.
    pub lock_holder: Option<LockHolder>,
}

impl Inspection {
    /// Every problem, the MANIFEST's first.
    pub fn problems(&self) -> impl Iterator<Item = &Problem> + '_ {
        self.manifest
            .as_ref()
            .err()
            .into_iter()
            .chain(self.files.iter().filter_map(|f| f.problem.as_ref()))
    }

    /// The last time the files record: the latest `#XS:T` of the logs, or the snapshot's
    /// creation time if later.
    pub fn last_time(&self) -> Option<i64> {
        self.files
            .iter()
            .filter_map(|f| match &f.summary {
                Some(Summary::Snapshot(s)) => Some(s.created_ms),
                Some(Summary::Log(l)) => l.last_time,
                None => None,
            })
            .max()
    }
}

/// Check the store in `dir` without loading it (no lock is taken, nothing is changed).
/// `Err` only when there is no store there. A writer compacting meanwhile can replace
/// the files listed; when a problem shows up and the MANIFEST changed, the check starts
/// over (as [`super::load`] does).
pub fn inspect(dir: &Path) -> Result<Inspection, PersistError> {
    let mut attempt = 0u64;
    loop {
        let (report, manifest_bytes) = inspect_once(dir)?;
        attempt += 1;
        let changed = || fs::read(dir.join(MANIFEST)).ok() != manifest_bytes;
        if report.problems().next().is_none() || attempt >= 20 || !changed() {
            return Ok(report);
        }
        std::thread::sleep(Duration::from_millis(5 * attempt));
    }
}

fn inspect_once(dir: &Path) -> Result<(Inspection, Option<Vec<u8>>), PersistError> {
    let lock_holder = lock_holder(dir);
    let mut report = Inspection {
        manifest_size: 0,
        manifest: Err(Problem {
            kind: ProblemKind::Unreadable,
            offset: 0,
            message: String::new(),
        }),
        files: Vec::new(),
        leftovers: Vec::new(),
        lock_holder,
    };
    let data = match fs::read(dir.join(MANIFEST)) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(no_store(dir)),
        Err(e) => {
            report.manifest = Err(Problem {
                kind: ProblemKind::Unreadable,
                offset: 0,
                message: e.to_string(),
            });
            return Ok((report, None));
        }
    };
    report.manifest_size = data.len() as u64;
    let m = match Manifest::parse(&data) {
        Ok(m) => m,
        Err((offset, msg)) => {
            report.manifest = Err(Problem {
                kind: ProblemKind::Damaged,
                offset,
                message: msg.into(),
            });
            return Ok((report, Some(data)));
        }
    };
    if let Some(b) = m.base {
        let name = snapshot_name(b);
        report
            .files
            .push(check_file(dir, &name, FileKind::Snapshot, check_snapshot));
    }
    let last = m.incr.len() - 1;
    for (i, &seq) in m.incr.iter().enumerate() {
        let check = |d: &[u8]| check_log(d, i == last);
        report
            .files
            .push(check_file(dir, &log_name(seq), FileKind::Log, check));
    }
    let listed = m.files();
    if let Ok(entries) = fs::read_dir(dir) {
        report.leftovers = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != MANIFEST && n != LOCK && !listed.contains(n))
            .collect();
        report.leftovers.sort();
    }
    report.manifest = Ok(m);
    Ok((report, Some(data)))
}

fn check_file(
    dir: &Path,
    name: &str,
    kind: FileKind,
    check: impl FnOnce(&[u8]) -> (Option<Summary>, Option<Problem>),
) -> FileReport {
    let (size, (summary, problem)) = match fs::read(dir.join(name)) {
        Ok(data) => (Some(data.len() as u64), check(&data)),
        Err(e) => {
            let (kind, message) = if e.kind() == io::ErrorKind::NotFound {
                (
                    ProblemKind::Missing,
                    "listed in the MANIFEST but missing".to_string(),
                )
            } else {
                (ProblemKind::Unreadable, e.to_string())
            };
            (
                None,
                (
                    None,
                    Some(Problem {
                        kind,
                        offset: 0,
                        message,
                    }),
                ),
            )
        }
    };
    FileReport {
        name: name.to_string(),
        kind,
        size,
        summary,
        problem,
    }
}

fn check_snapshot(data: &[u8]) -> (Option<Summary>, Option<Problem>) {
    let mut s = SnapshotSummary::default();
    let walked = snapshot::walk(data, Config::default(), &mut |v| match v {
        Visit::Section(sec) => {
            s.nodes += u64::from(sec.tag == snapshot::TAG_NODE);
            s.sections.push(SectionSummary {
                offset: sec.offset,
                tag: sec.tag,
                len: sec.len,
                key: sec.key.map(|(db, k)| (db, k.to_vec())),
            });
        }
        Visit::Key(k) => match &k.value {
            Value::Str(_) => s.strings += 1,
            Value::Stream(st) => {
                s.streams += 1;
                s.entries += st.length;
            }
        },
    });
    match walked {
        Ok(meta) => {
            s.created_ms = meta.created_ms;
            (Some(Summary::Snapshot(s)), None)
        }
        Err(e) => (
            None,
            Some(Problem {
                kind: ProblemKind::Damaged,
                offset: e.offset,
                message: e.message,
            }),
        ),
    }
}

fn check_log(data: &[u8], is_last: bool) -> (Option<Summary>, Option<Problem>) {
    let (items, stop) = log::parse_replayable(data);
    let mut s = LogSummary::default();
    for (_, item) in &items {
        match item {
            LogItem::Command(argv) => {
                if argv.len() == 2 && argv[0].eq_ignore_ascii_case(b"SELECT") {
                    s.selects += 1;
                } else {
                    s.commands += 1;
                    let name = String::from_utf8_lossy(&argv[0]).to_ascii_uppercase();
                    *s.commands_by_name.entry(name).or_default() += 1;
                }
            }
            LogItem::Time(t) => {
                s.annotations += 1;
                s.times += 1;
                s.last_time = Some(*t);
            }
            _ => s.annotations += 1,
        }
    }
    let problem = match stop {
        ParseStop::End => None,
        ParseStop::Truncated { offset } => {
            s.cut_at = Some(offset as u64);
            Some(if is_last {
                Problem {
                    kind: ProblemKind::TruncatedTail,
                    offset: offset as u64,
                    message: "log ends inside a command".into(),
                }
            } else {
                Problem {
                    kind: ProblemKind::Damaged,
                    offset: offset as u64,
                    message: "log ends inside a command but is not the last log".into(),
                }
            })
        }
        ParseStop::Corrupt { offset, message } => Some(Problem {
            kind: ProblemKind::Damaged,
            offset: offset as u64,
            message,
        }),
    };
    (Some(Summary::Log(s)), problem)
}

// ---------------------------------------------------------------- lock holder

/// Who holds the writer lock of the store in `dir`, found without taking the lock: on
/// Linux from `/proc/locks`; elsewhere by probing with a shared lock, which a writer
/// opening at that very moment would see as held.
pub fn lock_holder(dir: &Path) -> Option<LockHolder> {
    let path = dir.join(LOCK);
    let file = File::open(&path).ok()?;
    let pid = fs::read_to_string(&path)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    let held = match held_in_proc_locks(&file) {
        Some(held) => held,
        None => match file.try_lock_shared() {
            Ok(()) => {
                let _ = file.unlock();
                false
            }
            Err(fs::TryLockError::WouldBlock) => true,
            Err(fs::TryLockError::Error(_)) => false,
        },
    };
    held.then_some(LockHolder { pid })
}

/// Is there a flock on `file`'s inode in `/proc/locks`? `None` when that cannot be told.
#[cfg(target_os = "linux")]
fn held_in_proc_locks(file: &File) -> Option<bool> {
    use std::os::unix::fs::MetadataExt;
    let md = file.metadata().ok()?;
    let locks = fs::read_to_string("/proc/locks").ok()?;
    let dev = md.dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    Some(locks.lines().any(|line| {
        let parts: Vec<&str> = line.split_whitespace().collect();
        parts.contains(&"FLOCK")
            && parts.iter().any(|p| {
                let f: Vec<&str> = p.split(':').collect();
                f.len() == 3
                    && u64::from_str_radix(f[0], 16).ok() == Some(major)
                    && u64::from_str_radix(f[1], 16).ok() == Some(minor)
                    && f[2].parse::<u64>().ok() == Some(md.ino())
            })
    }))
}

#[cfg(not(target_os = "linux"))]
fn held_in_proc_locks(_file: &File) -> Option<bool> {
    None
}

// ---------------------------------------------------------------- key details

/// A group's pending entries in the orders no command shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupInternals {
    pub name: Vec<u8>,
    /// The delivery-time list, head to tail (the NACK zone first).
    pub delivery_order: Vec<StreamId>,
    /// The NACK zone, in its FIFO order.
    pub nack_zone: Vec<StreamId>,
}

/// An IDMP producer's IIDs, oldest first (the eviction order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerInternals {
    pub pid: Vec<u8>,
    pub iids: Vec<(Vec<u8>, StreamId)>,
}

/// What no command shows about a key: its expiry time and, for a stream, its groups'
/// delivery order and NACK zone and its IDMP producers' IIDs (as the keyspace holds them:
/// run XINFO STREAM first to drop expired IIDs as it does).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyInternals {
    pub expire_at: Option<i64>,
    pub groups: Vec<GroupInternals>,
    pub producers: Vec<ProducerInternals>,
}

/// The [`KeyInternals`] of `key` in database `db`, if it exists.
pub fn key_internals(ks: &Keyspace, db: usize, key: &[u8]) -> Option<KeyInternals> {
    let entry = ks.dbs.get(db)?.get(key)?;
    let mut out = KeyInternals {
        expire_at: entry.expire_at,
        ..KeyInternals::default()
    };
    if let Value::Stream(s) = &entry.value {
        for (name, _, cg) in s.groups.iter() {
            let order: Vec<_> = cg.time_order().map(|(_, r)| (r.id, r.nacked)).collect();
            out.groups.push(GroupInternals {
                name: name.to_vec(),
                delivery_order: order.iter().map(|&(id, _)| id).collect(),
                nack_zone: order.iter().filter(|e| e.1).map(|&(id, _)| id).collect(),
            });
        }
        for (pid, p) in s.idmp.producers() {
            out.producers.push(ProducerInternals {
                pid: pid.to_vec(),
                iids: p.iter().map(|(iid, id)| (iid.to_vec(), id)).collect(),
            });
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::persist::{Fsync, Options};
    use crate::store::Store;
    use crate::Reply;

    const NOW: i64 = 1_700_000_000_000;

    fn open(dir: &Path, read_only: bool) -> Store {
        let opts = Options {
            fsync: Fsync::No,
            read_only,
            config_overrides: vec![("stream-node-max-entries".into(), "3".into())],
            ..Options::default()
        };
        let (s, _) = Store::open(dir, Config::default(), opts).expect("open");
        s.set_clock(Some(NOW));
        s
    }

    fn run(s: &Store, db: usize, cmd: &str) -> Reply {
        let args: Vec<&[u8]> = cmd.split(' ').map(str::as_bytes).collect();
        let r = s.execute_in(db, 2, &args);
        assert!(!matches!(r, Reply::Error(_)), "{cmd}: {r:?}");
        r
    }

    /// A store whose snapshot holds XDEL tombstones, a node left with tombstones by a
    /// trim, groups with a NACK zone, IDMP producers, a string and a second database;
    /// then more commands in the log after it.
    fn build(dir: &Path) {
        let s = open(dir, false);
        for i in 1..=12 {
            run(&s, 0, &format!("XADD s {i}-0 f v{i} g x"));
        }
        run(&s, 0, "XDEL s 2-0 3-0 8-0");
        run(&s, 0, "XTRIM s MINID 6-0"); // node [4,5,6]: 4 and 5 trimmed, tombstones stay
        run(&s, 0, "XGROUP CREATE s g 0");
        run(&s, 0, "XREADGROUP GROUP g alice COUNT 4 STREAMS s >");
        run(&s, 0, "XNACK s g FAIL IDS 2 9-0 6-0");
        run(&s, 0, "XADD t IDMP p1 first * a 1");
        run(&s, 0, "XADD t IDMP p1 second * a 2");
        run(&s, 0, "SET greeting hello PXAT 1700000060000");
        run(&s, 3, "XADD other 9-9 k v");
        s.compact().expect("compact");
        s.advance_clock(5);
        run(&s, 0, "XADD s 20-0 f after");
        run(&s, 0, "XDEL s 10-0");
        run(&s, 3, "XADD other 10-0 k v");
        s.close();
    }

    fn snapshot_summary(r: &Inspection) -> &SnapshotSummary {
        match &r.files[0].summary {
            Some(Summary::Snapshot(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    fn log_summary(f: &FileReport) -> &LogSummary {
        match &f.summary {
            Some(Summary::Log(l)) => l,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn healthy_store_with_tombstones() {
        let dir = tempfile::tempdir().unwrap();
        build(dir.path());
        let r = inspect(dir.path()).unwrap();
        assert_eq!(r.problems().next(), None, "{r:#?}");
        assert_eq!(r.lock_holder, None);
        assert!(r.leftovers.is_empty(), "{:?}", r.leftovers);
        let names: Vec<_> = r.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["snapshot.2.xss", "log.2.aof"]);
        let snap = snapshot_summary(&r);
        assert_eq!((snap.streams, snap.strings), (3, 1));
        // s: 12 added, 2-0 3-0 8-0 deleted, 1, 4, 5 trimmed.
        assert_eq!(snap.entries, 6 + 2 + 1);
        assert_eq!(snap.created_ms, NOW);
        let tags: Vec<_> = snap.sections.iter().map(|s| s.tag).collect();
        assert_eq!(tags.first(), Some(&1));
        assert_eq!(tags.last(), Some(&0xFF));
        assert_eq!(snap.sections.len() as u64, 2 + snap.keys() + snap.nodes);
        let s_nodes: Vec<_> = snap
            .sections
            .iter()
            .filter(|x| x.tag == 4 && x.key == Some((0, b"s".to_vec())))
            .collect();
        assert_eq!(
            s_nodes.len(),
            3,
            "the trimmed node [4,5,6] stays: it holds 6-0"
        );
        assert_eq!(
            snap.sections.iter().map(|s| s.len).sum::<u64>() + 48,
            r.files[0].size.unwrap()
        );
        // The nodes of s keep their tombstones in the snapshot: [4-6] two, [7-9] one.
        let data = fs::read(dir.path().join("snapshot.2.xss")).unwrap();
        let ks = snapshot::load(&data, Config::default()).unwrap();
        let Some(Value::Stream(st)) = ks.dbs[0].get(b"s").map(|e| &e.value) else {
            panic!("no stream s")
        };
        let deleted: Vec<u64> = st.nodes().map(|n| n.deleted()).collect();
        assert_eq!(deleted, [2, 1, 0]);
        let log = log_summary(&r.files[1]);
        assert_eq!(log.commands, 3);
        assert_eq!(
            log.commands_by_name
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect::<Vec<_>>(),
            [("XADD", 2), ("XDEL", 1)]
        );
        assert_eq!((log.selects, log.annotations), (1, 5));
        assert_eq!(log.last_time, Some(NOW + 5));
        assert_eq!((log.times, log.cut_at), (1, None));
        assert_eq!(r.last_time(), Some(NOW + 5));
        // The engine agrees: the store loads.
        let s = open(dir.path(), true);
        assert_eq!(run(&s, 0, "XLEN s"), Reply::Int(6));
        s.validate().unwrap();
    }

    #[test]
    fn damage_is_named_with_its_section() {
        let dir = tempfile::tempdir().unwrap();
        build(dir.path());
        let r = inspect(dir.path()).unwrap();
        let snap = snapshot_summary(&r);
        let path = dir.path().join(&r.files[0].name);
        let good = fs::read(&path).unwrap();
        for sec in &snap.sections {
            for delta in [0, sec.len / 2, sec.len - 1] {
                let mut bad = good.clone();
                bad[(sec.offset + delta) as usize] ^= 0x10;
                fs::write(&path, &bad).unwrap();
                let r = inspect(dir.path()).unwrap();
                let p = r.files[0].problem.clone().expect("damage found");
                assert_eq!(
                    (p.kind, p.offset),
                    (ProblemKind::Damaged, sec.offset),
                    "{p:?}"
                );
                assert!(r.files[0].summary.is_none());
                let e = crate::store::persist::load(dir.path(), Config::default()).unwrap_err();
                assert!(
                    e.message().contains(&format!("at offset {}:", sec.offset)),
                    "{e}"
                );
            }
        }
        // Every length of a cut snapshot is damage, never a panic.
        for n in (0..good.len()).step_by(7) {
            fs::write(&path, &good[..n]).unwrap();
            let r = inspect(dir.path()).unwrap();
            assert_eq!(
                r.files[0].problem.as_ref().unwrap().kind,
                ProblemKind::Damaged
            );
        }
        // Random bytes anywhere, header and trailer included: damage or sound, no panic.
        let mut x = 12345u64;
        for _ in 0..300 {
            let mut bad = good.clone();
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pos = (x >> 33) as usize % bad.len();
            bad[pos] = (x >> 13) as u8;
            fs::write(&path, &bad).unwrap();
            let r = inspect(dir.path()).unwrap();
            let loads = crate::store::persist::load(dir.path(), Config::default()).is_ok();
            assert_eq!(r.files[0].problem.is_none(), loads, "byte {pos}");
        }
    }

    #[test]
    fn cut_tails_missing_files_and_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        build(dir.path());
        let log = dir.path().join("log.2.aof");
        let data = fs::read(&log).unwrap();
        let last_cmd = data.windows(3).rposition(|w| w == b"*5\r").unwrap();
        fs::write(&log, &data[..data.len() - 4]).unwrap();
        let r = inspect(dir.path()).unwrap();
        let p = r.files[1].problem.clone().unwrap();
        assert_eq!(
            (p.kind, p.offset),
            (ProblemKind::TruncatedTail, last_cmd as u64)
        );
        assert_eq!(log_summary(&r.files[1]).cut_at, Some(last_cmd as u64));
        assert_eq!(log_summary(&r.files[1]).commands, 2);
        let (_, _, report) = crate::store::persist::load(dir.path(), Config::default()).unwrap();
        assert_eq!(report.truncated[0].1, last_cmd as u64);

        // The same cut in a log that is not the last one is damage.
        fs::write(dir.path().join("log.3.aof"), b"").unwrap();
        let m = "file snapshot.2.xss seq 2 type b\nfile log.2.aof seq 2 type i\n\
                 file log.3.aof seq 3 type i\n";
        fs::write(dir.path().join(MANIFEST), m).unwrap();
        let r = inspect(dir.path()).unwrap();
        let p = r.files[1].problem.clone().unwrap();
        assert_eq!((p.kind, p.offset), (ProblemKind::Damaged, last_cmd as u64));
        assert!(p.message.contains("not the last log"));
        assert_eq!(r.files[2].problem, None);

        fs::remove_file(&log).unwrap();
        fs::write(dir.path().join("snapshot.9.xss.tmp"), b"x").unwrap();
        let r = inspect(dir.path()).unwrap();
        assert_eq!(
            r.files[1].problem.as_ref().unwrap().kind,
            ProblemKind::Missing
        );
        assert_eq!((r.files[1].size, &r.files[1].summary), (None, &None));
        assert_eq!(r.leftovers, ["snapshot.9.xss.tmp"]);
    }

    #[test]
    fn manifest_problems() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            *inspect(&dir.path().join("nothing")).unwrap_err().kind(),
            crate::store::persist::ErrorKind::NotFound
        );
        build(dir.path());
        let cases: [(&[u8], u64); 4] = [
            (b"garbage\n", 0),
            (b"# c\nfile log.1.aof seq 1 type x\n", 4),
            (b"file snapshot.1.xss seq 1 type b\n", 0),
            (b"\xff\xfe", 0),
        ];
        for (text, offset) in cases {
            fs::write(dir.path().join(MANIFEST), text).unwrap();
            let r = inspect(dir.path()).unwrap();
            let p = r.manifest.clone().unwrap_err();
            assert_eq!((p.kind, p.offset), (ProblemKind::Damaged, offset));
            assert!(r.files.is_empty());
            assert_eq!(r.manifest_size, text.len() as u64);
            let e = crate::store::persist::load(dir.path(), Config::default()).unwrap_err();
            assert!(
                e.message()
                    .contains(&format!("offset {offset}: {}", p.message)),
                "{e}"
            );
        }
    }

    #[test]
    fn lock_holder_is_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let s = open(dir.path(), false);
        run(&s, 0, "XADD s 1-1 f v");
        let r = inspect(dir.path()).unwrap();
        assert_eq!(
            r.lock_holder,
            Some(LockHolder {
                pid: Some(std::process::id())
            })
        );
        s.close();
        assert_eq!(lock_holder(dir.path()), None);
        // The writer can still open: the check took no lock.
        let s = open(dir.path(), false);
        s.close();
    }

    #[test]
    fn key_internals_show_orders() {
        let dir = tempfile::tempdir().unwrap();
        build(dir.path());
        let s = open(dir.path(), true);
        let k = s.with_keyspace(|ks| key_internals(ks, 0, b"s")).unwrap();
        let id = |ms| StreamId::new(ms, 0);
        assert_eq!(k.groups[0].nack_zone, [id(9), id(6)]);
        assert_eq!(k.groups[0].delivery_order, [id(9), id(6), id(7), id(10)]);
        let t = s.with_keyspace(|ks| key_internals(ks, 0, b"t")).unwrap();
        let iids: Vec<_> = t.producers[0]
            .iids
            .iter()
            .map(|(i, _)| i.as_slice())
            .collect();
        assert_eq!(iids, [&b"first"[..], b"second"]);
        let g = s
            .with_keyspace(|ks| key_internals(ks, 0, b"greeting"))
            .unwrap();
        assert_eq!(g.expire_at, Some(1_700_000_060_000));
        assert!(s.with_keyspace(|ks| key_internals(ks, 1, b"s")).is_none());
        assert!(s.with_keyspace(|ks| key_internals(ks, 99, b"s")).is_none());
    }
}
