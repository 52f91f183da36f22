//! `_NativeClient`: the base class of `xstreams.Redis` whose command methods take
//! redis-py's arguments, run the command on the `Store` and build redis-py's return value
//! in Rust — no argv built in Python, no RESP parsed back. The methods live by command
//! family, as the core's commands do: `xadd` (XADD, XTRIM, XDEL, XDELEX, XLEN, XCFGSET),
//! `read` (XRANGE, XREVRANGE, XREAD, XREADGROUP, served into `sink`), `groups` (XACK,
//! XACKDEL, XNACK, XGROUP, XCLAIM, XAUTOCLAIM, XINFO), `pending` (XPENDING's two forms),
//! `keyspace` (DEL, EXISTS, TYPE) and `pipeline` (a pipeline's stack in one store call).
//! This module holds the plumbing: the client's native configuration, running a command
//! in one store session ([`locked`], [`run_now`]: the GIL kept while the store is free)
//! or on the blocking path, the one conversion of replies to redis-py's values ([`Conv`])
//! and the one shape of a method that runs a command's arguments ([`native_or`]).
//!
//! The native path is taken when the client runs on an `xstreams.Store` with strict UTF-8
//! encoding, redis-py's default response callbacks for the commands listed in
//! the command table's native list (`pipeline::native_conv`) and `Redis.execute_command` (the Python side decides once,
//! in `Redis._native_config`). Any other client, and any call whose arguments redis-py
//! refuses client-side (its `DataError`s, whose texts are redis-py's own) or are of
//! unusual types, goes to the Python method of the same name (`xstreams.client.streams` /
//! `keyspace`), which is the reference. So every call returns exactly what it returned
//! before; the native path only makes the common calls cheaper.

mod groups;
mod keyspace;
mod pending;
mod pipeline;
mod read;
mod sink;
mod xadd;

pub(crate) use pipeline::NativePipeline;

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};
use xstreams_core::command::{self, Outcome};
use xstreams_core::keyspace::db::NUM_DBS;
use xstreams_core::store::Session;
use xstreams_core::{CmdError, Reply};

use crate::convert::{arg_bytes, reply_to_py};
use crate::errors::{cmd_err, internal_err};
use crate::store::{guarded, panic_text, Store};

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
    pub(crate) store: Py<Store>,
    pub(crate) db: usize,
    pub(crate) wire: u8,
    pub(crate) decode: bool,
    pub(crate) shape: ReadShape,
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

/// The Python objects the native layer uses, handed over by `xstreams.client.fallback`
/// (the extension imports no Python module by name).
pub(crate) struct Registered {
    /// The class holding every command method in Python (`_PythonCommands`).
    commands: Py<PyAny>,
    /// `Pipeline.execute_command`: a pipeline class that keeps it queues natively.
    pub(crate) pipeline_execute: Py<PyAny>,
    /// redis-py's default XPENDING callback.
    pub(crate) xpending_callback: Py<PyAny>,
}

static REGISTERED: PyOnceLock<Registered> = PyOnceLock::new();

/// What `xstreams.client` registered (an error before it is imported).
pub(crate) fn registered(py: Python<'_>) -> PyResult<&Registered> {
    REGISTERED.get(py).ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err(
            "xstreams.client is not imported: its Python methods are not registered",
        )
    })
}

/// Register the Python side of the client (called once, by `xstreams.client.fallback`).
#[pyfunction]
#[pyo3(signature = (*, commands, pipeline_execute, xpending_callback))]
pub fn _register_client(
    py: Python<'_>,
    commands: Py<PyAny>,
    pipeline_execute: Py<PyAny>,
    xpending_callback: Py<PyAny>,
) {
    // A second registration (a reloaded module) keeps the first: the native classes'
    // subclasses were built on it.
    let _ = REGISTERED.set(
        py,
        Registered {
            commands,
            pipeline_execute,
            xpending_callback,
        },
    );
}

