//! `_idmp_dedup_sorted`: the Spark dedup's kernel for a partition the caller has already
//! sorted by (producer, time, ties) -- the input [`crate::dedup::_idmp_dedup`] does not
//! take: an IID column of another type than text, a tie column of a type it does not
//! order (float16, uint64, decimals..., among the content columns of IDMPAUTO too).
//! Python sorts the partition (Arrow's sort, the same one the store path uses) and this
//! kernel answers each row in that order with
//! [`xstreams_core::interop::dedup::IdmpDedup`], as `Store.xadd_batch` would have: the IID is the
//! IID column's value, or the IDMPAUTO hash ([`xstreams_core::structures::idmp::auto_iid`]) of the
//! content columns' field/value pairs, values converted to text as `xadd_batch` converts
//! them and nulls left out. The rows come back in the sorted order, with the answer
//! columns appended.
//!
//! Input it does not take makes it return `None` (the caller then runs the store path,
//! which raises the store's error): producers that are not non-empty text or binary, a
//! producer's rows not all together, times out of order within a producer, an empty IID,
//! a row with no content value, a value with no text form, a row XADD would refuse.

use hashbrown::HashSet;
use pyo3::prelude::*;
use xstreams_core::interop::dedup::IdmpDedup;

use crate::arrow::{prepare, times_ms, values_across, Src};
use crate::dedup::{auto_iids, byte_values, column, read_partition, IidFrom, Partition};
use crate::dedup_output::{answer_columns, no_output, output, Answers, DedupOutput};

/// Dedup one sorted partition (see the module docs): `iid` names the IID column, or
/// `content` the IDMPAUTO columns (one of them is given). `None`: input it does not take.
#[pyfunction]
#[pyo3(signature = (batches, producer, time, iid, content, duration, maxsize, keep_first, large, columns))]
#[allow(clippy::too_many_arguments)]
pub fn _idmp_dedup_sorted<'py>(
    batches: &Bound<'py, PyAny>,
    producer: &str,
    time: &str,
    iid: Option<&str>,
    content: Option<Vec<String>>,
    duration: u64,
    maxsize: u64,
    keep_first: bool,
    large: bool,
    columns: Vec<String>,
) -> PyResult<Option<DedupOutput>> {
    let answer = answer_columns(&columns)?;
    let (batches, schema) = match read_partition(batches)? {
        Partition::Rows(b, s) => (b, s),
        Partition::Empty => return Ok(Some(no_output())),
        Partition::Mixed => return Ok(None),
    };
    let mode = IidFrom::new(iid, content)?;
    let (p_idx, t_idx) = (column(&schema, producer)?, column(&schema, time)?);
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    let mut pids = Vec::with_capacity(n);
    if !byte_values(&batches, p_idx, &mut pids) || pids.iter().any(|p| p.is_empty()) {
        return Ok(None);
    }
    let Ok(times) = times_ms(&batches, t_idx, time) else {
        return Ok(None);
    };
    // Each row's IID and entry size: the IDMPAUTO hash of its content pairs, or the IID
    // column's value as text (its one field pair).
    let (hashes, sizes, prepared, iid_name) = match &mode {
        IidFrom::Content(content) => match auto_iids(&batches, &schema, content, n)? {
            Some(a) => (a.hashes, a.sizes, Vec::new(), ""),
            None => return Ok(None),
        },
        IidFrom::Column(name) => {
            let idx = column(&schema, name)?;
            let Ok(srcs) = batches
                .iter()
                .map(|b| prepare(b.column(idx), name))
                .collect::<PyResult<Vec<Src>>>()
            else {
                return Ok(None);
            };
            (Vec::new(), Vec::new(), srcs, *name)
        }
    };
    let auto = matches!(mode, IidFrom::Content(_));
    let values = values_across(&prepared, if auto { 0 } else { n });
    let mut kernel = IdmpDedup::new(duration, maxsize);
    let mut answers = Answers::new(n, &answer);
    let mut done: HashSet<&[u8]> = HashSet::new();
    for row in 0..n {
        if row == 0 || pids[row] != pids[row - 1] {
            // A producer's rows must be together: its stream's state starts here.
            if row > 0 {
                done.insert(pids[row - 1]);
            }
            if done.contains(pids[row]) {
                return Ok(None);
            }
            kernel.next_producer();
        } else if times[row] < times[row - 1] {
            return Ok(None);
        }
        let (id_bytes, size): (&[u8], u64) = if auto {
            (&hashes[row], sizes[row])
        } else {
            match values[row] {
                Some(v) => (v, (iid_name.len() + v.len()) as u64),
                None => return Ok(None),
            }
        };
        match kernel.add(times[row], id_bytes, size) {
            Ok(o) => answers.set(row, o.id, o.duplicate),
            Err(_) => return Ok(None),
        }
    }
    drop((done, pids, values));
    Ok(Some(output(
        batches, answers, answer, &columns, keep_first, large,
    )))
}
