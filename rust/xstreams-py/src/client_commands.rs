//! The other entry methods of `_NativeClient` (see `client.rs`): deletion with reference
//! policies (XACKDEL, XDELEX), XNACK, trimming and XCFGSET, and the one shape of every
//! native method that runs a command's arguments: [`native_or`] (arguments in a shape the
//! native path takes and a client that has it: the command written with [`Cmd`], its
//! reply converted as [`Conv`] says; otherwise the Python method of the same name) and,
//! for the methods that are only command words followed by their arguments,
//! `words_then_args_methods!` (one line per method). Replies with a redis-py callback that
//! depends on the protocol go through the client's own callback, on the raw value built
//! here.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyTuple};
use xstreams_core::command::{args as cmd_args, typed_write, xackdel_typed, XackdelArgs};
use xstreams_core::structures::stream::{DeleteOutcome, RefPolicy};
use xstreams_core::Reply;

use crate::client::{
    exact_int, fallback, int_reply, is_one_of, locked, push_int, raw, run_args, Args, Fast,
    NativeClient, REF_POLICIES,
};
use crate::convert::arg_bytes;
use crate::errors::cmd_err;

/// How a native method turns its reply into redis-py's value.
pub(crate) enum Conv<'py> {
    /// An integer (or whatever raw value the engine answered).
    Int,
    /// The raw reply, decoded when asked (no callback).
    Raw,
    /// redis-py's `bool_ok`: ``True`` for an OK status.
    BoolOk,
    /// ``bool(int)``.
    Bool,
    /// The client's Python response callback for a command, with options.
    Callback(&'static str, Option<Bound<'py, PyDict>>),
}

