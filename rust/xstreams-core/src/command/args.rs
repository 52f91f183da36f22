//! Argument parsers shared by the commands, each failing with redis-server's error.

use crate::base::num::string2ll;
use crate::error::{CmdError, CmdResult};
use crate::structures::id::{parse_id, parse_interval_id, StreamId};

/// Case-insensitive comparison of an argument with an ASCII keyword, as Redis's
/// `strcasecmp` on the argument as a C string (up to its first NUL byte).
pub fn is(arg: &[u8], kw: &str) -> bool {
    crate::base::num::c_str(arg).eq_ignore_ascii_case(kw.as_bytes())
}

/// Exact comparison of an argument, as a C string, with a literal (`strcmp`).
pub fn eq(arg: &[u8], lit: &str) -> bool {
    crate::base::num::c_str(arg) == lit.as_bytes()
}

/// `getLongLongFromObjectOrReply`: an i64 or "value is not an integer or out of range".
pub fn int(arg: &[u8]) -> CmdResult<i64> {
    string2ll(arg).ok_or_else(CmdError::not_integer)
}

/// An i64 or the given error.
pub fn int_or(arg: &[u8], err: fn() -> CmdError) -> CmdResult<i64> {
    string2ll(arg).ok_or_else(err)
}

/// `getRangeLongFromObjectOrReply` with a custom message for every failure.
pub fn int_in_range(arg: &[u8], lo: i64, hi: i64, err: fn() -> CmdError) -> CmdResult<i64> {
    let v = string2ll(arg).ok_or_else(err)?;
    if v < lo || v > hi {
        return Err(err());
    }
    Ok(v)
}

/// A strict stream ID (no `-`/`+`), missing sequence 0.
pub fn strict_id(arg: &[u8]) -> CmdResult<StreamId> {
    parse_id(arg, 0, true, false)
        .map(|p| p.id)
        .ok_or_else(CmdError::invalid_stream_id)
}

/// A stream ID where `-` and `+` are allowed.
pub fn id_or_special(arg: &[u8], missing_seq: u64) -> CmdResult<StreamId> {
    parse_id(arg, missing_seq, false, false)
        .map(|p| p.id)
        .ok_or_else(CmdError::invalid_stream_id)
}

/// Range start: `-`, an ID, or an exclusive `(ID`. The exclusive form is incremented.
pub fn range_start(arg: &[u8]) -> CmdResult<StreamId> {
    let (id, ex) = parse_interval_id(arg, 0).ok_or_else(CmdError::invalid_stream_id)?;
    if ex {
        id.incr().ok_or_else(CmdError::invalid_start_interval)
    } else {
        Ok(id)
    }
}

/// Range end: `+`, an ID (missing sequence = max), or an exclusive `(ID`.
pub fn range_end(arg: &[u8]) -> CmdResult<StreamId> {
    let (id, ex) = parse_interval_id(arg, u64::MAX).ok_or_else(CmdError::invalid_stream_id)?;
    if ex {
        id.decr().ok_or_else(CmdError::invalid_end_interval)
    } else {
        Ok(id)
    }
}

/// Parse a block timeout in milliseconds (`getTimeoutFromObjectOrReply`), returning the
/// relative timeout (0 = forever).
pub fn block_timeout(arg: &[u8], now: i64) -> CmdResult<i64> {
    let t = string2ll(arg).ok_or_else(CmdError::timeout_not_integer)?;
    if t < 0 {
        return Err(CmdError::timeout_negative());
    }
    if t > 0 && t > i64::MAX - now {
        return Err(CmdError::timeout_out_of_range());
    }
    Ok(t)
}
