//! XRANGE, XREVRANGE, XREAD and XREADGROUP: redis-py's arguments become the core's typed
//! reads (`RangeArgs` + `range_typed`, `ReadArgs` + `read_typed`) served into a
//! [`Collected`] in one session, the values built once the store is unlocked
//! (`sink::Builder`); a BLOCK read takes the store's blocking path with the GIL released
//! while it waits.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};
use xstreams_core::command::{args as cmd_args, range_typed, read_typed, Ctx, RangeArgs, ReadArgs};
use xstreams_core::error::CmdError;
use xstreams_core::structures::read::ReadSink;

use super::sink::{Builder, Collected, Direct};
use super::{
    exact_int, fallback, is_exact_false, locked, locked_here, push_int, push_obj, read_reply, Args,
    Fast, NativeClient,
};
use crate::convert::arg_bytes;

/// Above this COUNT (or without one) a read may be long: the GIL is released meanwhile.
const SHORT_READ: i64 = 10_000;

/// A dict's items, held so that their bytes can be borrowed.
type Items<'py> = Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>;

#[pymethods]
impl NativeClient {
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
