//! IDMP dedup of whole producer histories without a store: what `XADD <pid> IDMP <pid>
//! <iid> * <field> <iid>` replies, row after row, when each producer's rows go to that
//! producer's own new stream in the given order with the server clock pinned at each
//! row's time (the Spark dedup's question, `xstreams.spark.dedup`).
//!
//! The answer is the one [`crate::Store::xadd_rows`] gives for those XADDs (tested
//! against it below), computed without entries, commands or a keyspace: per producer the
//! stream's last ID and the stream's IDMP map of that one producer ([`Producer`], the
//! map an [`crate::structures::idmp::IdmpState`] keeps per producer, with the same size eviction and
//! the same time-expiry threshold), and the IDMP sweep of the cron at the same
//! whole-second ticks of the pinned clock ([`crate::keyspace::db::due_tick`]). Producers are
//! independent: the sweep only ever drops IIDs of the producer being fed (a stream of an
//! earlier producer is never written again), so each producer starts from an empty map
//! and a fresh cron phase. The map is held directly, not inside an `IdmpState`: a state
//! drops a producer the sweep leaves empty and makes it anew on the next insert, which
//! with short windows (every IID expired before the producer's next row) cost an
//! allocation and a free per row.

use crate::command::XaddOutcome;
use crate::error::CmdError;
use crate::keyspace::db::{due_tick, IDMP_SWEEP_PERIOD_MS};
use crate::structures::idmp::{Probe, Producer};
use crate::structures::stream::STREAM_LISTPACK_MAX_SIZE;
use crate::StreamId;

/// The IDMP answers of one producer after another.
#[derive(Debug)]
pub struct IdmpDedup {
    duration: u64,
    maxsize: u64,
    producer: Producer,
    last: StreamId,
    next_sweep: Option<i64>,
}

impl IdmpDedup {
    /// A dedup with the stream settings `stream-idmp-duration` (seconds) and
    /// `stream-idmp-maxsize` that every producer's stream is created with.
    pub fn new(duration: u64, maxsize: u64) -> Self {
        IdmpDedup {
            duration,
            maxsize,
            producer: Producer::default(),
            last: StreamId::MIN,
            next_sweep: None,
        }
    }

    /// Start the next producer: a new stream, nothing remembered.
    pub fn next_producer(&mut self) {
        self.producer = Producer::default();
        self.last = StreamId::MIN;
        self.next_sweep = None;
    }

