//! What the client's typed reads collect while the store is locked ([`Collected`], a
//! [`ReadSink`]), and redis-py's values built from it after the lock is released.
//!
//! The store lock is never held while Python objects are created: allocating them may run
//! the cyclic garbage collector, and a finalizer calling into the same store would wait
//! for a lock its own thread holds. So a read copies what it serves into flat buffers (one
//! copy of the bytes, no per-field allocation, repeated field names kept once), and the
//! entries are built from them: `[(id, {field: value}), ...]`, with CLAIM's
//! `(id, fields, idle, deliveries)`, keyed by stream in the client's XREAD shape. The
//! buffers are kept per thread for the next read (`Collected::recycle`), so a steady
//! stream of reads of one size allocates none.
//!
//! When the store is free and the read short, it runs on the calling thread with the GIL
//! held (`client::locked_here`) through [`Direct`]: the values' `bytes` objects (not
//! tracked by the garbage collector, so creating them runs no collection) are made as the
//! entries are served, without the copy into `values`. Text values (`decode_responses`)
//! always take the buffers: their decoding errors are raised in reply order.

use std::cell::Cell;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use xstreams_core::structures::node::EntryView;
use xstreams_core::structures::read::ReadSink;
use xstreams_core::StreamId;

use super::{text, Fast, ReadShape};

/// How many of the most recent distinct field names a new name is compared with.
const NAME_WINDOW: usize = 8;

/// One served entry.
struct Rec {
    id: StreamId,
    /// End of its pairs in `pairs` (they start where the previous entry's end).
    pairs_end: usize,
    /// False for an entry of a consumer's history that no longer exists.
    present: bool,
    delivery: Option<(u64, u64)>,
}

/// The streams and entries a read served, in flat buffers.
#[derive(Default)]
pub(crate) struct Collected {
    /// Served streams: key and the index of their first entry.
    streams: Vec<(Vec<u8>, usize)>,
    entries: Vec<Rec>,
    /// Per pair: index into `names`, end of its value in `values`.
    pairs: Vec<(u32, usize)>,
    names: Vec<Vec<u8>>,
    values: Vec<u8>,
    /// The values as `bytes` objects, made by a [`Direct`] read (then the pairs' ends
    /// index this, not `values`).
    objs: Vec<Py<PyAny>>,
    direct: bool,
}

/// Above these sizes a read's buffers are freed, not kept for the next read.
const KEEP_VALUE_BYTES: usize = 1 << 20;
const KEEP_ENTRIES: usize = 1 << 14;

thread_local! {
    /// The buffers of this thread's last read, emptied, kept for the next one.
    static SPARE: Cell<Option<Collected>> = const { Cell::new(None) };
}

impl Collected {
    /// Empty buffers for a read: the last read's of this thread (their capacity kept, so
    /// a read of the same size allocates nothing), else new ones.
    pub(crate) fn new() -> Self {
        SPARE.with(Cell::take).unwrap_or_default()
    }

    /// Give the buffers back for the next read of this thread, unless they grew large.
    /// (Taken and given back whole, so a read started meanwhile, e.g. by a finalizer
    /// while this one's values are built, simply gets new buffers.)
    pub(crate) fn recycle(mut self) {
        if self.values.capacity() > KEEP_VALUE_BYTES || self.entries.capacity() > KEEP_ENTRIES {
            return;
        }
        self.streams.clear();
        self.entries.clear();
        self.pairs.clear();
        self.names.clear();
        self.values.clear();
        self.objs.clear();
        self.direct = false;
        SPARE.with(|s| s.set(Some(self)));
    }

    fn name_index(&mut self, name: &[u8]) -> u32 {
        let from = self.names.len().saturating_sub(NAME_WINDOW);
        if let Some(i) = self.names[from..].iter().rposition(|n| n == name) {
            return (from + i) as u32;
        }
        self.names.push(name.to_vec());
        (self.names.len() - 1) as u32
    }
}

impl ReadSink for Collected {
    fn stream(&mut self, key: &[u8]) {
        self.streams.push((key.to_vec(), self.entries.len()));
    }

    fn entry(&mut self, e: &EntryView<'_>, delivery: Option<(u64, u64)>) {
        for (f, v) in e.pairs() {
            let n = self.name_index(f);
            self.values.extend_from_slice(v);
            self.pairs.push((n, self.values.len()));
        }
        self.entries.push(Rec {
            id: e.id,
            pairs_end: self.pairs.len(),
            present: true,
            delivery,
        });
    }

    fn missing(&mut self, id: StreamId) {
        self.entries.push(Rec {
            id,
            pairs_end: self.pairs.len(),
            present: false,
            delivery: None,
        });
    }

    fn unstream(&mut self) {
        if self
            .streams
            .last()
            .is_some_and(|(_, first)| *first == self.entries.len())
        {
            self.streams.pop();
        }
    }
}

/// A [`Collected`] filled on the calling thread with the GIL held: each value becomes its
/// `bytes` object as it is served (see the module documentation).
pub(crate) struct Direct<'c, 'py> {
    c: &'c mut Collected,
    py: Python<'py>,
}

impl<'c, 'py> Direct<'c, 'py> {
    pub(crate) fn new(c: &'c mut Collected, py: Python<'py>) -> Self {
        c.direct = true;
        Direct { c, py }
    }
}

impl ReadSink for Direct<'_, '_> {
    fn stream(&mut self, key: &[u8]) {
        self.c.stream(key);
    }

