//! The hot methods of `_NativeClient` (see `client.rs`): xadd, xrange, xrevrange, xread,
//! xreadgroup, xack, xlen, xdel, delete, exists, type.
//!
//! The common calls take the typed core API directly: redis-py's arguments become
//! `XaddArgs` / `ReadArgs` / range bounds / XACK's parsed IDs (no argument vector, no
//! command lookup, no `Reply` tree; an XADD's few field/value pairs on the stack), the store
//! runs them in one session with the GIL kept while the store is free (`client::locked`),
//! and reads collect what they serve into flat buffers that become redis-py's values once
//! the store is unlocked (`client_sink`). Calls with options the typed API does not take
//! (XADD trimming, an explicit ID) run the command's arguments in a session the same way;
//! a BLOCK read goes through the store's blocking path with the GIL released while it
//! waits. Arguments outside the shapes handled here go to the Python method of the same
//! name, the reference for redis-py's client-side checks.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyString, PyTuple};
use smallvec::SmallVec;
use xstreams_core::command::{
    args as cmd_args, range_typed, read_typed, xack_ids, xadd_typed, Ctx, RangeArgs, ReadArgs,
    XaddArgs,
};
use xstreams_core::error::CmdError;
use xstreams_core::structures::read::ReadSink;

use crate::client::{
    exact_int, fallback, is_exact_false, is_one_of, locked, locked_here, push_int, push_obj, raw,
    read_reply, run_args, Args, Fast, NativeClient, REF_POLICIES,
};
use crate::client_commands::{native_or, words_then_args_methods, Conv};
use crate::client_sink::{id_obj, Builder, Collected, Direct};
use crate::convert::arg_bytes;
use crate::prefetch;

/// Above this COUNT (or without one) a read may be long: the GIL is released meanwhile.
const SHORT_READ: i64 = 10_000;

/// Is `obj` the `*` ID (str or bytes)?
fn is_auto_id(obj: &Bound<'_, PyAny>) -> bool {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return b.as_bytes() == b"*";
    }
    is_one_of(obj, &["*"])
}

/// A dict's items, held so that their bytes can be borrowed.
type Items<'py> = Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>;

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

/// XADD with options but no trimming, as typed arguments: the entry's ID (None with
/// NOMKSTREAM on a missing key).
fn xadd_fast(
    py: Python<'_>,
    f: &Fast,
    name: &Bound<'_, PyAny>,
    dict: &Bound<'_, PyDict>,
    nomkstream: bool,
    idmp: Option<(&Bound<'_, PyAny>, Option<&Bound<'_, PyAny>>)>,
) -> PyResult<Py<PyAny>> {
    let key = arg_bytes(py, name)?;
    let idmp_bytes = match idmp {
        None => None,
        Some((pid, iid)) => Some((
            arg_bytes(py, pid)?,
            iid.map(|i| arg_bytes(py, i)).transpose()?,
        )),
    };
    let items: InlineItems<'_> = dict.iter().collect();
    let owned = pairs_of(py, &items)?;
    for v in owned.iter().skip(1).step_by(2) {
        prefetch::bytes(v);
    }
    let pairs: SmallVec<[&[u8]; 2 * INLINE_PAIRS]> = owned.iter().map(|c| c.as_ref()).collect();
    let mut a = XaddArgs::new(key.as_ref(), &pairs);
    a.no_mkstream = nomkstream;
    a.idmp = idmp_bytes
        .as_ref()
        .map(|(p, i)| (p.as_ref(), i.as_ref().map(|i| i.as_ref())));
    let db = f.db;
    let out = locked(py, f, false, |sess| sess.run(db, |ctx| xadd_typed(ctx, &a)))?;
    Ok(match out {
        Some(o) => id_obj(py, o.id, f.decode).unbind(),
        None => py.None(),
    })
}