    /// The reply to the current producer's next XADD, sent at `now` (ms) with IID `iid`
    /// and field/value pairs of `pairs_len` bytes in all (for the entry size limit).
    /// Rows of one producer come in non-decreasing time order, as the caller sorted them.
    pub fn add(&mut self, now: i64, iid: &[u8], pairs_len: u64) -> Result<XaddOutcome, CmdError> {
        // The cron runs before the command, even one that fails.
        if let Some(tick) = due_tick(&mut self.next_sweep, now, IDMP_SWEEP_PERIOD_MS) {
            self.producer.expire(tick, self.duration);
        }
        if iid.is_empty() {
            return Err(CmdError::idmp_empty_iid());
        }
        let probe = Probe::new(iid);
        if let Some(id) = self.producer.lookup_probe(&probe) {
            return Ok(XaddOutcome {
                id,
                duplicate: true,
            });
        }
        // Stream::append for `*`: the clock's ms (negative clamps to 0), else the next
        // sequence; the last possible ID is refused.
        let ms = now.max(0) as u64;
        let id = if ms > self.last.ms {
            StreamId::new(ms, 0)
        } else {
            match self.last.incr() {
                Some(id) => id,
                None => return Err(CmdError::xadd_exhausted()),
            }
        };
        if pairs_len > STREAM_LISTPACK_MAX_SIZE {
            return Err(CmdError::elements_too_large());
        }
        self.last = id;
        self.producer.record_probe(&probe, id, self.maxsize);
        Ok(XaddOutcome {
            id,
            duplicate: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interop::batch::{Col, Idmp, RowOutcome, XaddRows};
    use crate::test_rng::Rng;
    use crate::Store;

    /// The store's answer: `xadd_rows` in dedup mode with per-row times, rows grouped by
    /// producer and sorted by time (what `xstreams.spark.dedup` sends).
    fn reference(duration: u64, maxsize: u64, rows: &[(Vec<u8>, i64, Vec<u8>)]) -> Vec<RowOutcome> {
        let cfg = crate::Config {
            stream_idmp_duration: duration as i64,
            stream_idmp_maxsize: maxsize as i64,
            ..Default::default()
        };
        let store = Store::new(cfg);
        let xadd = XaddRows {
            len: rows.len(),
            key: Some(Col::Rows(
                rows.iter().map(|r| Some(r.0.as_slice())).collect(),
            )),
            id: None,
            options: vec![],
            idmp: Idmp::Iid {
                pid: Col::Rows(rows.iter().map(|r| Some(r.0.as_slice())).collect()),
                iid: Col::Rows(rows.iter().map(|r| Some(r.2.as_slice())).collect()),
            },
            trim: vec![],
            fields: vec![(
                b"iid".as_slice(),
                Col::Rows(rows.iter().map(|r| Some(r.2.as_slice())).collect()),
            )],
            times: Some(rows.iter().map(|r| r.1).collect()),
            forget: true,
        };
        store.xadd_rows(0, &xadd).unwrap()
    }

    fn kernel(duration: u64, maxsize: u64, rows: &[(Vec<u8>, i64, Vec<u8>)]) -> Vec<RowOutcome> {
        let mut d = IdmpDedup::new(duration, maxsize);
        let mut prev: Option<&[u8]> = None;
        rows.iter()
            .map(|(pid, t, iid)| {
                if prev != Some(pid.as_slice()) {
                    d.next_producer();
                    prev = Some(pid);
                }
                match d.add(*t, iid, 3 + iid.len() as u64) {
                    Ok(o) if o.duplicate => RowOutcome::Duplicate(o.id),
                    Ok(o) => RowOutcome::Added(o.id),
                    Err(e) => RowOutcome::Error(e),
                }
            })
            .collect()
    }

    #[test]
    fn same_answers_as_the_store() {
        let base = std::env::var("DEDUP_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_1234_u64);
        let (mut dups, mut errors, mut re_added) = (0, 0, 0);
        for case in 0..200u64 {
            let seed = base.wrapping_add(case.wrapping_mul(0x9e37_79b9));
            let mut r = Rng::new(seed);
            let duration = 1 + r.below(4);
            let maxsize = 1 + r.below(12);
            let producers = 1 + r.below(5);
            let mut rows = Vec::new();
            for p in 0..producers {
                // Times around 0 (negative clamps), with repeats and jumps over seconds.
                let mut t = r.below(3000) as i64 - 1500;
                for _ in 0..r.below(120) {
                    t += match r.below(6) {
                        0 => 0,
                        1 => r.below(10) as i64,
                        2..=4 => r.below(900) as i64,
                        _ => r.below(6000) as i64,
                    };
                    let iid = if r.below(40) == 0 {
                        Vec::new() // an empty IID is an error row
                    } else {
                        format!("i{}", r.below(25)).into_bytes()
                    };
                    rows.push((format!("p{p}").into_bytes(), t, iid));
                }
            }
            let got = kernel(duration, maxsize, &rows);
            assert_eq!(
                got,
                reference(duration, maxsize, &rows),
                "seed {seed} (DEDUP_SEED={base}, case {case})"
            );
            dups += got
                .iter()
                .filter(|o| matches!(o, RowOutcome::Duplicate(_)))
                .count();
            errors += got
                .iter()
                .filter(|o| matches!(o, RowOutcome::Error(_)))
                .count();
            // An IID added twice as new: forgotten in between (time or size eviction).
            let mut seen = std::collections::HashSet::new();
            for (row, o) in rows.iter().zip(&got) {
                if matches!(o, RowOutcome::Added(_)) && !seen.insert((&row.0, &row.2)) {
                    re_added += 1;
                }
            }
        }
        assert!(
            dups > 100 && errors > 10 && re_added > 100,
            "{dups} {errors} {re_added}"
        );
    }
}
