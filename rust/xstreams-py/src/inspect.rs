//! `inspect_store(path)` and `key_internals(store, key, db)`: the core's store inspector
//! (`xstreams_core::store::persist::inspect`) as plain Python values, for `xstreams check` and
//! `xstreams dump`. Conversion only.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use xstreams_core::store::persist::inspect::{
    self, FileKind, FileReport, Inspection, LogSummary, Problem, SnapshotSummary, Summary,
};
use xstreams_core::store::persist::snapshot::tag_name;

use crate::errors::persist_err;
use crate::store::{guarded, Store};

fn problem<'py>(py: Python<'py>, p: Option<&Problem>) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(p) = p else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item("kind", p.kind.name())?;
    d.set_item("offset", p.offset)?;
    d.set_item("message", &p.message)?;
    Ok(Some(d))
}

fn snapshot_summary<'py>(py: Python<'py>, s: &SnapshotSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("created_ms", s.created_ms)?;
    d.set_item("keys", s.keys())?;
    d.set_item("streams", s.streams)?;
    d.set_item("strings", s.strings)?;
    d.set_item("nodes", s.nodes)?;
    d.set_item("entries", s.entries)?;
    d.set_item("section_count", s.sections.len())?;
    let sections = PyList::empty(py);
    for sec in &s.sections {
        let x = PyDict::new(py);
        x.set_item("offset", sec.offset)?;
        x.set_item("tag", tag_name(sec.tag))?;
        x.set_item("length", sec.len)?;
        x.set_item("db", sec.key.as_ref().map(|k| k.0))?;
        x.set_item("key", sec.key.as_ref().map(|k| PyBytes::new(py, &k.1)))?;
        sections.append(x)?;
    }
    d.set_item("sections", sections)?;
    Ok(d)
}

fn log_summary<'py>(py: Python<'py>, s: &LogSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("commands", s.commands)?;
    let by_name = PyDict::new(py);
    for (k, v) in &s.commands_by_name {
        by_name.set_item(k, v)?;
    }
    d.set_item("commands_by_name", by_name)?;
    d.set_item("selects", s.selects)?;
    d.set_item("annotations", s.annotations)?;
    d.set_item("times", s.times)?;
    d.set_item("last_time", s.last_time)?;
    d.set_item("cut_at", s.cut_at)?;
    Ok(d)
}

fn file_report<'py>(py: Python<'py>, f: &FileReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &f.name)?;
    let kind = match f.kind {
        FileKind::Snapshot => "snapshot",
        FileKind::Log => "log",
    };
    d.set_item("type", kind)?;
    d.set_item("size", f.size)?;
    d.set_item("ok", f.problem.is_none())?;
    d.set_item("problem", problem(py, f.problem.as_ref())?)?;
    let summary = match &f.summary {
        Some(Summary::Snapshot(s)) => Some(snapshot_summary(py, s)?),
        Some(Summary::Log(s)) => Some(log_summary(py, s)?),
        None => None,
    };
    d.set_item("summary", summary)?;
    Ok(d)
}

fn inspection<'py>(py: Python<'py>, r: &Inspection) -> PyResult<Bound<'py, PyDict>> {
    let m = PyDict::new(py);
    m.set_item("size", r.manifest_size)?;
    m.set_item("problem", problem(py, r.manifest.as_ref().err())?)?;
    let files = r.manifest.as_ref().ok();
    m.set_item(
        "snapshot",
        files
            .and_then(|m| m.base)
            .map(xstreams_core::store::persist::snapshot_name),
    )?;
    let logs: Vec<String> = files
        .map(|m| {
            m.incr
                .iter()
                .map(|&i| xstreams_core::store::persist::log_name(i))
                .collect()
        })
        .unwrap_or_default();
    m.set_item("logs", logs)?;
    let d = PyDict::new(py);
    d.set_item("manifest", m)?;
    let list = PyList::empty(py);
    for f in &r.files {
        list.append(file_report(py, f)?)?;
    }
    d.set_item("files", list)?;
    d.set_item("leftovers", r.leftovers.clone())?;
    let holder = match r.lock_holder {
        Some(h) => {
            let x = PyDict::new(py);
            x.set_item("pid", h.pid)?;
            Some(x)
        }
        None => None,
    };
    d.set_item("lock_holder", holder)?;
    d.set_item("last_time", r.last_time())?;
    Ok(d)
}

/// Check the store directory ``path`` file by file without loading it (no lock taken,
/// nothing changed): ``{"manifest": {...}, "files": [...], "leftovers": [...],
/// "lock_holder": None or {"pid": ...}, "last_time": ms or None}``. Raises ``StoreError``
/// when there is no store at ``path``.
#[pyfunction]
pub fn inspect_store(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let r = guarded(py, move || inspect::inspect(&path))?.map_err(|e| persist_err(py, &e))?;
    inspection(py, &r)
}

/// What no command shows about a key of an open store: ``{"expire_at": ms or None,
/// "groups": [{"name", "delivery_order", "nack_zone"}], "producers": [{"pid", "iids"}]}``
/// (IDs as ``"ms-seq"`` strings), or ``None`` if the key does not exist.
#[pyfunction]
#[pyo3(signature = (store, key, db=0))]
pub fn key_internals<'py>(
    py: Python<'py>,
    store: &Bound<'py, Store>,
    key: &[u8],
    db: usize,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let core = store.get().core();
    let k = guarded(py, || {
        core.with_keyspace(|ks| inspect::key_internals(ks, db, key))
    })?;
    let Some(k) = k else {
        return Ok(None);
    };
    let ids = |v: &[xstreams_core::StreamId]| v.iter().map(|i| i.to_string()).collect::<Vec<_>>();
    let groups = PyList::empty(py);
    for g in &k.groups {
        let x = PyDict::new(py);
        x.set_item("name", PyBytes::new(py, &g.name))?;
        x.set_item("delivery_order", ids(&g.delivery_order))?;
        x.set_item("nack_zone", ids(&g.nack_zone))?;
        groups.append(x)?;
    }
    let producers = PyList::empty(py);
    for p in &k.producers {
        let x = PyDict::new(py);
        x.set_item("pid", PyBytes::new(py, &p.pid))?;
        let iids = PyList::empty(py);
        for (iid, id) in &p.iids {
            iids.append((PyBytes::new(py, iid), id.to_string()))?;
        }
        x.set_item("iids", iids)?;
        producers.append(x)?;
    }
    let d = PyDict::new(py);
    d.set_item("expire_at", k.expire_at)?;
    d.set_item("groups", groups)?;
    d.set_item("producers", producers)?;
    Ok(Some(d))
}