/// `XADD name * field value`, the call made most (one field, no option): the pair
/// taken straight from the dict (a strong reference each, so their bytes stay valid
/// while the store runs), no option decoded, no buffer for the pairs, the ID formatted
/// straight into the returned object. Other dicts take [`xadd_fast`].
#[inline(never)]
fn xadd_plain(
    py: Python<'_>,
    f: &Fast,
    name: &Bound<'_, PyAny>,
    dict: &Bound<'_, PyDict>,
) -> PyResult<Py<PyAny>> {
    let Some((field, value)) = dict.iter().next().filter(|_| dict.len() == 1) else {
        return xadd_fast(py, f, name, dict, false, None);
    };
    let key = arg_bytes(py, name)?;
    let field = arg_bytes(py, &field)?;
    let value = arg_bytes(py, &value)?;
    prefetch::bytes(&value);
    let pairs = [field.as_ref(), value.as_ref()];
    let a = XaddArgs::new(key.as_ref(), &pairs);
    let db = f.db;
    let out = locked(py, f, false, |sess| sess.run(db, |ctx| xadd_typed(ctx, &a)))?;
    Ok(match out {
        Some(o) => id_obj(py, o.id, f.decode).unbind(),
        None => py.None(),
    })
}

/// XACK of at least one ID as a typed call (no argument vector, no command lookup): the
/// IDs' bytes borrowed from the tuple, checked in the command's order by `xack_ids`.
fn xack_fast(
    py: Python<'_>,
    f: &Fast,
    name: &Bound<'_, PyAny>,
    groupname: &Bound<'_, PyAny>,
    ids: &Bound<'_, PyTuple>,
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
    let raw: Vec<&[u8]> = raw_ids.iter().map(|i| i.as_ref()).collect();
    let (key, group) = (key.as_ref(), group.as_ref());
    let db = f.db;
    let acked = locked(py, f, false, |sess| {
        sess.run(db, |ctx| xack_ids(ctx, key, group, &raw))
    })?;
    Ok(acked.into_pyobject(py)?.into_any().unbind())
}

words_then_args_methods! {
    /// Number of entries of a stream.
    xlen(name) => [b"XLEN"], Conv::Int;
    /// The type of key ``name``.
    type_ as "type"(name) => [b"TYPE"], Conv::Raw;
}

#[pymethods]
impl NativeClient {
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
        let bare = id.is_none()
            && maxlen.is_none()
            && approximate.is_none()
            && nomkstream.is_none()
            && minid.is_none()
            && limit.is_none()
            && ref_policy.is_none()
            && idmpauto.is_none()
            && idmp.is_none();
        if bare {
            if let Ok(dict) = fields.cast::<PyDict>() {
                if !dict.is_empty() {
                    if let Some(f) = slf.get().fast(slf)? {
                        return xadd_plain(py, f, name, dict);
                    }
                }
            }
        }
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
            let untrimmed = maxlen.is_none() && minid.is_none() && limit.is_none();
            if untrimmed && ref_policy.is_none() && id.is_none_or(is_auto_id) {
                let pair = match &idmp_pair {
                    Some(Some(p)) => Some((p.get_item(0)?, p.get_item(1)?)),
                    _ => None,
                };
                let idmp = match (idmpauto, &pair) {
                    (Some(pid), _) => Some((pid, None)),
                    (None, Some((pid, iid))) => Some((pid, Some(iid))),
                    (None, None) => None,
                };
                return xadd_fast(py, f, name, dict, nomkstream_on, idmp);
            }
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
            let items: Items<'_> = dict.iter().collect();
            for (k, v) in &items {
                args.push(arg_bytes(py, k)?.into_owned().into());
                args.push(arg_bytes(py, v)?.into_owned().into());
            }
            let reply = run_args(py, f, &args)?;
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
        range_call(slf, py, "xrange", name, min, max, count, false)
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
        range_call(slf, py, "xrevrange", name, min, max, count, true)
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
        if !ids.is_empty() {
            if let Some(f) = slf.get().fast(slf)? {
                return xack_fast(py, f, name, groupname, ids);
            }
        }
        let mut all = vec![name.clone(), groupname.clone()];
        all.extend(ids.iter());
        keys_call(slf, "xack", b"XACK", &all)
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

