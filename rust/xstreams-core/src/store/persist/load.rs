//! Loading a store: the snapshot, then each log replayed in order ([`replay_log`]),
//! a cut tail of the last log reported, with retries when a compaction replaced the files
//! meanwhile ([`load`]).

use std::fs;
use std::io;
use std::path::Path;

use super::log::{self, LogItem, ParseStop};
use super::manifest::{log_name, read_manifest, snapshot_name, Manifest};
use super::snapshot;
use super::{corrupt, io_err, LoadReport, PersistError};
use crate::base::config::Config;
use crate::command::{self, Ctx};
use crate::keyspace::db::{KeyEntry, Keyspace, Value, NUM_DBS};

/// Apply a replayed consumer-times record.
fn apply_consumer_times(
    ks: &mut Keyspace,
    db: usize,
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    seen: i64,
    active: i64,
) -> Result<(), String> {
    let Some(KeyEntry {
        value: Value::Stream(s),
        ..
    }) = ks.dbs[db].get_mut(key)
    else {
        return Err("consumer times for a missing stream".into());
    };
    let g = s
        .groups
        .lookup(group)
        .ok_or("consumer times for a missing group")?;
    let cg = s.groups.get_mut(g);
    let c = match cg.consumer_idx(consumer) {
        Some(c) => c,
        None => cg.create_consumer(consumer, seen).expect("absent"),
    };
    let c = cg.consumer_mut(c);
    c.seen_time = seen;
    c.active_time = active;
    Ok(())
}

fn stream_mut<'a>(
    ks: &'a mut Keyspace,
    db: usize,
    key: &[u8],
) -> Result<&'a mut crate::structures::stream::Stream, String> {
    match ks.dbs[db].get_mut(key) {
        Some(KeyEntry {
            value: Value::Stream(s),
            ..
        }) => Ok(s),
        _ => Err("annotation for a missing stream".into()),
    }
}

/// Apply one log item (anything but MULTI/EXEC) to `ks`.
fn apply_item(
    ks: &mut Keyspace,
    db: &mut usize,
    now: &mut i64,
    item: LogItem,
) -> Result<bool, String> {
    match item {
        LogItem::Time(t) => {
            *now = t;
            ks.last_now = ks.last_now.max(t);
        }
        LogItem::Config(n, v) => ks.config.set(&n, &v).map_err(|e| e.to_string())?,
        LogItem::ConsumerTimes {
            key,
            group,
            consumer,
            seen,
            active,
        } => apply_consumer_times(ks, *db, &key, &group, &consumer, seen, active)?,
        LogItem::EntriesRead { key, group, value } => {
            let s = stream_mut(ks, *db, &key)?;
            let g = s
                .groups
                .lookup(&group)
                .ok_or("entries-read for a missing group")?;
            s.groups.get_mut(g).entries_read = value;
        }
        LogItem::EmptyProducer { .. } => {
            // Logs of earlier versions recorded the producer a failed XADD left; that
            // producer leaked (upstream issue #15840), so it is not recreated.
        }
        LogItem::PelToTail { key, group, id } => {
            let s = stream_mut(ks, *db, &key)?;
            let g = s
                .groups
                .lookup(&group)
                .ok_or("pending annotation for a missing group")?;
            let cg = s.groups.get_mut(g);
            let p = cg
                .pel_idx(&id)
                .ok_or("pending annotation for an entry not pending")?;
            cg.move_to_tail(p);
        }
        LogItem::Other => {}
        LogItem::Command(argv) => {
            if argv[0].eq_ignore_ascii_case(b"SELECT") && argv.len() == 2 {
                *db = std::str::from_utf8(&argv[1])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .filter(|&d: &usize| d < NUM_DBS)
                    .ok_or("bad SELECT")?;
                return Ok(false);
            }
            let refs: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
            ks.cron_idmp(*now);
            let mut ctx = Ctx::new(ks, *db, *now, 2);
            ctx.replaying = true;
            ctx.deny_blocking = true;
            if let Err(e) = command::try_execute(&mut ctx, &refs) {
                let name = String::from_utf8_lossy(&argv[0]).into_owned();
                return Err(format!("{name} failed on replay: {e}"));
            }
            return Ok(true);
        }
    }
    Ok(false)
}

