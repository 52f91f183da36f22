//! `_Dedup`: the dedup kernel as Python holds it (`xstreams.Deduper`,
//! `xstreams.spark.dedup`): one [`DedupSpec`] and the core's [`Deduper`] (each
//! producer's state, kept between calls or forgotten after each call's rows).
//!
//! Every method reads Arrow record batches; the grouping, ordering, IDMPAUTO hashing
//! and answers are the core's ([`xstreams_core::interop::dedup`]). Two ways in:
//! - rows in any order: grouped by producer and sorted by (time, ties, row) here;
//! - rows already sorted by (producer, time, ties) (`*_sorted`), for columns the first
//!   does not read: an IID column of another type than text, ties it does not order
//!   (float16, uint64, decimals...).
//!
//! Input a way does not take (nulls in the producer, time or IID columns, an empty
//! producer or IID, a row with no content value, other column types, a row XADD would
//! refuse) makes it return `None` and changes nothing: the caller then takes the next
//! way, or the store ([`Dedup::store_answers`]), which gives the same answers and the
//! store's errors.

use pyo3::prelude::*;
use xstreams_core::error::data;
use xstreams_core::interop::batch::RowOutcome;
use xstreams_core::interop::dedup::{
    group, Answers, DedupSpec, Deduper, IidRows, IidSource, Rec, Ties,
};

use crate::arrow::{batch_to_pyarrow, prepare, times_ms, values_across, xadd_arrow, xadd_reply};
use crate::arrow::{value_err, Src, XaddOpts};
use crate::dedup::Partition;
use crate::dedup::{auto_iids, byte_values, column, read_partition, tie_values, ArrowBytes};
use crate::dedup_output::{answer_batch, answer_columns, no_output, output, with_ids, DedupOutput};

/// The dedup kernel of one spec (see the module docs).
#[pyclass(module = "xstreams._xstreams", name = "_Dedup")]
pub(crate) struct Dedup {
    spec: DedupSpec,
    state: Deduper,
    /// The store path's store, made at its first use (in-memory, the spec's settings).
    store: Option<xstreams_core::Store>,
}

/// The rows of a partition: its batches and schema, or the answer to give at once.
enum Read {
    Rows(Vec<arrow_array::RecordBatch>, arrow_schema::SchemaRef),
    Empty,
    Mixed,
}

fn read(batches: &Bound<'_, PyAny>) -> PyResult<Read> {
    Ok(match read_partition(batches)? {
        Partition::Rows(b, s) => Read::Rows(b, s),
        Partition::Empty => Read::Empty,
        Partition::Mixed => Read::Mixed,
    })
}

impl Dedup {
    /// The answers of rows in any order; `None`: input this way does not take.
    fn kernel(
        &mut self,
        batches: &[arrow_array::RecordBatch],
        schema: &arrow_schema::Schema,
        ids: bool,
    ) -> PyResult<Option<Answers>> {
        let spec = &self.spec;
        let (p_idx, t_idx) = (column(schema, &spec.producer)?, column(schema, &spec.time)?);
        let n: usize = batches.iter().map(|b| b.num_rows()).sum();
        let Ok(times) = times_ms(batches, t_idx, &spec.time) else {
            return Ok(None);
        };
        let auto = match spec.content() {
            Some(c) => match auto_iids(batches, schema, c, n)? {
                Some(a) => Some(a),
                None => return Ok(None),
            },
            None => None,
        };
        let iid_rows = match (&auto, spec.iid_column()) {
            (Some(a), _) => IidRows::Hashes(&a.hashes),
            (None, Some(c)) => IidRows::Column(ArrowBytes {
                batches,
                idx: column(schema, c)?,
            }),
            (None, None) => return Ok(None),
        };
        let ties = if spec.ties_are_iid() {
            Ties::Iid
        } else {
            let mut cols = Vec::new();
            for t in spec.ties() {
                match tie_values(batches, column(schema, t)?) {
                    Some(v) => cols.push(v),
                    None => return Ok(None),
                }
            }
            Ties::Columns(cols)
        };
        let producers = ArrowBytes {
            batches,
            idx: p_idx,
        };
        let Some(grouped) = group(&producers, &times, &iid_rows, &ties) else {
            return Ok(None);
        };
        drop((times, ties, iid_rows));
        let mut answers = Answers::new(n, ids);
        let size = |rec: &Rec, iid: &[u8]| match &auto {
            Some(a) => a.sizes[rec.row as usize],
            None => spec.iid_entry_size(iid),
        };
        match self.state.answer_grouped(&grouped, size, &mut answers) {
            Ok(()) => Ok(Some(answers)),
            Err(_) => Ok(None),
        }
    }

