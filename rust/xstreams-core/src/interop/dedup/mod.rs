//! The IDMP dedup of rows (`xstreams.Deduper`, `xstreams.spark.dedup`): for every row,
//! what `XADD <pid> IDMP <pid> <iid> * <field> <iid>` (or `IDMPAUTO <pid>` over content
//! columns) replies when each producer's rows go to that producer's own stream in
//! event-time order, with the server clock pinned at each row's time.
//!
//! - [`DedupSpec`]: which columns are the producer, the IID (or the IDMPAUTO content),
//!   the time and the ties, and the streams' IDMP settings.
//! - [`order`]: the rows grouped by producer and sorted by (time, ties, input row).
//! - [`Deduper`]: the answers, with each producer's state (its stream's last ID, its IDMP
//!   map, the cron's phase) kept between calls or forgotten after its rows.
//! - [`answers`]: each row's answer by input row.
//!
//! The answer is the one [`crate::Store::xadd_rows`] gives for those XADDs (tested
//! against it in `tests.rs`), computed without entries, commands or a keyspace: per
//! producer the stream's last ID (the next one from [`crate::structures::stream::auto_id`],
//! XADD's own rule), the stream's IDMP map of that one producer ([`Producer`], with the
//! same size eviction and time-expiry threshold as [`crate::structures::idmp::IdmpState`]),
//! and the IDMP sweep of the cron at the same whole-second ticks of the pinned clock
//! ([`crate::keyspace::db::due_tick`]). Producers are independent: the sweep only ever
//! drops IIDs of the producer being fed, since each producer has a stream of its own.
//! The map is held directly, not inside an `IdmpState`, which drops a producer the sweep
//! leaves empty and makes it anew on its next row (an allocation and a free per row
//! with short windows).
//!
//! A call answers all its rows or changes nothing: the rows are checked (an empty IID,
//! an entry too large) before any state moves, so a caller may take input the kernel
//! refuses to another path.

pub mod answers;
pub mod order;

use hashbrown::HashMap;

use crate::error::{data, CmdError};
use crate::keyspace::db::{due_tick, IDMP_SWEEP_PERIOD_MS};
use crate::structures::idmp::{auto_iid, Probe, Producer};
use crate::structures::stream::{auto_id, STREAM_LISTPACK_MAX_SIZE};
use crate::StreamId;

pub use answers::Answers;
pub use order::{float_key, group, ByteColumn, Grouped, IidRows, Rec, Tie, Ties};

/// Where a row's IID comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IidSource {
    /// The value of this column (sent as `IDMP <pid> <iid>`, with the column as the
    /// entry's one field).
    Column(String),
    /// `IDMPAUTO` over these columns, in this order (their field/value pairs; a null
    /// value leaves its field out).
    Content(Vec<String>),
}

/// What a dedup answers: its columns and its streams' IDMP settings. The defaults are
/// `xstreams.spark.dedup`'s: producer `pid`, IID `iid`, time `ts`, ties by the IID (or
/// the content columns), `stream-idmp-duration` 100 s and `stream-idmp-maxsize` 100.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DedupSpec {
    pub producer: String,
    pub iid: IidSource,
    /// The event time (ms, or a timestamp or date the caller converts to ms).
    pub time: String,
    /// The column ordering a producer's rows of equal time; `None`: the IID, or the
    /// content columns in turn.
    pub order: Option<String>,
    /// `stream-idmp-duration`, seconds (a stream takes 1..=86400).
    pub duration: u64,
    /// `stream-idmp-maxsize` (a stream takes 1..=10000).
    pub maxsize: u64,
}

impl Default for DedupSpec {
    fn default() -> Self {
        DedupSpec {
            producer: "pid".into(),
            iid: IidSource::Column("iid".into()),
            time: "ts".into(),
            order: None,
            duration: 100,
            maxsize: 100,
        }
    }
}

impl DedupSpec {
    /// What the kernel needs: settings of at least 1 (any larger value works, beyond the
    /// ranges XCFGSET takes) and content columns to hash; else the error's text.
    pub fn check(&self) -> Result<(), String> {
        if self.duration < 1 {
            return Err(data::dedup_setting("duration", self.duration.into()));
        }
        if self.maxsize < 1 {
            return Err(data::dedup_setting("maxsize", self.maxsize.into()));
        }
        if matches!(&self.iid, IidSource::Content(c) if c.is_empty()) {
            return Err(data::DEDUP_CONTENT_EMPTY.into());
        }
        Ok(())
    }

