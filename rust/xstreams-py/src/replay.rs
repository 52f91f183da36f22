//! Replay of persisted stores for parallel readers (the Spark data source): plan a read
//! into parts in one process, read the parts in others. Thin wrappers of
//! `xstreams_core::interop::batch::replay`; plans and parts travel as plain tuples (picklable).

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use xstreams_core::interop::batch::replay::{self, Part, PartKind, ReadError, StoreFiles};
use xstreams_core::interop::batch::Entries;
use xstreams_core::keyspace::db::Keyspace;
use xstreams_core::{Config, StreamId};

use crate::arrow::{entries_to_py_list, schema_arg, EntriesShape};
use crate::convert::arg_bytes;
use crate::errors::{cmd_err, persist_err};
use crate::store::guarded;

type FilesTuple = (String, String, Option<(String, u64)>, Vec<(String, u64)>);
type PartTuple = (Vec<u8>, String, String, String, u64);

fn read_err(py: Python<'_>, e: ReadError) -> PyErr {
    match e {
        ReadError::Store(e) => persist_err(py, &e),
        ReadError::Reply(e) => cmd_err(py, &e),
    }
}

fn path_str(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

fn files_to_tuple(f: &StoreFiles) -> FilesTuple {
    (
        path_str(&f.dir),
        f.manifest.clone(),
        f.snapshot.as_ref().map(|(p, s)| (path_str(p), *s)),
        f.logs.iter().map(|(p, s)| (path_str(p), *s)).collect(),
    )
}

fn files_from_tuple(t: FilesTuple) -> StoreFiles {
    StoreFiles {
        dir: PathBuf::from(t.0),
        manifest: t.1,
        snapshot: t.2.map(|(p, s)| (PathBuf::from(p), s)),
        logs: t
            .3
            .into_iter()
            .map(|(p, s)| (PathBuf::from(p), s))
            .collect(),
    }
}

fn id_str(id: StreamId) -> String {
    format!("{}-{}", id.ms, id.seq)
}

fn parse_id(s: &str) -> PyResult<StreamId> {
    let (ms, seq) = s
        .split_once('-')
        .ok_or_else(|| PyValueError::new_err(format!("bad part ID {s:?}")))?;
    let p = |v: &str| {
        v.parse::<u64>()
            .map_err(|_| PyValueError::new_err(format!("bad part ID {s:?}")))
    };
    Ok(StreamId::new(p(ms)?, p(seq)?))
}

fn kind_name(k: PartKind) -> &'static str {
    match k {
        PartKind::Snapshot => "snapshot",
        PartKind::Tail => "tail",
        PartKind::Full => "full",
    }
}

fn part_to_tuple(p: &Part) -> PartTuple {
    (
        p.key.clone(),
        kind_name(p.kind).to_string(),
        id_str(p.start),
        id_str(p.end),
        p.rows,
    )
}

fn part_from_tuple(t: PartTuple) -> PyResult<Part> {
    let kind = match t.1.as_str() {
        "snapshot" => PartKind::Snapshot,
        "tail" => PartKind::Tail,
        "full" => PartKind::Full,
        other => return Err(PyValueError::new_err(format!("bad part kind {other:?}"))),
    };
    Ok(Part {
        key: t.0,
        kind,
        start: parse_id(&t.2)?,
        end: parse_id(&t.3)?,
        rows: t.4,
    })
}

fn shape(decode: bool, signed: bool, schema: Option<&Bound<'_, PyAny>>) -> PyResult<EntriesShape> {
    Ok(EntriesShape {
        stream_column: true,
        binary: !decode,
        signed_ids: signed,
        schema: schema_arg(schema)?,
    })
}