fn convert(
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
        (Conv::Callback(cmd, options), r) => {
            let value = raw(py, r, f)?;
            let cb = slf.getattr("response_callbacks")?.get_item(cmd)?;
            cb.call((value,), options.as_ref()).map(Bound::unbind)
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
                    $crate::client_commands::words_then_args(
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

const NACK_MODES: &[&str] = &["SILENT", "FAIL", "FATAL"];

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

/// XACKDEL of at least one ID under a known policy as a typed call (no argument vector,
/// no command lookup), in the order the command checks: writes refused, the key's type,
/// every ID not found without the key or the group (the IDs not even parsed), then every
/// ID strictly; one status code per ID.
fn xackdel_fast(
    py: Python<'_>,
    f: &Fast,
    name: &Bound<'_, PyAny>,
    groupname: &Bound<'_, PyAny>,
    ids: &Bound<'_, PyTuple>,
    policy: RefPolicy,
) -> PyResult<Py<PyAny>> {
    let key = arg_bytes(py, name)?;
    let group = arg_bytes(py, groupname)?;
    // The tuple holds its items (it cannot change): their bytes are borrowed.
    let items: Vec<_> = (0..ids.len())
        .map(|i| ids.get_borrowed_item(i))
        .collect::<PyResult<_>>()?;
    let raw_ids = items
        .iter()
        .map(|i| arg_bytes(py, i))
        .collect::<PyResult<Vec<_>>>()?;
    let (key, group) = (key.as_ref(), group.as_ref());
    let db = f.db;
    let codes = locked(py, f, false, |sess| {
        sess.run(db, |ctx| {
            let argv = || {
                let word: &[u8] = match policy {
                    RefPolicy::KeepRef => b"KEEPREF",
                    RefPolicy::DelRef => b"DELREF",
                    RefPolicy::Acked => b"ACKED",
                };
                let mut v = Vec::with_capacity(6 + raw_ids.len());
                v.extend([
                    b"XACKDEL".to_vec(),
                    key.to_vec(),
                    group.to_vec(),
                    word.to_vec(),
                ]);
                v.extend([b"IDS".to_vec(), raw_ids.len().to_string().into_bytes()]);
                v.extend(raw_ids.iter().map(|i| i.to_vec()));
                v
            };
            typed_write(ctx, argv, |ctx| {
                let known = match ctx.stream(key)? {
                    Some(s) => s.groups.lookup(group).is_some(),
                    None => false,
                };
                if !known {
                    return Ok(vec![DeleteOutcome::NotFound; raw_ids.len()]);
                }
                let ids = raw_ids
                    .iter()
                    .map(|i| cmd_args::strict_id(i))
                    .collect::<Result<Vec<_>, _>>()?;
                let a = XackdelArgs {
                    key,
                    group,
                    policy,
                    ids: &ids,
                };
                xackdel_typed(ctx, &a)
            })
        })
    })?;
    let codes = codes.into_iter().map(|c| match c {
        DeleteOutcome::NotFound => -1i64,
        DeleteOutcome::Deleted => 1,
        DeleteOutcome::Referenced => 2,
    });
    Ok(PyList::new(py, codes)?.into_any().unbind())
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

/// Deletion with reference policies, XNACK, trimming and XCFGSET.
#[pymethods]
impl NativeClient {
    /// XACK and XDEL in one command; one status code per ID.
    #[pyo3(signature = (name, groupname, *ids, ref_policy=None))]
    fn xackdel(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
        ref_policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let policy = match ref_policy {
            None => Some(RefPolicy::KeepRef),
            Some(p) if is_one_of(p, &["KEEPREF"]) => Some(RefPolicy::KeepRef),
            Some(p) if is_one_of(p, &["DELREF"]) => Some(RefPolicy::DelRef),
            Some(p) if is_one_of(p, &["ACKED"]) => Some(RefPolicy::Acked),
            Some(_) => None,
        };
        if let (Some(policy), false) = (policy, ids.is_empty()) {
            if let Some(f) = slf.get().fast(slf)? {
                return xackdel_fast(slf.py(), f, name, groupname, ids, policy);
            }
        }
        let head = [name, groupname];
        policy_call(slf, "xackdel", b"XACKDEL", &head, ids, ref_policy)
    }

    /// XDEL with control over consumer-group references; one status code per ID.
    #[pyo3(signature = (name, *ids, ref_policy=None))]
    fn xdelex(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
        ref_policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        policy_call(slf, "xdelex", b"XDELEX", &[name], ids, ref_policy)
    }

    /// Negatively acknowledge pending messages (mode SILENT, FAIL or FATAL).
    #[pyo3(signature = (name, groupname, mode, *ids, retrycount=None, force=None))]
    #[allow(clippy::too_many_arguments)]
    fn xnack(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        mode: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
        retrycount: Option<&Bound<'_, PyAny>>,
        force: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let retry = retrycount.map(exact_int);
        let force_on = force.map(|f| (f.is_exact_instance_of::<PyBool>(), f.is_truthy()));
        let simple = !ids.is_empty()
            && is_one_of(mode, NACK_MODES)
            && !matches!(retry, Some(None) | Some(Some(i64::MIN..=-1)))
            && !matches!(force_on, Some((false, _)));
        let items: Vec<Bound<'_, PyAny>> = ids.iter().collect();
        native_or(
            slf,
            simple,
            |c| {
                c.word(b"XNACK").args([name, groupname, mode])?;
                c.word(b"IDS").int(items.len() as i64).args(&items)?;
                if let Some(Some(n)) = retry {
                    c.word(b"RETRYCOUNT").int(n);
                }
                if let Some((_, on)) = force_on {
                    if on? {
                        c.word(b"FORCE");
                    }
                }
                Ok(Conv::Int)
            },
            "xnack",
            || {
                let all = [
                    vec![name.clone(), groupname.clone(), mode.clone()],
                    items.clone(),
                ];
                let kwargs = given(py, [("retrycount", retrycount), ("force", force)])?;
                Ok((all.concat(), Some(kwargs)))
            },
        )
    }

    /// Trim a stream by ``maxlen`` or ``minid``; return the number of deleted entries.
    #[pyo3(signature = (name, maxlen=None, approximate=None, minid=None, limit=None, ref_policy=None))]
    fn xtrim(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        maxlen: Option<&Bound<'_, PyAny>>,
        approximate: Option<&Bound<'_, PyAny>>,
        minid: Option<&Bound<'_, PyAny>>,
        limit: Option<&Bound<'_, PyAny>>,
        ref_policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let approx = approximate.map(|a| (a.is_exact_instance_of::<PyBool>(), a.is_truthy()));
        let simple = maxlen.is_some() != minid.is_some()
            && ref_policy.is_none_or(|p| is_one_of(p, REF_POLICIES))
            && !matches!(approx, Some((false, _)));
        native_or(
            slf,
            simple,
            |c| {
                c.word(b"XTRIM").arg(name)?;
                let (kw, value): (&'static [u8], _) = match (maxlen, minid) {
                    (Some(m), _) => (b"MAXLEN", m),
                    (None, Some(m)) => (b"MINID", m),
                    (None, None) => unreachable!("one of maxlen/minid is set"),
                };
                c.word(kw);
                let approx_on = match approx {
                    None => true,
                    Some((_, on)) => on?,
                };
                if approx_on {
                    c.word(b"~");
                }
                c.arg(value)?.opt(b"LIMIT", limit)?;
                if let Some(p) = ref_policy {
                    c.arg(p)?;
                }
                Ok(Conv::Int)
            },
            "xtrim",
            || {
                let approximate = match approximate {
                    Some(a) => a.clone(),
                    None => PyBool::new(py, true).to_owned().into_any(),
                };
                let all = vec![name.clone(), opt_or(py, maxlen), approximate];
                Ok((with_opts(py, all, [minid, limit, ref_policy]), None))
            },
        )
    }

    /// Configure a stream's idempotency map (IDMP-DURATION 1..300 s, IDMP-MAXSIZE).
    #[pyo3(signature = (name, idmp_duration=None, idmp_maxsize=None))]
    fn xcfgset(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        idmp_duration: Option<&Bound<'_, PyAny>>,
        idmp_maxsize: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let duration = idmp_duration.map(exact_int);
        let maxsize = idmp_maxsize.map(exact_int);
        let simple = (duration.is_some() || maxsize.is_some())
            && matches!(duration, None | Some(Some(1..=300)))
            && matches!(maxsize, None | Some(Some(1..=1_000_000)));
        native_or(
            slf,
            simple,
            |c| {
                c.word(b"XCFGSET").arg(name)?;
                if let Some(Some(d)) = duration {
                    c.word(b"IDMP-DURATION").int(d);
                }
                if let Some(Some(m)) = maxsize {
                    c.word(b"IDMP-MAXSIZE").int(m);
                }
                Ok(Conv::Raw)
            },
            "xcfgset",
            || {
                let all = vec![name.clone()];
                Ok((with_opts(py, all, [idmp_duration, idmp_maxsize]), None))
            },
        )
    }
}
