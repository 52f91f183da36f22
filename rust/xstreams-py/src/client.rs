//! `_NativeClient`: the base class of `xstreams.Redis` whose command methods take
//! redis-py's arguments, run the command on the `Store` and build redis-py's return value
//! from the engine's `Reply` — no argv built in Python, no RESP parsed back. This file
//! holds the hot ones (xadd, xrange, xrevrange, xlen, xack, xdel, xread, xreadgroup,
//! delete, exists, type: no Python callback at all) and the plumbing; `client_commands.rs`
//! the other stream methods.
//!
//! The native path is taken when the client runs on an `xstreams.Store` with strict UTF-8
//! encoding, redis-py's default response callbacks and `Redis.execute_command` (the Python
//! side decides once, in `Redis._native_config`). Any other client, and any call whose
//! arguments are outside the common shapes handled here (unusual types, options that need
//! redis-py's client-side checks), goes to the Python method of the same name
//! (`xstreams.client_streams` / `client_keyspace`), which is the reference: same
//! `DataError` messages, same command. So every call returns exactly what it returned
//! before; the native path only makes the common calls cheaper.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};
use xstreams_core::Reply;

use crate::convert::{arg_bytes, reply_to_py};
use crate::errors::reply_err;
use crate::store::Store;

/// The shape redis-py gives XREAD/XREADGROUP replies for a client configuration.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadShape {
    /// `[[key, entries], ...]` (legacy responses, either protocol).
    Legacy,
    /// `{key: [entries]}` (protocol=3, legacy responses).
    Resp3,
    /// `{key: entries}` (legacy_responses=False).
    Unified,
}

/// What the native path needs, fixed for the client's life.
pub(crate) struct Fast {
    store: Py<Store>,
    db: usize,
    wire: u8,
    decode: bool,
    shape: ReadShape,
}

/// Base class of `xstreams.Redis` (see the module documentation).
#[pyclass(
    module = "xstreams._xstreams",
    name = "_NativeClient",
    subclass,
    frozen
)]
pub struct NativeClient {
    fast: OnceLock<Option<Fast>>,
    off: AtomicBool,
}

pub(crate) type Args<'a> = Vec<Cow<'a, [u8]>>;

static FALLBACKS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The Python implementation of method `name` (`Redis.<name>` of the Python classes).
pub(crate) fn fallback<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let cls = FALLBACKS.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("xstreams.client")?
            .getattr("_PythonCommands")?
            .unbind())
    })?;
    cls.bind(py).getattr(name)
}

/// Is `obj` a str equal to one of `names` (redis-py's `x in {...}` checks)?
pub(crate) fn is_one_of(obj: &Bound<'_, PyAny>, names: &[&str]) -> bool {
    obj.is_exact_instance_of::<PyString>()
        && obj
            .cast::<PyString>()
            .ok()
            .and_then(|s| s.to_cow().ok().map(|s| names.contains(&s.as_ref())))
            .unwrap_or(false)
}

pub(crate) const REF_POLICIES: &[&str] = &["KEEPREF", "DELREF", "ACKED"];

pub(crate) fn exact_int(obj: &Bound<'_, PyAny>) -> Option<i64> {
    if obj.is_exact_instance_of::<PyInt>() {
        obj.extract::<i64>().ok()
    } else {
        None
    }
}

pub(crate) fn is_exact_false(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_exact_instance_of::<PyBool>() && !obj.is_truthy().unwrap_or(true)
}

fn text(py: Python<'_>, b: &[u8], decode: bool) -> PyResult<Py<PyAny>> {
    if !decode {
        return Ok(PyBytes::new(py, b).into_any().unbind());
    }
    match std::str::from_utf8(b) {
        Ok(s) => Ok(PyString::new(py, s).into_any().unbind()),
        // Let Python raise the very UnicodeDecodeError redis-py would.
        Err(_) => Ok(PyBytes::new(py, b)
            .call_method1("decode", ("utf-8", "strict"))?
            .unbind()),
    }
}

