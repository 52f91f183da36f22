//! XACK and XNACK: acknowledging pending entries, and releasing them into the NACK zone.

use super::GroupMut;
use crate::structures::id::StreamId;

/// How XNACK adjusts the delivery counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NackMode {
    /// Undo the delivery (counter - 1, not below 0).
    Silent,
    /// Keep the counter.
    Fail,
    /// Mark as permanently failed (counter = `i64::MAX`).
    Fatal,
}

impl NackMode {
    /// The counter after a NACK of an entry delivered `current` times (`retry_count`, when
    /// given, wins).
    fn count(self, current: u64, retry_count: Option<u64>) -> u64 {
        if let Some(r) = retry_count {
            return r;
        }
        match self {
            NackMode::Silent => current.saturating_sub(1),
            NackMode::Fail => current,
            NackMode::Fatal => i64::MAX as u64,
        }
    }

    /// The mode's keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            NackMode::Silent => "SILENT",
            NackMode::Fail => "FAIL",
            NackMode::Fatal => "FATAL",
        }
    }
}

/// `XNACK key group <SILENT|FAIL|FATAL> IDS numids id [id ...] [RETRYCOUNT count] [FORCE]`
/// as typed arguments.
#[derive(Clone, Debug)]
pub struct NackArgs<'a> {
    pub key: &'a [u8],
    pub group: &'a [u8],
    pub mode: NackMode,
    pub ids: &'a [StreamId],
    /// The delivery counter to set instead of the mode's adjustment.
    pub retry_count: Option<u64>,
    /// Also release entries of the stream that nobody holds.
    pub force: bool,
}

impl<'a> NackArgs<'a> {
    /// `XNACK key group mode IDS n ids...` with no option.
    pub fn new(key: &'a [u8], group: &'a [u8], mode: NackMode, ids: &'a [StreamId]) -> Self {
        NackArgs {
            key,
            group,
            mode,
            ids,
            retry_count: None,
            force: false,
        }
    }

    /// The command in canonical form (for the log and memory accounting).
    pub fn to_argv(&self) -> Vec<Vec<u8>> {
        let mut v = vec![
            b"XNACK".to_vec(),
            self.key.to_vec(),
            self.group.to_vec(),
            self.mode.keyword().as_bytes().to_vec(),
            b"IDS".to_vec(),
            self.ids.len().to_string().into_bytes(),
        ];
        v.extend(self.ids.iter().map(|id| id.to_bytes()));
        if let Some(n) = self.retry_count {
            v.push(b"RETRYCOUNT".to_vec());
            v.push(n.to_string().into_bytes());
        }
        if self.force {
            v.push(b"FORCE".to_vec());
        }
        v
    }
}

impl GroupMut<'_> {
    /// XACK: drop the pending records of `ids`; how many were pending.
    pub fn ack(&mut self, ids: &[StreamId]) -> u64 {
        let mut acked = 0;
        for &id in ids {
            if self.stream.groups.remove_pending_id(self.g, id) {
                acked += 1;
            }
        }
        acked
    }

    /// XNACK: release the pending records of `ids` into the NACK zone with their
    /// counters adjusted by `mode`; with `force`, entries of the stream nobody holds are
    /// added there too. How many were released.
    pub fn nack(
        &mut self,
        ids: &[StreamId],
        mode: NackMode,
        retry_count: Option<u64>,
        force: bool,
    ) -> u64 {
        let mut nacked = 0;
        for &id in ids {
            match self.group().pel_idx(&id) {
                Some(p) => {
                    let cg = self.group_mut();
                    let n = mode.count(cg.record(p).delivery_count, retry_count);
                    cg.set_delivery_count(p, n);
                    cg.nack(p);
                }
                None if force => {
                    if !self.stream.contains(id) {
                        continue;
                    }
                    let n = mode.count(0, retry_count);
                    self.stream.groups.add_nacked(self.g, id, n);
                }
                None => continue,
            }
            nacked += 1;
        }
        nacked
    }
}