/// Replay one log file into `ks`. Returns (commands replayed, cut tail if any); see
/// [`log::parse_replayable`] for what counts as a cut tail.
pub fn replay_log(
    ks: &mut Keyspace,
    path: &Path,
    data: &[u8],
) -> Result<(u64, Option<u64>), PersistError> {
    let (items, stop) = log::parse_replayable(data);
    let mut db = 0usize;
    let mut now = ks.clock.now_ms();
    let mut commands = 0u64;
    for (offset, item) in items {
        if apply_item(ks, &mut db, &mut now, item).map_err(|m| corrupt(path, offset as u64, &m))? {
            commands += 1;
        }
    }
    match stop {
        ParseStop::Corrupt { offset, message } => Err(corrupt(path, offset as u64, &message)),
        ParseStop::End => Ok((commands, None)),
        ParseStop::Truncated { offset } => Ok((commands, Some(offset as u64))),
    }
}

fn load_once(
    dir: &Path,
    manifest: &Manifest,
    config: Config,
) -> Result<(Keyspace, LoadReport), PersistError> {
    let missing = |p: &Path| corrupt(p, 0, "listed in the MANIFEST but missing");
    let open = |p: &Path| match fs::File::open(p) {
        Ok(f) => Ok(f),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(missing(p)),
        Err(e) => Err(io_err(p, e)),
    };
    let read = |p: &Path, mut f: fs::File| {
        let mut data = Vec::new();
        io::Read::read_to_end(&mut f, &mut data).map_err(|e| io_err(p, e))?;
        Ok::<_, PersistError>(data)
    };
    // Open every listed file before reading any: a compaction that deletes them later
    // cannot take an open file away, so the window for a concurrent writer is this loop.
    let base = match manifest.base {
        Some(b) => {
            let p = dir.join(snapshot_name(b));
            let f = open(&p)?;
            Some((b, p, f))
        }
        None => None,
    };
    let mut logs = Vec::with_capacity(manifest.incr.len());
    for &seq in &manifest.incr {
        let p = dir.join(log_name(seq));
        let f = open(&p)?;
        logs.push((seq, p, f));
    }
    let mut report = LoadReport::default();
    let mut ks = match base {
        Some((b, p, f)) => {
            let data = read(&p, f)?;
            report.snapshot = Some(snapshot_name(b));
            snapshot::load(&data, config).map_err(|e| corrupt(&p, e.offset, &e.message))?
        }
        None => Keyspace::new(config),
    };
    let last = logs.len().saturating_sub(1);
    for (i, (seq, p, f)) in logs.into_iter().enumerate() {
        let data = read(&p, f)?;
        let (n, cut) = replay_log(&mut ks, &p, &data)?;
        report.commands += n;
        report.logs.push(log_name(seq));
        if let Some(off) = cut {
            if i != last {
                return Err(corrupt(
                    &p,
                    off,
                    "log ends inside a command but is not the last log",
                ));
            }
            report
                .truncated
                .push((log_name(seq), off, data.len() as u64 - off));
        }
    }
    Ok((ks, report))
}

/// Load the keyspace of the store in `dir` without opening it for writing (no lock, no
/// repair): for tools and read-only opens. A writer compacting meanwhile can delete the
/// files an older MANIFEST lists; the load then starts over with the new MANIFEST.
pub fn load(dir: &Path, config: Config) -> Result<(Keyspace, Manifest, LoadReport), PersistError> {
    let mut attempts = 0;
    loop {
        let (text, manifest) = read_manifest(dir)?;
        match load_once(dir, &manifest, config.clone()) {
            Ok((ks, report)) => return Ok((ks, manifest, report)),
            Err(e) => {
                attempts += 1;
                let changed = read_manifest(dir).map(|(t, _)| t != text).unwrap_or(false);
                if !changed || attempts >= 100 {
                    return Err(e);
                }
            }
        }
    }
}