/// A raw reply as redis-py returns it before any callback (decoded when asked).
pub(crate) fn raw(py: Python<'_>, r: &Reply, f: &Fast) -> PyResult<Py<PyAny>> {
    match r {
        Reply::Bulk(b) => text(py, b, f.decode),
        Reply::Status(s) => text(py, s.as_bytes(), f.decode),
        Reply::Error(e) => Err(reply_err(py, e)),
        Reply::Array(items) => {
            let v = items
                .iter()
                .map(|i| raw(py, i, f))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, v)?.into_any().unbind())
        }
        _ if !f.decode => reply_to_py(py, r, f.wire),
        Reply::Map(pairs) if f.wire >= 3 => {
            let d = PyDict::new(py);
            for (k, v) in pairs {
                d.set_item(raw(py, k, f)?, raw(py, v, f)?)?;
            }
            Ok(d.into_any().unbind())
        }
        Reply::Map(pairs) => {
            let l = PyList::empty(py);
            for (k, v) in pairs {
                l.append(raw(py, k, f)?)?;
                l.append(raw(py, v, f)?)?;
            }
            Ok(l.into_any().unbind())
        }
        _ => reply_to_py(py, r, f.wire),
    }
}

/// `pairs_to_dict` of a flat field/value list (`{}` for a nil).
fn fields_dict<'py>(py: Python<'py>, r: &Reply, f: &Fast) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match r {
        Reply::Array(items) => {
            for pair in items.chunks(2) {
                if let [k, v] = pair {
                    d.set_item(raw(py, k, f)?, raw(py, v, f)?)?;
                }
            }
        }
        Reply::Map(pairs) => {
            for (k, v) in pairs {
                d.set_item(raw(py, k, f)?, raw(py, v, f)?)?;
            }
        }
        _ => {}
    }
    Ok(d)
}

/// redis-py's `parse_stream_list`: `[(id, {field: value}), ...]`, `(None, None)` for a
/// nil entry, None for a nil reply.
fn stream_list(py: Python<'_>, r: &Reply, f: &Fast, claim: bool) -> PyResult<Py<PyAny>> {
    let items = match r {
        Reply::Array(items) => items,
        Reply::Nil | Reply::NilArray => return Ok(py.None()),
        Reply::Error(e) => return Err(reply_err(py, e)),
        other => return raw(py, other, f),
    };
    let mut out = Vec::with_capacity(items.len());
    for entry in items {
        let t = match entry {
            Reply::Array(parts) if parts.len() >= 2 => {
                let id = raw(py, &parts[0], f)?;
                let fields = fields_dict(py, &parts[1], f)?.into_any().unbind();
                if claim {
                    // XREADGROUP ... CLAIM: (id, fields, *extras), as redis-py.
                    let mut all = vec![id, fields];
                    for extra in &parts[2..] {
                        all.push(raw(py, extra, f)?);
                    }
                    PyTuple::new(py, all)?
                } else {
                    PyTuple::new(py, [id, fields])?
                }
            }
            Reply::Nil | Reply::NilArray => PyTuple::new(py, [py.None(), py.None()])?,
            other => return raw(py, other, f),
        };
        out.push(t.into_any().unbind());
    }
    Ok(PyList::new(py, out)?.into_any().unbind())
}