/// The Python implementation of method `name` (`Redis.<name>` of the Python classes).
pub(crate) fn fallback<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    registered(py)?.commands.bind(py).getattr(name)
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

pub(crate) fn text(py: Python<'_>, b: &[u8], decode: bool) -> PyResult<Py<PyAny>> {
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
        Reply::Error(e) => Err(cmd_err(py, e)),
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
pub(crate) fn stream_list(py: Python<'_>, r: &Reply, f: &Fast, claim: bool) -> PyResult<Py<PyAny>> {
    let items = match r {
        Reply::Array(items) => items,
        Reply::Nil | Reply::NilArray => return Ok(py.None()),
        Reply::Error(e) => return Err(cmd_err(py, e)),
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
pub(crate) fn read_reply(py: Python<'_>, r: &Reply, f: &Fast, claim: bool) -> PyResult<Py<PyAny>> {
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
        Reply::Error(e) => return Err(cmd_err(py, e)),
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

    /// Run a command that may block (XREAD / XREADGROUP with BLOCK): the GIL is
    /// released while the store runs it and while it waits.
    pub(crate) fn run(py: Python<'_>, f: &Fast, args: &Args<'_>) -> PyResult<Reply> {
        let refs: Vec<&[u8]> = args.iter().map(|c| c.as_ref()).collect();
        f.store.get().run(py, &refs, f.db, f.wire)
    }
}

/// Run `work` in one session of the store (the store locked for it alone) and return its
/// result, a command error raised as redis-py's exception. When the store is free and the
/// work is short (`heavy` false), the GIL is kept: releasing and taking it back would cost
/// more than the command. When another thread holds the store, the work may be long, or
/// the reply waits for an fsync (`fsync="always"`), the GIL is released while waiting
/// and working, so other Python threads run. `work` never touches Python objects (see
/// `sink`), and a panic becomes `InternalError`.
pub(crate) fn locked<R: Send>(
    py: Python<'_>,
    f: &Fast,
    heavy: bool,
    work: impl FnOnce(&mut Session<'_>) -> Result<R, CmdError> + Send,
) -> PyResult<R> {
    if f.db >= NUM_DBS {
        return Err(cmd_err(py, &CmdError::db_index_out_of_range()));
    }
    let store = f.store.get().core();
    // Under fsync="always" the reply waits for an fsync (`settle`, after the session
    // ends): never with the GIL held.
    let here = !heavy && !store.settles();
    let done = match here.then(|| store.try_session()).flatten() {
        Some(sess) => {
            match catch_unwind(AssertUnwindSafe(|| sess.and_then(|mut s| work(&mut s)))) {
                Ok(r) => r,
                Err(p) => return Err(internal_err(py, panic_text(p))),
            }
        }
        None => guarded(py, || {
            let r = store.session().and_then(|mut s| work(&mut s))?;
            store.settle().map(|()| r)
        })?,
    };
    done.map_err(|e| cmd_err(py, &e))
}

/// [`locked`] for short work that creates Python objects as it goes: when the store is
/// free, `work` runs in its session on this thread with the GIL held (`py` is what it
/// creates objects with: only ones the cyclic garbage collector does not track, such as
/// `bytes`, so no collection and no finalizer can run while the store is locked).
/// `None` when another thread holds the store, or when the reply must wait for an fsync
/// (`fsync="always"`): the caller takes [`locked`] instead.
pub(crate) fn locked_here<'py, R>(
    py: Python<'py>,
    f: &Fast,
    work: impl FnOnce(Python<'py>, &mut Session<'_>) -> Result<R, CmdError>,
) -> Option<PyResult<R>> {
    let store = f.store.get().core();
    // Under fsync="always" the caller takes `locked`, which waits for the fsync.
    if f.db >= NUM_DBS || store.settles() {
        return None;
    }
    let sess = store.try_session()?;
    let done = match catch_unwind(AssertUnwindSafe(|| sess.and_then(|mut s| work(py, &mut s)))) {
        Ok(r) => r,
        Err(p) => return Some(Err(internal_err(py, panic_text(p)))),
    };
    Some(done.map_err(|e| cmd_err(py, &e)))
}

/// Run a command given as arguments that never blocks, in one store session (see
/// [`locked`]), with the client's protocol: its reply (an error reply included).
pub(crate) fn run_now(py: Python<'_>, f: &Fast, args: &[&[u8]], heavy: bool) -> PyResult<Reply> {
    let wire = f.wire;
    let db = f.db;
    locked(py, f, heavy, |sess| {
        sess.run_in(db, wire, |ctx| {
            Ok(match command::execute(ctx, args) {
                Outcome::Reply(r) => r,
                // Blocking is denied in a session; a read that would block is empty.
                Outcome::Block(_) => Reply::NilArray,
            })
        })
    })
}

/// [`run_now`] of an argument list made by a native method.
pub(crate) fn run_args(py: Python<'_>, f: &Fast, args: &Args<'_>) -> PyResult<Reply> {
    let refs: Vec<&[u8]> = args.iter().map(|c| c.as_ref()).collect();
    run_now(py, f, &refs, false)
}

pub(crate) fn push_obj<'a>(
    py: Python<'_>,
    args: &mut Args<'a>,
    obj: &'a Bound<'_, PyAny>,
) -> PyResult<()> {
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
}

/// How a reply becomes redis-py's value: the one conversion of the native methods and of
/// a pipeline's results.
#[derive(Clone)]
pub(crate) enum Conv<'py> {
    /// An integer (or whatever raw value the engine answered).
    Int,
    /// The raw reply, decoded when asked (no callback).
    Raw,
    /// redis-py's `bool_ok`: ``True`` for an OK status.
    BoolOk,
    /// ``bool(int)``.
    Bool,
    /// redis-py's `parse_stream_list` (XRANGE, XREVRANGE).
    Entries,
    /// XREAD / XREADGROUP in the client's shape.
    Read,
    /// The client's Python response callback for a command, with options.
    Callback(&'static str, Option<Bound<'py, PyDict>>),
    /// `client._parse(name, value, options)`: decoding and the client's callback, as the
    /// Python path does (a pipeline's other commands).
    Parse(Bound<'py, PyAny>, Bound<'py, PyDict>),
}

/// `reply` as redis-py's value, converted as `conv` says; an error reply is raised.
pub(crate) fn convert(
    slf: &Bound<'_, NativeClient>,
    py: Python<'_>,
    reply: &Reply,
    f: &Fast,
    conv: Conv<'_>,
) -> PyResult<Py<PyAny>> {
    match (conv, reply) {
        (_, Reply::Error(e)) => Err(cmd_err(py, e)),
        (Conv::Int, r) => int_reply(py, r, f),
        (Conv::Raw, r) => raw(py, r, f),
        (Conv::BoolOk, Reply::Status(s)) => {
            Ok(PyBool::new(py, s == "OK").to_owned().into_any().unbind())
        }
        (Conv::Bool, Reply::Int(i)) => Ok(PyBool::new(py, *i != 0).to_owned().into_any().unbind()),
        (Conv::Entries, r) => stream_list(py, r, f, false),
        (Conv::Read, r) => read_reply(py, r, f, false),
        (Conv::Callback(cmd, options), r) => {
            let value = raw(py, r, f)?;
            let cb = slf.getattr("response_callbacks")?.get_item(cmd)?;
            cb.call((value,), options.as_ref()).map(Bound::unbind)
        }
        (Conv::Parse(name, options), r) => {
            let value = reply_to_py(py, r, f.wire)?;
            slf.call_method1("_parse", (name, value, options.copy()?))
                .map(Bound::unbind)
        }
        (_, r) => raw(py, r, f),
    }
}

/// A command's arguments, built by a native method from redis-py's arguments (bytes
/// borrowed from the Python objects, not copied).
pub(crate) struct Cmd<'a> {
    pub(crate) args: Args<'a>,
}