    /// The IID column, if the IID is a column.
    pub fn iid_column(&self) -> Option<&str> {
        match &self.iid {
            IidSource::Column(c) => Some(c),
            IidSource::Content(_) => None,
        }
    }

    /// The IDMPAUTO content columns, if the IID is their hash.
    pub fn content(&self) -> Option<&[String]> {
        match &self.iid {
            IidSource::Column(_) => None,
            IidSource::Content(c) => Some(c),
        }
    }

    /// The columns that order a producer's rows of equal time, in turn.
    pub fn ties(&self) -> Vec<&str> {
        match (&self.order, &self.iid) {
            (Some(o), _) => vec![o.as_str()],
            (None, IidSource::Column(c)) => vec![c.as_str()],
            (None, IidSource::Content(cs)) => cs.iter().map(String::as_str).collect(),
        }
    }

    /// Whether the ties are the IID column alone (then read from the grouped IIDs).
    pub fn ties_are_iid(&self) -> bool {
        self.order.is_none() && self.iid_column().is_some()
    }

    /// The entry size of a row whose IID column value is `iid` (its one field pair).
    pub fn iid_entry_size(&self, iid: &[u8]) -> u64 {
        self.iid_column().map_or(0, |c| c.len() as u64) + iid.len() as u64
    }
}

/// Each row's IDMPAUTO IID (the hash of its content pairs, [`auto_iid`]) and its
/// entry's size (field and value bytes), in input order.
#[derive(Debug, Default)]
pub struct AutoIids {
    pub hashes: Vec<[u8; 16]>,
    pub sizes: Vec<u64>,
}

impl AutoIids {
    pub fn with_capacity(n: usize) -> Self {
        AutoIids {
            hashes: Vec::with_capacity(n),
            sizes: Vec::with_capacity(n),
        }
    }

    /// Append `rows` rows: `values[c][row]` is content column `names[c]`'s value as
    /// XADD is sent it (`None`: null, the field left out). False at a row with no value
    /// at all (XADD would fail it with its arity error).
    pub fn push_rows(
        &mut self,
        names: &[&[u8]],
        values: &[Vec<Option<&[u8]>>],
        rows: usize,
    ) -> bool {
        let mut pairs: Vec<&[u8]> = Vec::with_capacity(2 * names.len());
        for row in 0..rows {
            pairs.clear();
            let mut size = 0u64;
            for (name, vals) in names.iter().zip(values) {
                if let Some(v) = vals[row] {
                    pairs.push(name);
                    pairs.push(v);
                    size += (name.len() + v.len()) as u64;
                }
            }
            if pairs.is_empty() {
                return false;
            }
            self.hashes.push(auto_iid(&pairs));
            self.sizes.push(size);
        }
        true
    }
}

/// One producer's stream as far as XADD IDMP's reply goes.
#[derive(Debug, Default)]
struct ProducerState {
    idmp: Producer,
    last: StreamId,
    next_sweep: Option<i64>,
}

impl ProducerState {
    /// The reply to this producer's next XADD, sent at `now` (ms) with a non-empty IID
    /// `iid`: (the entry's ID or the recorded one, duplicate). The caller has checked
    /// the IID and the entry size; the ID cannot run out (`now` is at most `i64::MAX`
    /// ms, far below the last ID).
    fn add(&mut self, duration: u64, maxsize: u64, now: i64, iid: &[u8]) -> (StreamId, bool) {
        // The cron runs before the command.
        if let Some(tick) = due_tick(&mut self.next_sweep, now, IDMP_SWEEP_PERIOD_MS) {
            self.idmp.expire(tick, duration);
        }
        let probe = Probe::new(iid);
        if let Some(id) = self.idmp.lookup_probe(&probe) {
            return (id, true);
        }
        let id = auto_id(self.last, now);
        self.last = id;
        self.idmp.record_probe(&probe, id, maxsize);
        (id, false)
    }
}

/// Why a call answered nothing: the first row XADD would refuse, or rows out of the
/// order [`Deduper::answer_sorted`] needs (its input place).
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// XADD's error for this row.
    Row(usize, CmdError),
    /// A producer's rows are not together, or its times go back.
    Unsorted(usize),
}

