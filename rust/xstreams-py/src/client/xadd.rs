//! XADD, XTRIM, XDEL, XDELEX, XLEN and XCFGSET: the stream's entries added, trimmed,
//! deleted and counted, and its IDMP settings (the core's `command::xadd`, `xrange`,
//! `xidmp`). XADD takes one path, the command's own parser and typed implementation; the
//! others run their arguments (`native_or`).

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString, PyTuple};
use smallvec::SmallVec;
use xstreams_core::command::args::int;
use xstreams_core::command::{trim_args, xadd_typed, Ctx, XaddArgs, XaddOutcome};
use xstreams_core::error::CmdResult;
use xstreams_core::structures::id::parse_id;
use xstreams_core::structures::stream::{RefPolicy, TrimArgs, TrimStrategy};
use xstreams_core::{CmdError, StreamId};

use super::sink::id_obj;
use super::{
    exact_int, fallback, is_one_of, keys_call, locked, native_or, opt_or, policy_call, with_opts,
    words_then_args_methods, Conv, Fast, NativeClient, REF_POLICIES,
};
use crate::convert::arg_bytes;
use crate::prefetch;

/// How many field/value pairs an entry may have before its XADD allocates for them.
const INLINE_PAIRS: usize = 4;

/// A dict's items held (a strong reference each, so that their bytes stay valid even if
/// the dict changes while the GIL is released), on the stack for a few fields.
type InlineItems<'py> = SmallVec<[(Bound<'py, PyAny>, Bound<'py, PyAny>); INLINE_PAIRS]>;

/// Field/value pairs of `items`, encoded, in order (bytes are borrowed, not copied).
fn pairs_of<'a>(
    py: Python<'_>,
    items: &'a InlineItems<'_>,
) -> PyResult<SmallVec<[Cow<'a, [u8]>; 2 * INLINE_PAIRS]>> {
    let mut out = SmallVec::with_capacity(2 * items.len());
    for (k, v) in items {
        out.push(arg_bytes(py, k)?);
        out.push(arg_bytes(py, v)?);
    }
    Ok(out)
}

/// `use_pairs` given a non-empty dict's field/value pairs, encoded, in order (bytes
/// borrowed from the items, which are held so that they stay valid while the store runs),
/// their values' memory asked for early. The one-field entry, the call made most, has its
/// pair on the stack with nothing collected.
fn with_pairs<R>(
    py: Python<'_>,
    dict: &Bound<'_, PyDict>,
    use_pairs: impl FnOnce(&[&[u8]]) -> PyResult<R>,
) -> PyResult<R> {
    if dict.len() == 1 {
        if let Some((k, v)) = dict.iter().next() {
            let (k, v) = (arg_bytes(py, &k)?, arg_bytes(py, &v)?);
            prefetch::bytes(&v);
            return use_pairs(&[k.as_ref(), v.as_ref()]);
        }
    }
    let items: InlineItems<'_> = dict.iter().collect();
    let owned = pairs_of(py, &items)?;
    for v in owned.iter().skip(1).step_by(2) {
        prefetch::bytes(v);
    }
    let pairs: SmallVec<[&[u8]; 2 * INLINE_PAIRS]> = owned.iter().map(|c| c.as_ref()).collect();
    use_pairs(&pairs)
}

/// XADD's trimming options as redis-py gives them (`maxlen` an exact non-negative int),
/// made typed in the store's session (the default limit of `~` is the store's).
struct Trim<'a> {
    maxlen: Option<i64>,
    minid: Option<&'a [u8]>,
    approx: bool,
    limit: Option<&'a [u8]>,
    policy: Option<RefPolicy>,
}

impl Trim<'_> {
    /// The typed trim, with the errors XADD's parser gives the same words
    /// (`MAXLEN|MINID [~] threshold`, `LIMIT n`) in their order.
    fn typed(&self, ctx: &Ctx<'_>) -> CmdResult<Option<TrimArgs>> {
        // redis-py writes `~` only with a threshold; without one, no `~` is read.
        let has = self.maxlen.is_some() || self.minid.is_some();
        let strategy = match (self.maxlen, self.minid) {
            (Some(n), _) => Some(TrimStrategy::MaxLen(n as u64)),
            (None, Some(m)) => Some(TrimStrategy::MinId(
                parse_id(m, 0, true, false)
                    .ok_or_else(CmdError::invalid_stream_id)?
                    .id,
            )),
            (None, None) => None,
        };
        let limit = match self.limit {
            Some(l) => {
                let n = int(l)?;
                if n < 0 {
                    return Err(CmdError::limit_negative());
                }
                Some(n)
            }
            None => None,
        };
        trim_args(ctx, strategy, has && self.approx, limit, self.policy, true)
    }
}