    /// The answers of rows sorted by (producer, time, ties), in their order; `None`:
    /// input this way does not take.
    fn kernel_sorted(
        &mut self,
        batches: &[arrow_array::RecordBatch],
        schema: &arrow_schema::Schema,
        ids: bool,
    ) -> PyResult<Option<Answers>> {
        let spec = &self.spec;
        let (p_idx, t_idx) = (column(schema, &spec.producer)?, column(schema, &spec.time)?);
        let n: usize = batches.iter().map(|b| b.num_rows()).sum();
        let mut pids = Vec::with_capacity(n);
        if !byte_values(batches, p_idx, &mut pids) {
            return Ok(None);
        }
        let Ok(times) = times_ms(batches, t_idx, &spec.time) else {
            return Ok(None);
        };
        // Each row's IID and entry size: the IDMPAUTO hash of its content pairs, or the
        // IID column's value as text (its one field pair).
        let (auto, prepared) = match (spec.content(), spec.iid_column()) {
            (Some(c), _) => match auto_iids(batches, schema, c, n)? {
                Some(a) => (Some(a), Vec::new()),
                None => return Ok(None),
            },
            (None, Some(name)) => {
                let idx = column(schema, name)?;
                let Ok(srcs) = batches
                    .iter()
                    .map(|b| prepare(b.column(idx), name))
                    .collect::<PyResult<Vec<Src>>>()
                else {
                    return Ok(None);
                };
                (None, srcs)
            }
            (None, None) => return Ok(None),
        };
        let values = values_across(&prepared, if auto.is_some() { 0 } else { n });
        if auto.is_none() && values.iter().any(Option::is_none) {
            return Ok(None);
        }
        let row = |i: usize| match &auto {
            Some(a) => (pids[i], times[i], a.hashes[i].as_slice(), a.sizes[i]),
            None => {
                let v = values[i].unwrap_or_default();
                (pids[i], times[i], v, spec.iid_entry_size(v))
            }
        };
        let mut answers = Answers::new(n, ids);
        match self.state.answer_sorted(n, row, &mut answers) {
            Ok(()) => Ok(Some(answers)),
            Err(_) => Ok(None),
        }
    }

    /// `kernel` or `kernel_sorted` on a partition, its output batches for Spark.
    fn partition_with(
        &mut self,
        batches: &Bound<'_, PyAny>,
        keep_first: bool,
        large: bool,
        columns: Vec<String>,
        sorted: bool,
    ) -> PyResult<Option<DedupOutput>> {
        let answer = answer_columns(&columns)?;
        let (batches, schema) = match read(batches)? {
            Read::Rows(b, s) => (b, s),
            Read::Empty => return Ok(Some(no_output())),
            Read::Mixed => return Ok(None),
        };
        let ids = with_ids(&answer);
        let answers = if sorted {
            self.kernel_sorted(&batches, &schema, ids)?
        } else {
            self.kernel(&batches, &schema, ids)?
        };
        Ok(answers.map(|a| output(batches, a, answer, &columns, keep_first, large)))
    }

    /// `kernel` or `kernel_sorted` on a table's batches, the answers as one batch.
    fn answer_with<'py>(
        &mut self,
        py: Python<'py>,
        batches: &Bound<'py, PyAny>,
        ids: bool,
        sorted: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let answers = match read(batches)? {
            Read::Rows(b, s) if sorted => self.kernel_sorted(&b, &s, ids)?,
            Read::Rows(b, s) => self.kernel(&b, &s, ids)?,
            Read::Empty => Some(Answers::new(0, ids)),
            Read::Mixed => None,
        };
        match answers {
            Some(a) => Ok(Some(batch_to_pyarrow(py, answer_batch(&a, ids)?)?)),
            None => Ok(None),
        }
    }
}