impl<'a> Cmd<'a> {
    /// A word of the command (its name, a keyword).
    pub(crate) fn word(&mut self, w: &'static [u8]) -> &mut Self {
        self.args.push(Cow::Borrowed(w));
        self
    }

    /// An argument encoded as redis-py's `Encoder` does.
    pub(crate) fn arg(&mut self, obj: &'a Bound<'_, PyAny>) -> PyResult<&mut Self> {
        self.args.push(arg_bytes(obj.py(), obj)?);
        Ok(self)
    }

    /// Each of `objs`, encoded.
    pub(crate) fn args<'py: 'a>(
        &mut self,
        objs: impl IntoIterator<Item = &'a Bound<'py, PyAny>>,
    ) -> PyResult<&mut Self> {
        for o in objs {
            self.arg(o)?;
        }
        Ok(self)
    }

    /// An integer argument.
    pub(crate) fn int(&mut self, n: i64) -> &mut Self {
        push_int(&mut self.args, n);
        self
    }

    /// `keyword value` when `value` is given.
    pub(crate) fn opt(
        &mut self,
        keyword: &'static [u8],
        value: Option<&'a Bound<'_, PyAny>>,
    ) -> PyResult<&mut Self> {
        if let Some(v) = value {
            self.word(keyword).arg(v)?;
        }
        Ok(self)
    }