/// The typed XADD `run` in one session of the client's store: the entry's ID as redis-py
/// returns it (None for NOMKSTREAM on a missing key).
fn added(
    py: Python<'_>,
    f: &Fast,
    run: impl FnOnce(&mut Ctx<'_>) -> CmdResult<Option<XaddOutcome>> + Send,
) -> PyResult<Py<PyAny>> {
    let db = f.db;
    Ok(match locked(py, f, false, |sess| sess.run(db, run))? {
        Some(o) => id_obj(py, o.id, f.decode).unbind(),
        None => py.None(),
    })
}

/// The entry's ID as XADD's parser reads it: `*` (or none) for the next one.
fn typed_id(id: Option<&[u8]>) -> CmdResult<Option<(StreamId, bool)>> {
    match id {
        None | Some(b"*") => Ok(None),
        Some(i) => {
            let p = parse_id(i, 0, true, true).ok_or_else(CmdError::invalid_stream_id)?;
            Ok(Some((p.id, p.seq_given)))
        }
    }
}

words_then_args_methods! {
    /// Number of entries of a stream.
    xlen(name) => [b"XLEN"], Conv::Int;
}

#[pymethods]
impl NativeClient {
    /// Append an entry to a stream and return its ID (redis-py's ``xadd``). redis-py's
    /// arguments become the core's typed XADD arguments directly (no words re-parsed),
    /// checked with the parser's errors in its order and run by the typed XADD, which
    /// writes the command's own log record, in one session; a shape redis-py
    /// refuses client-side (its `DataError`s) or a client without the native path takes
    /// the Python method.
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
        let maxlen_n = maxlen.map(|m| exact_int(m).filter(|n| *n >= 0));
        let idmp_pair = idmp.map(|t| t.cast::<PyTuple>().ok().filter(|t| t.len() == 2));
        let idempotent = idmpauto.is_some() || idmp.is_some();
        // redis-py's DataError cases (left to the Python method): maxlen with minid,
        // idmpauto with idmp, an idempotent add with an explicit ID, an unknown policy, a
        // malformed idmp or maxlen.
        let conflicting = (maxlen.is_some() && minid.is_some())
            || (idmpauto.is_some() && idmp.is_some())
            || (idempotent && !id.is_none_or(|i| is_one_of(i, &["*"])));
        let simple = !conflicting
            && ref_policy.is_none_or(|p| is_one_of(p, REF_POLICIES))
            && !matches!(idmp_pair, Some(None))
            && !matches!(maxlen_n, Some(None));
        let dict = fields.cast::<PyDict>().ok().filter(|d| !d.is_empty());
        if let (true, Some(dict), Some(f)) = (simple, dict, slf.get().fast(slf)?) {
            let on =
                |o: Option<&Bound<'_, PyAny>>, default| o.map_or(Ok(default), |o| o.is_truthy());
            let key = arg_bytes(py, name)?;
            let no_mkstream = on(nomkstream, false)?;
            let options = [id, maxlen, minid, limit, ref_policy, idmpauto, idmp];
            if options.iter().all(Option::is_none) {
                // The call made most: nothing but the entry (and NOMKSTREAM), no option
                // to check or make typed.
                return with_pairs(py, dict, |pairs| {
                    let mut a = XaddArgs::new(key.as_ref(), pairs);
                    a.no_mkstream = no_mkstream;
                    added(py, f, |ctx| xadd_typed(ctx, &a))
                });
            }
            let approx = on(approximate, true)?;
            let policy = ref_policy.map(|p| match p.cast::<PyString>().map(|s| s.to_cow()) {
                Ok(Ok(s)) if s == "DELREF" => RefPolicy::DelRef,
                Ok(Ok(s)) if s == "ACKED" => RefPolicy::Acked,
                _ => RefPolicy::KeepRef,
            });
            let pid = idmpauto.map(|p| arg_bytes(py, p)).transpose()?;
            let pair = match &idmp_pair {
                Some(Some(t)) => Some((t.get_item(0)?, t.get_item(1)?)),
                _ => None,
            };
            let pair = match &pair {
                Some((p, i)) => Some((arg_bytes(py, p)?, arg_bytes(py, i)?)),
                None => None,
            };
            let minid = minid.map(|m| arg_bytes(py, m)).transpose()?;
            let limit = limit.map(|l| arg_bytes(py, l)).transpose()?;
            let id = id.map(|i| arg_bytes(py, i)).transpose()?;
            let trim = Trim {
                maxlen: maxlen_n.flatten(),
                minid: minid.as_deref(),
                approx,
                limit: limit.as_deref(),
                policy,
            };
            let id = id.as_deref();
            return with_pairs(py, dict, |pairs| {
                let mut a = XaddArgs::new(key.as_ref(), pairs);
                a.no_mkstream = no_mkstream;
                a.idmp = match (&pid, &pair) {
                    (Some(p), _) => Some((p.as_ref(), None)),
                    (None, Some((p, i))) => Some((p.as_ref(), Some(i.as_ref()))),
                    (None, None) => None,
                };
                added(py, f, |ctx| {
                    // Checked in the order of redis-py's words (IDMP, then the trim,
                    // then the ID), with the parser's errors.
                    a.check_typed(ctx.replaying)?;
                    a.trim = trim.typed(ctx)?;
                    a.id = typed_id(id)?;
                    xadd_typed(ctx, &a)
                })
            });
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

    /// Delete entries; return how many were deleted.
    #[pyo3(signature = (name, *ids))]
    fn xdel(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let mut all = vec![name.clone()];
        all.extend(ids.iter());
        keys_call(slf, "xdel", b"XDEL", &all)
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