/// XREAD / XREADGROUP's reply in the client's shape.
fn read_reply(py: Python<'_>, r: &Reply, f: &Fast, claim: bool) -> PyResult<Py<PyAny>> {
    let mut pairs: Vec<(&Reply, &Reply)> = Vec::new();
    match r {
        Reply::Nil | Reply::NilArray => {}
        Reply::Map(p) => pairs.extend(p.iter().map(|(k, v)| (k, v))),
        Reply::Array(items) => {
            for it in items {
                match it {
                    Reply::Array(kv) if kv.len() == 2 => pairs.push((&kv[0], &kv[1])),
                    other => return raw(py, other, f),
                }
            }
        }
        Reply::Error(e) => return Err(reply_err(py, e)),
        other => return raw(py, other, f),
    }
    match f.shape {
        ReadShape::Legacy => {
            let mut out = Vec::with_capacity(pairs.len());
            for (k, v) in pairs {
                let item = PyList::new(py, [raw(py, k, f)?, stream_list(py, v, f, claim)?])?;
                out.push(item.into_any().unbind());
            }
            Ok(PyList::new(py, out)?.into_any().unbind())
        }
        ReadShape::Resp3 | ReadShape::Unified => {
            let d = PyDict::new(py);
            for (k, v) in pairs {
                let entries = stream_list(py, v, f, claim)?;
                if f.shape == ReadShape::Resp3 {
                    d.set_item(raw(py, k, f)?, PyList::new(py, [entries])?)?;
                } else {
                    d.set_item(raw(py, k, f)?, entries)?;
                }
            }
            Ok(d.into_any().unbind())
        }
    }
}

pub(crate) fn int_reply(py: Python<'_>, r: &Reply, f: &Fast) -> PyResult<Py<PyAny>> {
    match r {
        Reply::Int(i) => Ok(i.into_pyobject(py)?.into_any().unbind()),
        other => raw(py, other, f),
    }
}

impl NativeClient {
    /// The native configuration, decided on first use by `Redis._native_config()`.
    pub(crate) fn fast<'a>(&'a self, slf: &Bound<'_, Self>) -> PyResult<Option<&'a Fast>> {
        if self.off.load(Ordering::Relaxed) {
            return Ok(None);
        }
        if let Some(f) = self.fast.get() {
            return Ok(f.as_ref());
        }
        let cfg = slf.call_method0("_native_config")?;
        let value = if cfg.is_none() {
            None
        } else {
            let (store, db, wire, decode, shape): (Py<Store>, usize, u8, bool, u8) =
                cfg.extract()?;
            let shape = match shape {
                0 => ReadShape::Legacy,
                1 => ReadShape::Resp3,
                _ => ReadShape::Unified,
            };
            Some(Fast {
                store,
                db,
                wire,
                decode,
                shape,
            })
        };
        let _ = self.fast.set(value);
        Ok(self.fast.get().and_then(|f| f.as_ref()))
    }

    pub(crate) fn run(py: Python<'_>, f: &Fast, args: &Args<'_>) -> PyResult<Reply> {
        let refs: Vec<&[u8]> = args.iter().map(|c| c.as_ref()).collect();
        f.store.get().run(py, &refs, f.db, f.wire)
    }
}

fn push_obj<'a>(py: Python<'_>, args: &mut Args<'a>, obj: &'a Bound<'_, PyAny>) -> PyResult<()> {
    args.push(arg_bytes(py, obj)?);
    Ok(())
}

pub(crate) fn push_int(args: &mut Args<'_>, n: i64) {
    args.push(Cow::Owned(n.to_string().into_bytes()));
}