    fn entry(&mut self, e: &EntryView<'_>, delivery: Option<(u64, u64)>) {
        let c = &mut *self.c;
        for (f, v) in e.pairs() {
            let n = c.name_index(f);
            c.objs.push(PyBytes::new(self.py, v).into_any().unbind());
            c.pairs.push((n, c.objs.len()));
        }
        c.entries.push(Rec {
            id: e.id,
            pairs_end: c.pairs.len(),
            present: true,
            delivery,
        });
    }

    fn missing(&mut self, id: StreamId) {
        self.c.missing(id);
    }

    fn unstream(&mut self) {
        self.c.unstream();
    }
}

/// A stream ID as redis-py returns it (bytes, or str with `decode_responses`).
pub(crate) fn id_obj<'py>(py: Python<'py>, id: StreamId, decode: bool) -> Bound<'py, PyAny> {
    let t = id.text();
    if decode {
        PyString::new(py, t.as_str()).into_any()
    } else {
        PyBytes::new(py, t.as_bytes()).into_any()
    }
}

/// Builds redis-py's values from a [`Collected`] read.
pub(crate) struct Builder<'a> {
    c: &'a Collected,
    decode: bool,
    /// Python objects of the field names, made on first use (so a decoding error is
    /// raised for the first undecodable text in reply order, as redis-py's).
    names: Vec<Option<Py<PyAny>>>,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(c: &'a Collected, f: &Fast) -> Self {
        Builder {
            c,
            decode: f.decode,
            names: (0..c.names.len()).map(|_| None).collect(),
        }
    }

    /// The object of field name `i`, made on first use and shared by every entry (the
    /// dicts hold a reference each; no count is taken for the lookup itself).
    fn name<'s, 'py>(&'s mut self, py: Python<'py>, i: u32) -> PyResult<&'s Bound<'py, PyAny>> {
        let slot = &mut self.names[i as usize];
        let n = match slot.take() {
            Some(n) => n,
            None => text(py, &self.c.names[i as usize], self.decode)?,
        };
        Ok(slot.insert(n).bind(py))
    }

    /// redis-py's `parse_stream_list` of entries `from..to`: `[(id, {f: v}), ...]`, with
    /// CLAIM `(id, {f: v}, idle, deliveries)`; a missing history entry has `{}`.
    pub(crate) fn entries(
        &mut self,
        py: Python<'_>,
        from: usize,
        to: usize,
        claim: bool,
    ) -> PyResult<Py<PyAny>> {
        let mut out = Vec::with_capacity(to - from);
        let mut pair = if from == 0 {
            0
        } else {
            self.c.entries[from - 1].pairs_end
        };
        let mut value_at = if pair == 0 {
            0
        } else {
            self.c.pairs[pair - 1].1
        };
        for rec in &self.c.entries[from..to] {
            let id = id_obj(py, rec.id, self.decode);
            let d = PyDict::new(py);
            let end = rec.pairs_end;
            while pair < end {
                let (n, v_end) = self.c.pairs[pair];
                let value = if self.c.direct {
                    self.c.objs[v_end - 1].clone_ref(py)
                } else {
                    text(py, &self.c.values[value_at..v_end], self.decode)?
                };
                d.set_item(self.name(py, n)?, value)?;
                value_at = v_end;
                pair += 1;
            }
            let t = match (claim, rec.delivery, rec.present) {
                (true, Some((idle, count)), true) => PyTuple::new(
                    py,
                    [
                        id,
                        d.into_any(),
                        idle.into_pyobject(py)?.into_any(),
                        count.into_pyobject(py)?.into_any(),
                    ],
                )?,
                _ => PyTuple::new(py, [id, d.into_any()])?,
            };
            out.push(t);
        }
        Ok(PyList::new(py, out)?.into_any().unbind())
    }

    /// Every entry (a single-stream read: XRANGE, XREVRANGE).
    pub(crate) fn all_entries(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let n = self.c.entries.len();
        self.entries(py, 0, n, false)
    }

    /// XREAD / XREADGROUP's value in the client's shape: `[[key, entries], ...]`,
    /// `{key: [entries]}` (RESP3) or `{key: entries}` (unified); empty when nothing was
    /// served.
    pub(crate) fn read(
        &mut self,
        py: Python<'_>,
        shape: ReadShape,
        claim: bool,
    ) -> PyResult<Py<PyAny>> {
        let c = self.c;
        let n = c.streams.len();
        let bounds = |i: usize| {
            let from = c.streams[i].1;
            let to = if i + 1 < n {
                c.streams[i + 1].1
            } else {
                c.entries.len()
            };
            (from, to)
        };
        match shape {
            ReadShape::Legacy => {
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    let key = text(py, &c.streams[i].0, self.decode)?;
                    let (from, to) = bounds(i);
                    let entries = self.entries(py, from, to, claim)?;
                    out.push(PyList::new(py, [key, entries])?);
                }
                Ok(PyList::new(py, out)?.into_any().unbind())
            }
            ReadShape::Resp3 | ReadShape::Unified => {
                let d = PyDict::new(py);
                for i in 0..n {
                    let key = text(py, &c.streams[i].0, self.decode)?;
                    let (from, to) = bounds(i);
                    let entries = self.entries(py, from, to, claim)?;
                    if shape == ReadShape::Resp3 {
                        d.set_item(key, PyList::new(py, [entries])?)?;
                    } else {
                        d.set_item(key, entries)?;
                    }
                }
                Ok(d.into_any().unbind())
            }
        }
    }
}