#[pymethods]
impl Dedup {
    /// A kernel for `spec`'s columns and settings: exactly one of `iid` (a column) and
    /// `content` (the IDMPAUTO columns). `carry`: each producer's state stays for the
    /// next call; else it is forgotten after each call (every call holds all the rows
    /// of its producers, as a Spark partition does).
    #[new]
    #[pyo3(signature = (*, producer, iid, content, time, order, duration, maxsize, carry))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        producer: String,
        iid: Option<String>,
        content: Option<Vec<String>>,
        time: String,
        order: Option<String>,
        duration: i64,
        maxsize: i64,
        carry: bool,
    ) -> PyResult<Self> {
        let iid = match (iid, content) {
            (Some(i), None) => IidSource::Column(i),
            (None, Some(c)) => IidSource::Content(c),
            _ => return Err(value_err(data::DEDUP_IID_OR_CONTENT)),
        };
        let setting = |name: &str, v: i64| {
            u64::try_from(v).map_err(|_| value_err(data::dedup_setting(name, v.into())))
        };
        let spec = DedupSpec {
            producer,
            iid,
            time,
            order,
            duration: setting("duration", duration)?,
            maxsize: setting("maxsize", maxsize)?,
        };
        spec.check().map_err(value_err)?;
        let state = if carry {
            Deduper::new(&spec)
        } else {
            Deduper::per_call(&spec)
        };
        Ok(Dedup {
            spec,
            state,
            store: None,
        })
    }

    /// The answers of rows in any order (an iterable of record batches of one schema)
    /// as one batch in row order: `duplicate`, and with `ids` `entry_id`. `None`:
    /// input this way does not take (nothing changed).
    #[pyo3(signature = (batches, ids=false))]
    fn answer<'py>(
        &mut self,
        py: Python<'py>,
        batches: &Bound<'py, PyAny>,
        ids: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.answer_with(py, batches, ids, false)
    }

    /// [`Dedup::answer`] for rows already sorted by (producer, time, ties), answers in
    /// their order.
    #[pyo3(signature = (batches, ids=false))]
    fn answer_sorted<'py>(
        &mut self,
        py: Python<'py>,
        batches: &Bound<'py, PyAny>,
        ids: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.answer_with(py, batches, ids, true)
    }

    /// A Spark partition's output: each input batch with the answer `columns`
    /// (`entry_id`, `duplicate`, `original_id`) appended, with `keep_first` only the
    /// rows that are not duplicates; IDs as large strings with `large`.
    fn partition(
        &mut self,
        batches: &Bound<'_, PyAny>,
        keep_first: bool,
        large: bool,
        columns: Vec<String>,
    ) -> PyResult<Option<DedupOutput>> {
        self.partition_with(batches, keep_first, large, columns, false)
    }

    /// [`Dedup::partition`] for a partition already sorted by (producer, time, ties).
    fn partition_sorted(
        &mut self,
        batches: &Bound<'_, PyAny>,
        keep_first: bool,
        large: bool,
        columns: Vec<String>,
    ) -> PyResult<Option<DedupOutput>> {
        self.partition_with(batches, keep_first, large, columns, true)
    }

    /// The store's answers to a batch sorted by (producer, time, ties): each row sent as
    /// its XADD IDMP (or IDMPAUTO) to a private in-memory store with the clock at the
    /// row's time, a table of `id`, `duplicate` and `error` (as `xadd_batch` with
    /// `errors="return"`). A producer's stream is deleted once the next producer's rows
    /// start, and the last one's entries are trimmed after the batch (its IDMP state
    /// stays for the next): memory stays bounded by the IDMP maps.
    fn store_answers<'py>(
        &mut self,
        py: Python<'py>,
        batch: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let spec = &self.spec;
        let store = self.store.get_or_insert_with(|| {
            xstreams_core::Store::new(xstreams_core::Config {
                stream_idmp_duration: spec.duration as i64,
                stream_idmp_maxsize: spec.maxsize as i64,
                ..Default::default()
            })
        });
        let fields = match &spec.iid {
            IidSource::Column(c) => vec![c.clone()],
            IidSource::Content(cs) => cs.clone(),
        };
        let opts = XaddOpts {
            key: None,
            key_column: Some(spec.producer.clone()),
            fields: Some(fields),
            id: None,
            producer: Some(spec.producer.clone()),
            pid: None,
            iid: spec.iid_column().map(str::to_string),
            idmpauto: spec.content().is_some(),
            options: Vec::new(),
            trim: Vec::new(),
            clock: Some(spec.time.clone()),
            forget: true,
            db: 0,
            atomic: false,
            after: Vec::new(),
            _p: std::marker::PhantomData,
        };
        let outcomes: Vec<RowOutcome> = xadd_arrow(py, store, batch, &opts)?;
        xadd_reply(py, &outcomes, false)
    }

    /// The producers whose state is kept.
    #[getter]
    fn producers(&self) -> usize {
        self.state.producers()
    }

    /// Forget every producer.
    fn clear(&mut self) {
        self.state.clear();
        self.store = None;
    }
}
