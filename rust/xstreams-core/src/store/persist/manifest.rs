//! The MANIFEST: which snapshot and logs are live in a store's directory, and the names
//! of those files.

use std::fs;
use std::io;
use std::path::Path;

use super::{corrupt, io_err, PersistError};

/// The live files of a store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub base: Option<u64>,
    pub incr: Vec<u64>,
}

pub const MANIFEST: &str = "MANIFEST";
pub const LOCK: &str = "LOCK";

pub fn snapshot_name(seq: u64) -> String {
    format!("snapshot.{seq}.xss")
}

pub fn log_name(seq: u64) -> String {
    format!("log.{seq}.aof")
}

impl Manifest {
    pub(crate) fn encode(&self) -> String {
        let mut s = String::from("# xstreams store manifest\n");
        if let Some(b) = self.base {
            s.push_str(&format!("file {} seq {b} type b\n", snapshot_name(b)));
        }
        for i in &self.incr {
            s.push_str(&format!("file {} seq {i} type i\n", log_name(*i)));
        }
        s
    }

    /// Parse a MANIFEST's bytes; an error is (offset, message).
    pub fn parse(data: &[u8]) -> Result<Manifest, (u64, &'static str)> {
        let text = std::str::from_utf8(data).map_err(|_| (0, "manifest is not text"))?;
        let mut m = Manifest::default();
        let mut offset = 0u64;
        for line in text.split_inclusive('\n') {
            let l = line.trim_end();
            let here = offset;
            offset += line.len() as u64;
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let parts: Vec<&str> = l.split(' ').collect();
            let bad = (here, "unrecognised manifest line");
            if parts.len() != 6 || parts[0] != "file" || parts[2] != "seq" || parts[4] != "type" {
                return Err(bad);
            }
            let seq: u64 = parts[3].parse().map_err(|_| bad)?;
            match parts[5] {
                "b" if parts[1] == snapshot_name(seq) && m.base.is_none() => m.base = Some(seq),
                "i" if parts[1] == log_name(seq) => m.incr.push(seq),
                _ => return Err(bad),
            }
        }
        if m.incr.is_empty() {
            return Err((0, "manifest lists no log"));
        }
        Ok(m)
    }

    /// The files listed, snapshot first, then the logs in replay order.
    pub fn files(&self) -> Vec<String> {
        self.base
            .map(snapshot_name)
            .into_iter()
            .chain(self.incr.iter().map(|&i| log_name(i)))
            .collect()
    }
}

pub(crate) fn no_store(dir: &Path) -> PersistError {
    PersistError::no_store(dir, MANIFEST)
}

pub(crate) fn read_manifest(dir: &Path) -> Result<(Vec<u8>, Manifest), PersistError> {
    let mpath = dir.join(MANIFEST);
    let data = match fs::read(&mpath) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(no_store(dir)),
        Err(e) => return Err(io_err(&mpath, e)),
    };
    let m = Manifest::parse(&data).map_err(|(off, msg)| corrupt(&mpath, off, msg))?;
    Ok((data, m))
}