    /// Delete keys; return how many existed.
    #[pyo3(signature = (*names))]
    fn delete(slf: &Bound<'_, Self>, names: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let all: Vec<Bound<'_, PyAny>> = names.iter().collect();
        keys_call(slf, "delete", b"DEL", &all)
    }

    /// Number of ``names`` that exist.
    #[pyo3(signature = (*names))]
    fn exists(slf: &Bound<'_, Self>, names: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let all: Vec<Bound<'_, PyAny>> = names.iter().collect();
        keys_call(slf, "exists", b"EXISTS", &all)
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
            let count = count_n.flatten();
            let Some(Some(b)) = block_n else {
                return read_fast(py, f, None, dict, count, false, None);
            };
            let mut args: Args<'_> = Vec::with_capacity(6 + 2 * dict.len());
            args.push(Cow::Borrowed(b"XREAD"));
            args.push(Cow::Borrowed(b"BLOCK"));
            push_int(&mut args, b);
            if let Some(c) = count {
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
            let count = count_n.flatten();
            let noack_on = noack_flag == Some(true);
            let claim = claim.flatten();
            let Some(Some(b)) = block_n else {
                let group = Some((groupname, consumername, noack_on));
                return read_fast(py, f, group, dict, count, claim.is_some(), claim);
            };
            let mut args: Args<'_> = Vec::with_capacity(10 + 2 * dict.len());
            args.push(Cow::Borrowed(b"XREADGROUP"));
            args.push(Cow::Borrowed(b"GROUP"));
            push_obj(py, &mut args, groupname)?;
            push_obj(py, &mut args, consumername)?;
            if let Some(c) = count {
                args.push(Cow::Borrowed(b"COUNT"));
                push_int(&mut args, c);
            }
            args.push(Cow::Borrowed(b"BLOCK"));
            push_int(&mut args, b);
            if noack_on {
                args.push(Cow::Borrowed(b"NOACK"));
            }
            if let Some(c) = claim {
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

/// A non-blocking XREAD / XREADGROUP as typed arguments, built into the client's shape.
#[allow(clippy::too_many_arguments)]
fn read_fast(
    py: Python<'_>,
    f: &Fast,
    group: Option<(&Bound<'_, PyAny>, &Bound<'_, PyAny>, bool)>,
    dict: &Bound<'_, PyDict>,
    count: Option<i64>,
    claim: bool,
    min_idle: Option<i64>,
) -> PyResult<Py<PyAny>> {
    let names = match group {
        Some((g, c, _)) => Some((arg_bytes(py, g)?, arg_bytes(py, c)?)),
        None => None,
    };
    let items: Items<'_> = dict.iter().collect();
    let mut keys_owned = Vec::with_capacity(items.len());
    let mut ids_owned = Vec::with_capacity(items.len());
    for (k, v) in &items {
        keys_owned.push(arg_bytes(py, k)?);
        ids_owned.push(arg_bytes(py, v)?);
    }
    let keys: Vec<&[u8]> = keys_owned.iter().map(|k| k.as_ref()).collect();
    let ids: Vec<&[u8]> = ids_owned.iter().map(|k| k.as_ref()).collect();
    let mut a = match &names {
        Some((g, c)) => ReadArgs::xreadgroup(g, c, &keys, &ids),
        None => ReadArgs::xread(&keys, &ids),
    };
    a.count = count.unwrap_or(0) as u64;
    a.noack = group.is_some_and(|(_, _, n)| n);
    a.min_idle = min_idle.unwrap_or(-1);
    let heavy = count.is_none_or(|c| c > SHORT_READ);
    let got = collect(py, f, heavy, |ctx, mut sink| read_typed(ctx, &a, &mut sink))?;
    let out = Builder::new(&got, f).read(py, f.shape, claim);
    got.recycle();
    out
}

/// Serve a read into a [`Collected`] in one store session: on the calling thread, each
/// value made into its `bytes` object as it is served ([`Direct`]), when the read is short,
/// the store free and no decoding asked; otherwise into buffers with the GIL released
/// ([`locked`]).
fn collect(
    py: Python<'_>,
    f: &Fast,
    heavy: bool,
    serve: impl Fn(&mut Ctx<'_>, &mut dyn ReadSink) -> Result<(), CmdError> + Sync,
) -> PyResult<Collected> {
    let db = f.db;
    let here = (!heavy && !f.decode).then(|| {
        locked_here(py, f, |py, sess| {
            sess.run(db, |ctx| {
                let mut c = Collected::new();
                serve(ctx, &mut Direct::new(&mut c, py))?;
                Ok(c)
            })
        })
    });
    match here.flatten() {
        Some(got) => got,
        None => locked(py, f, heavy, |sess| {
            sess.run(db, |ctx| {
                let mut c = Collected::new();
                serve(ctx, &mut c)?;
                Ok(c)
            })
        }),
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

/// XRANGE / XREVRANGE: the bounds parsed and the entries read in one session.
#[allow(clippy::too_many_arguments)]
fn range_call(
    slf: &Bound<'_, NativeClient>,
    py: Python<'_>,
    method: &str,
    name: &Bound<'_, PyAny>,
    min: Option<&Bound<'_, PyAny>>,
    max: Option<&Bound<'_, PyAny>>,
    count: Option<&Bound<'_, PyAny>>,
    rev: bool,
) -> PyResult<Py<PyAny>> {
    let count_n = count.map(exact_int);
    let ok = !matches!(count_n, Some(None) | Some(Some(i64::MIN..=0)));
    if let (true, Some(f)) = (ok, slf.get().fast(slf)?) {
        let key = arg_bytes(py, name)?;
        let (first, second) = if rev { (max, min) } else { (min, max) };
        // Encoded in the order the command's arguments would be (key, first, second).
        let first = first.map(|v| arg_bytes(py, v)).transpose()?;
        let second = second.map(|v| arg_bytes(py, v)).transpose()?;
        let (first_d, second_d): (&[u8], &[u8]) = if rev { (b"+", b"-") } else { (b"-", b"+") };
        let first = first.as_deref().unwrap_or(first_d);
        let second = second.as_deref().unwrap_or(second_d);
        let (lo, hi) = if rev {
            (second, first)
        } else {
            (first, second)
        };
        let heavy = count_n.flatten().is_none_or(|c| c > SHORT_READ);
        // The checks of XRANGE in its order: the bounds, then the key's type.
        let serve = |ctx: &mut Ctx<'_>, sink: &mut dyn ReadSink| {
            let a = RangeArgs {
                key: &key,
                start: cmd_args::range_start(lo)?,
                end: cmd_args::range_end(hi)?,
                count: count_n.flatten().map(|c| c as usize),
                rev,
            };
            range_typed(ctx, &a, |e| sink.entry(e, None))?;
            Ok(())
        };
        let got = collect(py, f, heavy, serve)?;
        let out = Builder::new(&got, f).all_entries(py);
        got.recycle();
        return out;
    }
    let (first_d, second_d) = if rev { ("+", "-") } else { ("-", "+") };
    let (first, second) = if rev { (max, min) } else { (min, max) };
    let first = match first {
        Some(v) => v.clone(),
        None => PyString::new(py, first_d).into_any(),
    };
    let second = match second {
        Some(v) => v.clone(),
        None => PyString::new(py, second_d).into_any(),
    };
    fallback(py, method)?
        .call1((slf, name, first, second, count))
        .map(Bound::unbind)
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