#[pymethods]
impl NativeClient {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        NativeClient {
            fast: OnceLock::new(),
            off: AtomicBool::new(false),
        }
    }

    /// Stop using the native path (a response callback was changed).
    fn _native_off(&self) {
        self.off.store(true, Ordering::Relaxed);
    }

    /// Whether this client takes the native path (decided on first use).
    fn _native_on(slf: &Bound<'_, Self>) -> PyResult<bool> {
        Ok(slf.get().fast(slf)?.is_some())
    }

    /// Append an entry to a stream and return its ID (redis-py's ``xadd``).
    #[pyo3(signature = (name, fields, id=None, maxlen=None, approximate=None, nomkstream=None, minid=None, limit=None, ref_policy=None, idmpauto=None, idmp=None))]
    #[allow(clippy::too_many_arguments)]
    fn xadd(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        fields: &Bound<'_, PyAny>,
        id: Option<&Bound<'_, PyAny>>,
        maxlen: Option<&Bound<'_, PyAny>>,
        approximate: Option<&Bound<'_, PyAny>>,
        nomkstream: Option<&Bound<'_, PyAny>>,
        minid: Option<&Bound<'_, PyAny>>,
        limit: Option<&Bound<'_, PyAny>>,
        ref_policy: Option<&Bound<'_, PyAny>>,
        idmpauto: Option<&Bound<'_, PyAny>>,
        idmp: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let maxlen_n = match maxlen {
            None => None,
            Some(m) => exact_int(m).filter(|n| *n >= 0),
        };
        let idmp_pair = idmp.map(|t| t.cast::<PyTuple>().ok().filter(|t| t.len() == 2));
        let idempotent = idmpauto.is_some() || idmp.is_some();
        // redis-py's DataError cases (left to the Python method): maxlen with minid,
        // idmpauto with idmp, an idempotent add with an explicit ID.
        let conflicting = (maxlen.is_some() && minid.is_some())
            || (idmpauto.is_some() && idmp.is_some())
            || (idempotent && !id.is_none_or(|i| is_one_of(i, &["*"])));
        let simple = !conflicting
            && ref_policy.is_none_or(|p| is_one_of(p, REF_POLICIES))
            && !matches!(idmp_pair, Some(None))
            && (maxlen.is_none() || maxlen_n.is_some());
        let dict = fields.cast::<PyDict>().ok().filter(|d| !d.is_empty());
        let approximate_on = match approximate {
            None => true,
            Some(a) => a.is_truthy()?,
        };
        let nomkstream_on = match nomkstream {
            None => false,
            Some(n) => n.is_truthy()?,
        };
        if let (true, Some(dict), Some(f)) = (simple, dict, slf.get().fast(slf)?) {
            let mut args: Args<'_> = Vec::with_capacity(4 + 2 * dict.len());
            args.push(Cow::Borrowed(b"XADD"));
            push_obj(py, &mut args, name)?;
            if nomkstream_on {
                args.push(Cow::Borrowed(b"NOMKSTREAM"));
            }
            if let Some(p) = ref_policy {
                args.push(arg_bytes(py, p)?);
            }
            if let Some(pid) = idmpauto {
                args.push(Cow::Borrowed(b"IDMPAUTO"));
                args.push(arg_bytes(py, pid)?);
            }
            if let Some(Some(pair)) = &idmp_pair {
                args.push(Cow::Borrowed(b"IDMP"));
                args.push(arg_bytes(py, &pair.get_item(0)?)?.into_owned().into());
                args.push(arg_bytes(py, &pair.get_item(1)?)?.into_owned().into());
            }
            if let Some(n) = maxlen_n {
                args.push(Cow::Borrowed(b"MAXLEN"));
                if approximate_on {
                    args.push(Cow::Borrowed(b"~"));
                }
                push_int(&mut args, n);
            }
            if let Some(m) = minid {
                args.push(Cow::Borrowed(b"MINID"));
                if approximate_on {
                    args.push(Cow::Borrowed(b"~"));
                }
                args.push(arg_bytes(py, m)?);
            }
            if let Some(l) = limit {
                args.push(Cow::Borrowed(b"LIMIT"));
                args.push(arg_bytes(py, l)?);
            }
            match id {
                None => args.push(Cow::Borrowed(b"*")),
                Some(i) => args.push(arg_bytes(py, i)?.into_owned().into()),
            }
            for (k, v) in dict.iter() {
                args.push(arg_bytes(py, &k)?.into_owned().into());
                args.push(arg_bytes(py, &v)?.into_owned().into());
            }
            let reply = NativeClient::run(py, f, &args)?;
            return raw(py, &reply, f);
        }
        let id = match id {
            Some(i) => i.clone(),
            None => PyString::new(py, "*").into_any(),
        };
        let approximate = match approximate {
            Some(a) => a.clone(),
            None => PyBool::new(py, true).to_owned().into_any(),
        };
        let nomkstream = match nomkstream {
            Some(n) => n.clone(),
            None => PyBool::new(py, false).to_owned().into_any(),
        };
        fallback(py, "xadd")?
            .call1((
                slf,
                name,
                fields,
                id,
                maxlen,
                approximate,
                nomkstream,
                minid,
                limit,
                ref_policy,
                idmpauto,
                idmp,
            ))
            .map(Bound::unbind)
    }

    /// Entries with IDs between ``min`` and ``max`` (redis-py's ``xrange``).
    #[pyo3(signature = (name, min=None, max=None, count=None))]
    fn xrange(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
        count: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        range_call(
            slf, py, "xrange", b"XRANGE", name, min, max, count, "-", "+",
        )
    }

    /// Entries between ``max`` and ``min``, newest first (redis-py's ``xrevrange``).
    #[pyo3(signature = (name, max=None, min=None, count=None))]
    fn xrevrange(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        max: Option<&Bound<'_, PyAny>>,
        min: Option<&Bound<'_, PyAny>>,
        count: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        range_call(
            slf,
            py,
            "xrevrange",
            b"XREVRANGE",
            name,
            max,
            min,
            count,
            "+",
            "-",
        )
    }

    /// Number of entries of a stream.
    fn xlen(slf: &Bound<'_, Self>, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Some(f) = slf.get().fast(slf)? {
            let args: Args<'_> = vec![Cow::Borrowed(b"XLEN"), arg_bytes(py, name)?];
            let reply = NativeClient::run(py, f, &args)?;
            return int_reply(py, &reply, f);
        }
        fallback(py, "xlen")?.call1((slf, name)).map(Bound::unbind)
    }

    /// Acknowledge messages; return how many were pending.
    #[pyo3(signature = (name, groupname, *ids))]
    fn xack(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        if let Some(f) = slf.get().fast(slf)? {
            let items: Vec<Bound<'_, PyAny>> = ids.iter().collect();
            let mut args: Args<'_> = Vec::with_capacity(3 + items.len());
            args.push(Cow::Borrowed(b"XACK"));
            args.push(arg_bytes(py, name)?);
            args.push(arg_bytes(py, groupname)?);
            for i in &items {
                args.push(arg_bytes(py, i)?);
            }
            let reply = NativeClient::run(py, f, &args)?;
            return int_reply(py, &reply, f);
        }
        let mut all = vec![slf.clone().into_any(), name.clone(), groupname.clone()];
        all.extend(ids.iter());
        fallback(py, "xack")?
            .call1(PyTuple::new(py, all)?)
            .map(Bound::unbind)
    }

    /// Delete entries; return how many were deleted.
    #[pyo3(signature = (name, *ids))]
    fn xdel(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let mut all = vec![name.clone()];
        all.extend(ids.iter());
        keys_call(slf, py, "xdel", b"XDEL", &all)
    }

    /// Delete keys; return how many existed.
    #[pyo3(signature = (*names))]
    fn delete(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        names: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let all: Vec<Bound<'_, PyAny>> = names.iter().collect();
        keys_call(slf, py, "delete", b"DEL", &all)
    }

    /// Number of ``names`` that exist.
    #[pyo3(signature = (*names))]
    fn exists(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        names: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let all: Vec<Bound<'_, PyAny>> = names.iter().collect();
        keys_call(slf, py, "exists", b"EXISTS", &all)
    }

    /// The type of key ``name``.
    #[pyo3(name = "type")]
    fn type_(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        if let Some(f) = slf.get().fast(slf)? {
            let args: Args<'_> = vec![Cow::Borrowed(b"TYPE"), arg_bytes(py, name)?];
            let reply = NativeClient::run(py, f, &args)?;
            return raw(py, &reply, f);
        }
        fallback(py, "type")?.call1((slf, name)).map(Bound::unbind)
    }

    /// Read entries after the given IDs (redis-py's ``xread``).
    #[pyo3(signature = (streams, count=None, block=None, max_count=None, max_size=None))]
    fn xread(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        streams: &Bound<'_, PyAny>,
        count: Option<&Bound<'_, PyAny>>,
        block: Option<&Bound<'_, PyAny>>,
        max_count: Option<&Bound<'_, PyAny>>,
        max_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let count_n = count.map(exact_int);
        let block_n = block.map(exact_int);
        let ok = max_count.is_none()
            && max_size.is_none()
            && !matches!(count_n, Some(None) | Some(Some(i64::MIN..=0)))
            && !matches!(block_n, Some(None) | Some(Some(i64::MIN..=-1)));
        let dict = streams.cast::<PyDict>().ok().filter(|d| !d.is_empty());
        if let (true, Some(dict), Some(f)) = (ok, dict, slf.get().fast(slf)?) {
            let mut args: Args<'_> = Vec::with_capacity(6 + 2 * dict.len());
            args.push(Cow::Borrowed(b"XREAD"));
            if let Some(Some(b)) = block_n {
                args.push(Cow::Borrowed(b"BLOCK"));
                push_int(&mut args, b);
            }
            if let Some(Some(c)) = count_n {
                args.push(Cow::Borrowed(b"COUNT"));
                push_int(&mut args, c);
            }
            push_streams(py, &mut args, dict)?;
            let reply = NativeClient::run(py, f, &args)?;
            return read_reply(py, &reply, f, false);
        }
        fallback(py, "xread")?
            .call1((slf, streams, count, block, max_count, max_size))
            .map(Bound::unbind)
    }

    /// Read through a consumer group (redis-py's ``xreadgroup``).
    #[pyo3(signature = (groupname, consumername, streams, count=None, block=None, noack=None, claim_min_idle_time=None, max_count=None, max_size=None))]
    #[allow(clippy::too_many_arguments)]
    fn xreadgroup(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        groupname: &Bound<'_, PyAny>,
        consumername: &Bound<'_, PyAny>,
        streams: &Bound<'_, PyAny>,
        count: Option<&Bound<'_, PyAny>>,
        block: Option<&Bound<'_, PyAny>>,
        noack: Option<&Bound<'_, PyAny>>,
        claim_min_idle_time: Option<&Bound<'_, PyAny>>,
        max_count: Option<&Bound<'_, PyAny>>,
        max_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let count_n = count.map(exact_int);
        let block_n = block.map(exact_int);
        let noack_flag = match noack {
            None => Some(false),
            Some(n) if n.is_exact_instance_of::<PyBool>() => Some(!is_exact_false(n)),
            Some(_) => None,
        };
        let claim = claim_min_idle_time.map(|c| exact_int(c).filter(|n| *n >= 0));
        let ok = max_count.is_none()
            && max_size.is_none()
            && !matches!(claim, Some(None))
            && noack_flag.is_some()
            && !matches!(count_n, Some(None) | Some(Some(i64::MIN..=0)))
            && !matches!(block_n, Some(None) | Some(Some(i64::MIN..=-1)));
        let dict = streams.cast::<PyDict>().ok().filter(|d| !d.is_empty());
        if let (true, Some(dict), Some(f)) = (ok, dict, slf.get().fast(slf)?) {
            let mut args: Args<'_> = Vec::with_capacity(10 + 2 * dict.len());
            args.push(Cow::Borrowed(b"XREADGROUP"));
            args.push(Cow::Borrowed(b"GROUP"));
            push_obj(py, &mut args, groupname)?;
            push_obj(py, &mut args, consumername)?;
            if let Some(Some(c)) = count_n {
                args.push(Cow::Borrowed(b"COUNT"));
                push_int(&mut args, c);
            }
            if let Some(Some(b)) = block_n {
                args.push(Cow::Borrowed(b"BLOCK"));
                push_int(&mut args, b);
            }
            if noack_flag == Some(true) {
                args.push(Cow::Borrowed(b"NOACK"));
            }
            if let Some(Some(c)) = claim {
                args.push(Cow::Borrowed(b"CLAIM"));
                push_int(&mut args, c);
            }
            push_streams(py, &mut args, dict)?;
            let reply = NativeClient::run(py, f, &args)?;
            return read_reply(py, &reply, f, claim.is_some());
        }
        let noack = match noack {
            Some(n) => n.clone(),
            None => PyBool::new(py, false).to_owned().into_any(),
        };
        fallback(py, "xreadgroup")?
            .call1((
                slf,
                groupname,
                consumername,
                streams,
                count,
                block,
                noack,
                claim_min_idle_time,
                max_count,
                max_size,
            ))
            .map(Bound::unbind)
    }
}

