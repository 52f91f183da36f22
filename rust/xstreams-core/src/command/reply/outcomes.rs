//! Replies built from the typed outcomes of commands: an entry, a read ([`ReplySink`]),
//! XCLAIM / XAUTOCLAIM, XPENDING. The command handlers and nothing else turn outcomes into
//! [`Reply`] values; the typed API hands the outcomes themselves to its callers.

use crate::structures::id::StreamId;
use crate::structures::node::EntryView;
use crate::structures::pel::{
    AutoclaimOutcome, ClaimOutcome, ClaimedEntry, PendingRow, PendingSummary,
};
use crate::structures::read::ReadSink;
use crate::structures::stream::DeleteOutcome;

use super::Reply;

/// The reply for one entry: `[id, [field, value, ...]]`.
pub fn entry_reply(e: &EntryView<'_>) -> Reply {
    let mut fv = Vec::with_capacity(e.num_fields() * 2);
    for (f, v) in e.pairs() {
        fv.push(Reply::Bulk(f.to_vec()));
        fv.push(Reply::Bulk(v.to_vec()));
    }
    Reply::Array(vec![Reply::id(&e.id), Reply::Array(fv)])
}

fn claimed_reply(entries: Vec<ClaimedEntry>, justid: bool) -> Reply {
    Reply::Array(
        entries
            .into_iter()
            .map(|e| {
                if justid {
                    Reply::id(&e.id)
                } else {
                    Reply::Array(vec![
                        Reply::id(&e.id),
                        Reply::Array(e.pairs.into_iter().map(Reply::Bulk).collect()),
                    ])
                }
            })
            .collect(),
    )
}

/// XCLAIM's reply: the claimed entries (or their IDs with JUSTID).
impl From<ClaimOutcome> for Reply {
    fn from(o: ClaimOutcome) -> Reply {
        claimed_reply(o.entries, o.justid)
    }
}

/// XAUTOCLAIM's reply: `[next-start, [entries...], [deleted-ids...]]`.
impl From<AutoclaimOutcome> for Reply {
    fn from(o: AutoclaimOutcome) -> Reply {
        Reply::Array(vec![
            Reply::id(&o.next),
            claimed_reply(o.entries, o.justid),
            Reply::Array(o.deleted.iter().map(Reply::id).collect()),
        ])
    }
}

/// XPENDING's summary reply: `[count, first, last, [[consumer, "count"], ...]]` (nulls
/// when nothing is pending).
impl From<PendingSummary> for Reply {
    fn from(s: PendingSummary) -> Reply {
        let Some((first, last)) = s.bounds else {
            return Reply::Array(vec![Reply::Int(0), Reply::Nil, Reply::Nil, Reply::NilArray]);
        };
        let consumers = s
            .consumers
            .into_iter()
            .map(|(name, n)| {
                Reply::Array(vec![
                    Reply::Bulk(name),
                    Reply::Bulk(n.to_string().into_bytes()),
                ])
            })
            .collect();
        Reply::Array(vec![
            Reply::Int(s.count as i64),
            Reply::id(&first),
            Reply::id(&last),
            Reply::Array(consumers),
        ])
    }
}

/// XPENDING's extended reply: `[[id, consumer, idle, deliveries], ...]`.
impl From<Vec<PendingRow>> for Reply {
    fn from(rows: Vec<PendingRow>) -> Reply {
        Reply::Array(
            rows.into_iter()
                .map(|r| {
                    Reply::Array(vec![
                        Reply::id(&r.id),
                        Reply::Bulk(r.consumer),
                        Reply::Int(r.idle),
                        Reply::Int(r.delivery_count as i64),
                    ])
                })
                .collect(),
        )
    }
}

/// XDELEX's and XACKDEL's reply: one code per ID (`-1` not found, `1` deleted, `2` kept
/// because still referenced).
impl From<Vec<DeleteOutcome>> for Reply {
    fn from(codes: Vec<DeleteOutcome>) -> Reply {
        Reply::Array(
            codes
                .into_iter()
                .map(|c| {
                    Reply::Int(match c {
                        DeleteOutcome::NotFound => -1,
                        DeleteOutcome::Deleted => 1,
                        DeleteOutcome::Referenced => 2,
                    })
                })
                .collect(),
        )
    }
}

/// Builds the reply of a read: `[[key, [entry, ...]], ...]` in RESP2, a map in RESP3.
#[derive(Debug, Default)]
pub struct ReplySink {
    served: Vec<(Reply, Vec<Reply>)>,
}

impl ReplySink {
    pub fn new() -> Self {
        ReplySink::default()
    }

    /// Was any stream served?
    pub fn is_empty(&self) -> bool {
        self.served.is_empty()
    }

    /// The entries of a single-stream read (XRANGE) as the reply's array.
    pub fn into_entries(self) -> Reply {
        Reply::Array(
            self.served
                .into_iter()
                .next()
                .map(|(_, v)| v)
                .unwrap_or_default(),
        )
    }

    /// The XREAD / XREADGROUP reply (a null array when no stream was served).
    pub fn into_reply(self, protocol: u8) -> Reply {
        if self.served.is_empty() {
            return Reply::NilArray;
        }
        let served = self.served.into_iter().map(|(k, v)| (k, Reply::Array(v)));
        if protocol >= 3 {
            Reply::Map(served.collect())
        } else {
            Reply::Array(served.map(|(k, v)| Reply::Array(vec![k, v])).collect())
        }
    }

    fn current(&mut self) -> &mut Vec<Reply> {
        if self.served.is_empty() {
            self.served.push((Reply::Nil, Vec::new()));
        }
        &mut self.served.last_mut().expect("a stream is open").1
    }
}

impl ReadSink for ReplySink {
    fn stream(&mut self, key: &[u8]) {
        self.served.push((Reply::bulk(key), Vec::new()));
    }

    fn entry(&mut self, e: &EntryView<'_>, delivery: Option<(u64, u64)>) {
        let mut fv = Vec::with_capacity(e.num_fields() * 2);
        for (f, v) in e.pairs() {
            fv.push(Reply::Bulk(f.to_vec()));
            fv.push(Reply::Bulk(v.to_vec()));
        }
        let mut item = vec![Reply::id(&e.id), Reply::Array(fv)];
        if let Some((idle, count)) = delivery {
            item.push(Reply::Int(idle as i64));
            item.push(Reply::Int(count as i64));
        }
        self.current().push(Reply::Array(item));
    }

    fn missing(&mut self, id: StreamId) {
        self.current()
            .push(Reply::Array(vec![Reply::id(&id), Reply::NilArray]));
    }

    fn unstream(&mut self) {
        if self.served.last().is_some_and(|(_, v)| v.is_empty()) {
            self.served.pop();
        }
    }
}
