//! The snapshot file: the whole keyspace in a compact binary form, with an index of
//! every key and of every stream node's file offset so a reader can load one stream, or
//! one ID range of it, without reading the rest. The byte layout is described in
//! `docs/format.md`; every section carries a CRC-32 so damage is detected, never loaded.

mod read;
mod write;

pub use read::{
    decode_node, load, load_stream_range, read_header, read_index, read_section, tag_name, walk,
    Dec, SectionRef, SnapshotError, SnapshotKey, SnapshotMeta, Visit,
};
pub use write::write;

use crate::structures::id::StreamId;

pub const MAGIC: &[u8; 8] = b"XSTRSNP1";
pub const TRAILER_MAGIC: &[u8; 8] = b"XSTREND1";
pub const VERSION: u32 = 1;

pub const TAG_CONFIG: u8 = 1;
pub const TAG_STRING: u8 = 2;
pub const TAG_STREAM: u8 = 3;
pub const TAG_NODE: u8 = 4;
pub const TAG_INDEX: u8 = 0xFF;

/// Where a node lives in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeIndex {
    pub master: StreamId,
    pub last: StreamId,
    pub live: u64,
    pub offset: u64,
    pub len: u64,
}

/// Where a key lives in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyIndex {
    pub db: u8,
    pub key: Vec<u8>,
    /// 0 = string, 1 = stream.
    pub kind: u8,
    pub offset: u64,
    pub len: u64,
    pub nodes: Vec<NodeIndex>,
}
