//! A small, literal reference model of Redis 8.8 streams, written from `t_stream.c`
//! (NOT from the xstreams engine). It keeps Redis's own data layout where the
//! observable behaviour depends on it:
//!
//! * a stream is a list of listpack nodes holding live *and deleted* entries, so node
//!   splitting (`streamAppendItem`), whole-node removal (`streamTrim`,
//!   `streamIteratorRemoveEntry`) and `radix-tree-keys` can be compared;
//! * a group keeps its PEL as a map plus the time-ordered list as a `Vec` with the NACK
//!   zone tail kept as a *position* (`pel_nack_tail`), exactly as the C code does;
//! * listpack byte sizes are recomputed from scratch from the listpack encoding rules
//!   (`lpEncodeGetType`, `lpEncodeBacklen`).
//!
//! Every command handler returns the reply Redis would send (errors are returned as
//! `Reply::Error` of the line's prefix, compared by prefix).

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use xstreams_core::{Reply, StreamId};

pub type Id = StreamId;

pub const MAX: Id = StreamId::MAX;
pub const MIN: Id = StreamId::MIN;
pub const LLONG_MAX: u64 = i64::MAX as u64;

pub fn incr(id: Id) -> Option<Id> {
    if id.seq == u64::MAX {
        if id.ms == u64::MAX {
            None
        } else {
            Some(Id::new(id.ms + 1, 0))
        }
    } else {
        Some(Id::new(id.ms, id.seq + 1))
    }
}

pub fn decr(id: Id) -> Option<Id> {
    if id.seq == 0 {
        if id.ms == 0 {
            None
        } else {
            Some(Id::new(id.ms - 1, u64::MAX))
        }
    } else {
        Some(Id::new(id.ms, id.seq - 1))
    }
}

pub fn bulk(b: &[u8]) -> Reply {
    Reply::Bulk(b.to_vec())
}

pub fn rid(id: Id) -> Reply {
    Reply::Bulk(format!("{}-{}", id.ms, id.seq).into_bytes())
}

pub fn err(prefix: &str) -> Reply {
    Reply::Error(xstreams_core::error::CmdError::from_peer_line(prefix))
}

fn kv_map(pairs: Vec<(&str, Reply)>) -> Reply {
    Reply::Map(
        pairs
            .into_iter()
            .map(|(k, v)| (bulk(k.as_bytes()), v))
            .collect(),
    )
}

mod claim_commands;
mod group;
mod group_commands;
mod listpack;
mod node;
mod stream;
mod stream_commands;

pub use group::*;
pub use listpack::*;
pub use node::*;
pub use stream::*;

// ------------------------------------------------------------------ keyspace + commands

/// How an XREAD/XREADGROUP id argument was given.
#[derive(Clone, Copy, Debug)]
pub enum ReadId {
    Id(Id),
    /// `>` (XREADGROUP)
    Gt,
    /// `$` (XREAD)
    Dollar,
    /// `+` (XREAD)
    Plus,
}

#[derive(Clone, Copy, Debug)]
pub enum GroupId {
    Dollar,
    Id(Id),
    /// `-` / `+` (SETID parses non-strictly)
    Minus,
    Plus,
}

#[derive(Clone, Copy, Debug)]
pub enum NackMode {
    Silent,
    Fail,
    Fatal,
}

#[derive(Clone, Debug)]
pub struct Model {
    pub cfg: NodeCfg,
    pub keys: BTreeMap<Vec<u8>, MStream>,
    /// Time of the next tick of redis-server's once-a-second IDMP cron (phased by the
    /// first command).
    pub next_sweep: Option<i64>,
}

pub(super) fn nogroup() -> Reply {
    err("NOGROUP")
}

impl Model {
    pub fn new(cfg: NodeCfg) -> Self {
        Model {
            cfg,
            keys: BTreeMap::new(),
            next_sweep: None,
        }
    }

    pub fn default_trim_limit(&self, approx: bool, limit: Option<u64>) -> u64 {
        match limit {
            Some(l) => l,
            None if approx => {
                let mut l = 100i64.wrapping_mul(self.cfg.max_entries);
                if l <= 0 {
                    l = 10_000;
                }
                if l > 1_000_000 {
                    l = 1_000_000;
                }
                l as u64
            }
            None => 0,
        }
    }
}