fn push_streams(py: Python<'_>, args: &mut Args<'_>, dict: &Bound<'_, PyDict>) -> PyResult<()> {
    args.push(Cow::Borrowed(b"STREAMS"));
    let mut ids = Vec::with_capacity(dict.len());
    for (k, v) in dict.iter() {
        args.push(arg_bytes(py, &k)?.into_owned().into());
        ids.push(arg_bytes(py, &v)?.into_owned());
    }
    args.extend(ids.into_iter().map(Cow::Owned));
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn range_call(
    slf: &Bound<'_, NativeClient>,
    py: Python<'_>,
    method: &str,
    cmd: &'static [u8],
    name: &Bound<'_, PyAny>,
    first: Option<&Bound<'_, PyAny>>,
    second: Option<&Bound<'_, PyAny>>,
    count: Option<&Bound<'_, PyAny>>,
    first_default: &'static str,
    second_default: &'static str,
) -> PyResult<Py<PyAny>> {
    let count_n = count.map(exact_int);
    let ok = !matches!(count_n, Some(None) | Some(Some(i64::MIN..=0)));
    if let (true, Some(f)) = (ok, slf.get().fast(slf)?) {
        let mut args: Args<'_> = Vec::with_capacity(6);
        args.push(Cow::Borrowed(cmd));
        args.push(arg_bytes(py, name)?);
        match first {
            Some(v) => args.push(arg_bytes(py, v)?),
            None => args.push(Cow::Borrowed(first_default.as_bytes())),
        }
        match second {
            Some(v) => args.push(arg_bytes(py, v)?),
            None => args.push(Cow::Borrowed(second_default.as_bytes())),
        }
        if let Some(Some(c)) = count_n {
            args.push(Cow::Borrowed(b"COUNT"));
            push_int(&mut args, c);
        }
        let reply = NativeClient::run(py, f, &args)?;
        return stream_list(py, &reply, f, false);
    }
    let first = match first {
        Some(v) => v.clone(),
        None => PyString::new(py, first_default).into_any(),
    };
    let second = match second {
        Some(v) => v.clone(),
        None => PyString::new(py, second_default).into_any(),
    };
    fallback(py, method)?
        .call1((slf, name, first, second, count))
        .map(Bound::unbind)
}

/// A command of a name followed by arguments, answering an integer.
fn keys_call(
    slf: &Bound<'_, NativeClient>,
    py: Python<'_>,
    method: &str,
    cmd: &'static [u8],
    items: &[Bound<'_, PyAny>],
) -> PyResult<Py<PyAny>> {
    if let Some(f) = slf.get().fast(slf)? {
        let mut args: Args<'_> = Vec::with_capacity(1 + items.len());
        args.push(Cow::Borrowed(cmd));
        for i in items {
            args.push(arg_bytes(py, i)?);
        }
        let reply = NativeClient::run(py, f, &args)?;
        return int_reply(py, &reply, f);
    }
    let mut all = vec![slf.clone().into_any()];
    all.extend(items.iter().cloned());
    fallback(py, method)?
        .call1(PyTuple::new(py, all)?)
        .map(Bound::unbind)
}