    /// `obj` encoded, or `default` without it.
    pub(crate) fn arg_or(
        &mut self,
        obj: Option<&'a Bound<'_, PyAny>>,
        default: &'static [u8],
    ) -> PyResult<&mut Self> {
        match obj {
            Some(o) => self.arg(o),
            None => Ok(self.word(default)),
        }
    }
}

/// What a native method gives its Python fallback: positional and keyword arguments.
pub(crate) type PyCall<'py> = (Vec<Bound<'py, PyAny>>, Option<Bound<'py, PyDict>>);

/// The shape of the native methods that run a command's arguments: when the arguments
/// are in a shape the native path takes (`simple`) and the client has that path, run the
/// command `build` writes and convert its reply as `build` says; otherwise call the Python
/// method `method` (the reference for redis-py's checks) with the arguments `python`
/// gives.
pub(crate) fn native_or<'a, 'py>(
    slf: &Bound<'py, NativeClient>,
    simple: bool,
    build: impl FnOnce(&mut Cmd<'a>) -> PyResult<Conv<'py>>,
    method: &str,
    python: impl FnOnce() -> PyResult<PyCall<'py>>,
) -> PyResult<Py<PyAny>> {
    let py = slf.py();
    if simple {
        if let Some(f) = slf.get().fast(slf)? {
            let mut cmd = Cmd {
                args: Vec::with_capacity(8),
            };
            let conv = build(&mut cmd)?;
            let reply = run_args(py, f, &cmd.args)?;
            return convert(slf, py, &reply, f, conv);
        }
    }
    let (args, kwargs) = python()?;
    call_fallback(slf, py, method, args, kwargs.as_ref())
}

/// The simplest native methods: command `words` followed by each of `objs`, whose
/// fallback takes `objs` as they are.
pub(crate) fn words_then_args<'a, 'py>(
    slf: &Bound<'py, NativeClient>,
    method: &str,
    words: &[&'static [u8]],
    objs: &[&'a Bound<'py, PyAny>],
    conv: Conv<'py>,
) -> PyResult<Py<PyAny>> {
    let build = |c: &mut Cmd<'a>| {
        for w in words {
            c.word(w);
        }
        c.args(objs.iter().copied())?;
        Ok(conv)
    };
    let python = || Ok((objs.iter().map(|o| (*o).clone()).collect(), None));
    native_or(slf, true, build, method, python)
}

/// Define `_NativeClient` methods of the [`words_then_args`] shape, one line each:
/// `/// doc` then `name(arg, ...) => [WORD ...], conversion;` (`as "pyname"` renames).
macro_rules! words_then_args_methods {
    ($(
        $(#[$doc:meta])*
        $name:ident $(as $pyname:literal)? ($($arg:ident),+) => [$($word:literal),+], $conv:expr;
    )+) => {
        #[pymethods]
        impl NativeClient {
            $(
                $(#[$doc])*
                $(#[pyo3(name = $pyname)])?
                fn $name(slf: &Bound<'_, Self>, $($arg: &Bound<'_, PyAny>),+) -> PyResult<Py<PyAny>> {
                    let method = words_then_args_methods!(@name $name $($pyname)?);
                    $crate::client::words_then_args(
                        slf, method, &[$($word),+], &[$($arg),+], $conv,
                    )
                }
            )+
        }
    };
    (@name $name:ident) => { stringify!($name) };
    (@name $name:ident $pyname:literal) => { $pyname };
}
pub(crate) use words_then_args_methods;

pub(crate) fn call_fallback(
    slf: &Bound<'_, NativeClient>,
    py: Python<'_>,
    method: &str,
    args: Vec<Bound<'_, PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let mut all = vec![slf.clone().into_any()];
    all.extend(args);
    fallback(py, method)?
        .call(PyTuple::new(py, all)?, kwargs)
        .map(Bound::unbind)
}

pub(crate) fn opt_or<'py>(py: Python<'py>, v: Option<&Bound<'py, PyAny>>) -> Bound<'py, PyAny> {
    match v {
        Some(v) => v.clone(),
        None => py.None().into_bound(py),
    }
}

/// `all` followed by each of `opts` (None where not given).
pub(crate) fn with_opts<'py, const N: usize>(
    py: Python<'py>,
    mut all: Vec<Bound<'py, PyAny>>,
    opts: [Option<&Bound<'py, PyAny>>; N],
) -> Vec<Bound<'py, PyAny>> {
    all.extend(opts.into_iter().map(|o| opt_or(py, o)));
    all
}

/// Keyword arguments: those of `kwargs` that were given.
pub(crate) fn given<'py, const N: usize>(
    py: Python<'py>,
    kwargs: [(&str, Option<&Bound<'py, PyAny>>); N],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in kwargs {
        if let Some(v) = v {
            d.set_item(k, v)?;
        }
    }
    Ok(d)
}

/// XACKDEL / XDELEX: `CMD head... REF_POLICY IDS n id...` (KEEPREF when no policy is
/// given), one status code per ID.
fn policy_call<'py>(
    slf: &Bound<'py, NativeClient>,
    method: &str,
    cmd: &'static [u8],
    head: &[&Bound<'py, PyAny>],
    ids: &Bound<'py, PyTuple>,
    ref_policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let items: Vec<Bound<'py, PyAny>> = ids.iter().collect();
    let simple = !items.is_empty() && ref_policy.is_none_or(|p| is_one_of(p, REF_POLICIES));
    native_or(
        slf,
        simple,
        |c| {
            c.word(cmd).args(head.iter().copied())?;
            c.arg_or(ref_policy, b"KEEPREF")?;
            c.word(b"IDS").int(items.len() as i64).args(&items)?;
            Ok(Conv::Raw)
        },
        method,
        || {
            let mut all: Vec<Bound<'py, PyAny>> = head.iter().map(|h| (*h).clone()).collect();
            all.extend(items.iter().cloned());
            Ok((all, Some(given(slf.py(), [("ref_policy", ref_policy)])?)))
        },
    )
}

/// A response callback's options: `{key: value}`.
pub(crate) fn option<'py>(
    py: Python<'py>,
    key: &str,
    value: impl IntoPyObject<'py>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(key, value)?;
    Ok(d)
}

/// A command of a name followed by arguments, answering an integer.
fn keys_call(
    slf: &Bound<'_, NativeClient>,
    method: &str,
    cmd: &'static [u8],
    items: &[Bound<'_, PyAny>],
) -> PyResult<Py<PyAny>> {
    native_or(
        slf,
        true,
        |c| {
            c.word(cmd).args(items)?;
            Ok(Conv::Int)
        },
        method,
        || Ok((items.to_vec(), None)),
    )
}