/// Plan a read of ``streams`` in the store at ``path``: ``(files, parts)``, where
/// ``files`` pins the store's files (snapshot and log sizes) and each part is
/// ``(stream, kind, start_id, end_id, expected_rows)`` with ``kind`` one of
/// ``"snapshot"``, ``"tail"``, ``"full"`` (see ``docs/spark.md``). ``start``/``end`` take
/// XRANGE's forms (``-``, ``+``, incomplete and exclusive ``(`` IDs). Each stream's
/// snapshot range is split into even parts of at most about ``rows_per_part`` entries,
/// and the read into at least ``min_parts`` parts (an even share for each stream with
/// snapshot entries in the range, while it has that many nodes).
#[pyfunction]
#[pyo3(signature = (path, streams, start=None, end=None, group=None, db=0, rows_per_part=500_000, min_parts=1))]
#[allow(clippy::too_many_arguments)]
pub fn _replay_plan<'py>(
    py: Python<'py>,
    path: PathBuf,
    streams: &Bound<'py, PyAny>,
    start: Option<&Bound<'py, PyAny>>,
    end: Option<&Bound<'py, PyAny>>,
    group: Option<&Bound<'py, PyAny>>,
    db: usize,
    rows_per_part: u64,
    min_parts: u64,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut keys = Vec::new();
    for k in streams.try_iter()? {
        keys.push(arg_bytes(py, &k?)?.into_owned());
    }
    let start = match start {
        Some(s) => xstreams_core::command::args::range_start(&arg_bytes(py, s)?)
            .map_err(|e| cmd_err(py, &e))?,
        None => StreamId::MIN,
    };
    let end = match end {
        Some(s) => xstreams_core::command::args::range_end(&arg_bytes(py, s)?)
            .map_err(|e| cmd_err(py, &e))?,
        None => StreamId::MAX,
    };
    let group = match group {
        Some(g) => Some(arg_bytes(py, g)?.into_owned()),
        None => None,
    };
    let res = guarded(py, || -> Result<(StoreFiles, Vec<Part>), ReadError> {
        let files = StoreFiles::open(&path)?;
        let parts = replay::plan(
            &files,
            db,
            &keys,
            start,
            end,
            group.is_some(),
            replay::Split {
                rows_per_part,
                min_parts,
            },
        )?;
        if let Some(g) = &group {
            replay::check_group(&files, db, &keys, &parts, g)?;
        }
        Ok((files, parts))
    })?;
    let (files, parts) = res.map_err(|e| read_err(py, e))?;
    let plist = PyList::empty(py);
    for p in &parts {
        plist.append(part_to_tuple(p))?;
    }
    PyTuple::new(
        py,
        [
            files_to_tuple(&files).into_pyobject(py)?.into_any(),
            plist.into_any(),
        ],
    )
}

/// Read a ``"snapshot"`` or ``"tail"`` part: a list of ``pyarrow.RecordBatch`` (``stream``,
/// ``id``, ``ms``, ``seq``, ``fields`` or the ``schema``'s typed columns) of at most
/// ``max_rows`` rows each. ``signed`` gives ``ms``/``seq`` as int64.
#[pyfunction]
#[pyo3(signature = (files, part, group=None, db=0, decode=true, schema=None, signed=true, max_rows=65536))]
#[allow(clippy::too_many_arguments)]
pub fn _replay_read<'py>(
    py: Python<'py>,
    files: FilesTuple,
    part: PartTuple,
    group: Option<&Bound<'py, PyAny>>,
    db: usize,
    decode: bool,
    schema: Option<&Bound<'py, PyAny>>,
    signed: bool,
    max_rows: usize,
) -> PyResult<Bound<'py, PyList>> {
    let files = files_from_tuple(files);
    let part = part_from_tuple(part)?;
    let group = match group {
        Some(g) => Some(arg_bytes(py, g)?.into_owned()),
        None => None,
    };
    let shape = shape(decode, signed, schema)?;
    let entries = guarded(py, || {
        let mut out = Entries::new();
        replay::read_part(&files, db, &part, group.as_deref(), &mut out).map(|_| out)
    })?
    .map_err(|e| read_err(py, e))?;
    entries_to_py_list(py, &entries, &shape, max_rows)
}

/// A store loaded whole, read-only, as a plan pinned its files (for ``"full"`` parts);
/// keep one per process and read many parts from it.
#[pyclass(module = "xstreams._xstreams", name = "_ReplayStore", frozen)]
pub struct ReplayStore {
    ks: Arc<Keyspace>,
}

#[pymethods]
impl ReplayStore {
    #[new]
    fn new(py: Python<'_>, files: FilesTuple) -> PyResult<Self> {
        let files = files_from_tuple(files);
        let ks = guarded(py, || replay::load(&files, Config::default()))?
            .map_err(|e| persist_err(py, &e))?;
        Ok(ReplayStore { ks: Arc::new(ks) })
    }

    /// Read one part (any kind): as ``_replay_read``.
    #[pyo3(signature = (part, group=None, db=0, decode=true, schema=None, signed=true, max_rows=65536))]
    #[allow(clippy::too_many_arguments)]
    fn read<'py>(
        &self,
        py: Python<'py>,
        part: PartTuple,
        group: Option<&Bound<'py, PyAny>>,
        db: usize,
        decode: bool,
        schema: Option<&Bound<'py, PyAny>>,
        signed: bool,
        max_rows: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let part = part_from_tuple(part)?;
        let group = match group {
            Some(g) => Some(arg_bytes(py, g)?.into_owned()),
            None => None,
        };
        let shape = shape(decode, signed, schema)?;
        let ks = self.ks.clone();
        let entries = guarded(py, || {
            let mut out = Entries::new();
            replay::read_loaded(&ks, db, &part, group.as_deref(), &mut out).map(|_| out)
        })?
        .map_err(|e| read_err(py, e))?;
        entries_to_py_list(py, &entries, &shape, max_rows)
    }
}