/// The dedup's answers, call after call (see the module docs).
#[derive(Debug)]
pub struct Deduper {
    duration: u64,
    maxsize: u64,
    carry: bool,
    producers: HashMap<Vec<u8>, ProducerState>,
}

/// XADD's checks of a row before it appends: a non-empty IID, an entry within the
/// size limit.
fn check_row(row: usize, iid: &[u8], size: u64) -> Result<(), Refused> {
    if iid.is_empty() {
        return Err(Refused::Row(row, CmdError::idmp_empty_iid()));
    }
    if size > STREAM_LISTPACK_MAX_SIZE {
        return Err(Refused::Row(row, CmdError::elements_too_large()));
    }
    Ok(())
}

impl Deduper {
    /// A dedup that remembers each producer between calls: a later call's rows of a
    /// producer are sent after its earlier calls' rows.
    pub fn new(spec: &DedupSpec) -> Self {
        Deduper {
            duration: spec.duration,
            maxsize: spec.maxsize,
            carry: true,
            producers: HashMap::new(),
        }
    }

    /// A dedup whose every call holds all the rows of its producers (a Spark partition):
    /// each producer is forgotten as soon as its rows are answered.
    pub fn per_call(spec: &DedupSpec) -> Self {
        Deduper {
            carry: false,
            ..Deduper::new(spec)
        }
    }

    /// The producers remembered.
    pub fn producers(&self) -> usize {
        self.producers.len()
    }

    /// Forget every producer.
    pub fn clear(&mut self) {
        self.producers.clear();
    }

    fn take(&mut self, pid: &[u8]) -> ProducerState {
        self.producers.remove(pid).unwrap_or_default()
    }

    fn put(&mut self, pid: &[u8], state: ProducerState) {
        if self.carry {
            self.producers.insert(pid.to_vec(), state);
        }
    }

    /// Answer grouped rows ([`order::group`]) into `answers` (by input row); `size`
    /// gives a row's entry size from its record and IID.
    pub fn answer_grouped(
        &mut self,
        g: &Grouped<'_>,
        size: impl Fn(&Rec, &[u8]) -> u64,
        answers: &mut Answers,
    ) -> Result<(), Refused> {
        for rec in &g.order {
            let iid = rec.iid(&g.iids);
            check_row(rec.row as usize, iid, size(rec, iid))?;
        }
        let (duration, maxsize) = (self.duration, self.maxsize);
        for (w, pid) in g.starts.windows(2).zip(&g.producers) {
            let mut state = self.take(pid);
            for rec in &g.order[w[0]..w[1]] {
                let (id, dup) = state.add(duration, maxsize, rec.time, rec.iid(&g.iids));
                answers.set(rec.row as usize, id, dup);
            }
            self.put(pid, state);
        }
        Ok(())
    }

    /// Answer rows already in the order they are sent in: each producer's rows together
    /// and in non-decreasing time. `row(i)` is row `i`'s (producer, time, IID, entry
    /// size), for `i` in `0..n`; answers by row.
    pub fn answer_sorted<'r>(
        &mut self,
        n: usize,
        row: impl Fn(usize) -> (&'r [u8], i64, &'r [u8], u64),
        answers: &mut Answers,
    ) -> Result<(), Refused> {
        let mut seen: hashbrown::HashSet<&[u8]> = hashbrown::HashSet::new();
        for i in 0..n {
            let (pid, time, iid, size) = row(i);
            if pid.is_empty() {
                return Err(Refused::Unsorted(i));
            }
            check_row(i, iid, size)?;
            if i > 0 {
                let (prev, prev_time, _, _) = row(i - 1);
                if prev == pid && time < prev_time {
                    return Err(Refused::Unsorted(i));
                }
                if prev != pid && !seen.insert(pid) {
                    return Err(Refused::Unsorted(i));
                }
            } else {
                seen.insert(pid);
            }
        }
        drop(seen);
        let (duration, maxsize) = (self.duration, self.maxsize);
        let mut i = 0;
        while i < n {
            let pid = row(i).0;
            let mut state = self.take(pid);
            while i < n {
                let (p, time, iid, _) = row(i);
                if p != pid {
                    break;
                }
                let (id, dup) = state.add(duration, maxsize, time, iid);
                answers.set(i, id, dup);
                i += 1;
            }
            self.put(pid, state);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
