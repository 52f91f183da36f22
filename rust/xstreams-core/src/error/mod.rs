//! Every error a command can reply with, as the exact line redis-server sends (without
//! the leading `-`). Keeping them in one module makes the strings reviewable against
//! Redis: the error types and the generic lines here, the commands' own lines in
//! `commands`, the Python API's `DataError` texts in [`data`], the RESP server's
//! connection-level lines in [`server`].

use std::fmt;

/// The family of a command error: its Redis error code and, for `ERR`, which kind of
/// `ERR` it is. Callers (the Python binding's exception classes, the tests) branch on it;
/// nobody reads the family back out of the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `ERR` of no family below (most argument errors of a single command).
    Other,
    /// `ERR syntax error` and its variants (`syntax error, ...`).
    Syntax,
    /// `ERR value is not an integer or out of range` / `ERR value is out of range`, and
    /// the other numeric-argument range errors.
    OutOfRange,
    /// `ERR Invalid stream ID specified as stream command argument`.
    InvalidStreamId,
    /// `ERR wrong number of arguments for '...' command`.
    Arity,
    /// `ERR unknown command` / `unknown subcommand` / `missing subcommand`.
    UnknownCommand,
    /// `ERR no such key`.
    NoSuchKey,
    /// `ERR the store was closed`.
    Closed,
    /// `WRONGTYPE`: the key holds a value of another type.
    WrongType,
    /// `NOGROUP`: no such key or consumer group.
    NoGroup,
    /// `BUSYGROUP`: the consumer group exists.
    BusyGroup,
    /// `BUSYKEY`: RESTORE's target key exists.
    BusyKey,
    /// `OOM`: `maxmemory` reached under `noeviction`.
    Oom,
    /// `EXECABORT`: an atomic batch was discarded.
    ExecAbort,
    /// `READONLY`: a write on a store opened read-only.
    ReadOnly,
    /// `MISCONF`: a durable store's log cannot be written.
    Misconf,
    /// `UNBLOCKED`: a blocked command was ended by the server's `CLIENT UNBLOCK ... ERROR`.
    Unblocked,
}

impl ErrorKind {
    /// The Redis error code: the first word of the line.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::WrongType => "WRONGTYPE",
            ErrorKind::NoGroup => "NOGROUP",
            ErrorKind::BusyGroup => "BUSYGROUP",
            ErrorKind::BusyKey => "BUSYKEY",
            ErrorKind::Oom => "OOM",
            ErrorKind::ExecAbort => "EXECABORT",
            ErrorKind::ReadOnly => "READONLY",
            ErrorKind::Misconf => "MISCONF",
            ErrorKind::Unblocked => "UNBLOCKED",
            ErrorKind::Other
            | ErrorKind::Syntax
            | ErrorKind::OutOfRange
            | ErrorKind::InvalidStreamId
            | ErrorKind::Arity
            | ErrorKind::UnknownCommand
            | ErrorKind::NoSuchKey
            | ErrorKind::Closed => "ERR",
        }
    }
}

/// A command error: its family ([`ErrorKind`]) and the complete error line, e.g.
/// `ERR syntax error` or `WRONGTYPE Operation against a key holding the wrong kind of
/// value`. Every one is made by a constructor of this module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CmdError {
    kind: ErrorKind,
    line: String,
}

impl CmdError {
    /// The family of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// The complete error line (without RESP's leading `-`).
    pub fn line(&self) -> &str {
        &self.line
    }
    /// The complete error line, owned.
    pub fn into_line(self) -> String {
        self.line
    }
    /// The error code (the line's first word), from the kind.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
    /// The line after its code (what redis-py shows for codes it strips).
    pub fn message(&self) -> &str {
        let code = self.kind.code();
        self.line
            .strip_prefix(code)
            .and_then(|r| r.strip_prefix(' '))
            .unwrap_or(&self.line)
    }
    fn of(kind: ErrorKind, line: impl Into<String>) -> Self {
        let line = line.into();
        debug_assert!(
            line.split(' ').next() == Some(kind.code()),
            "{kind:?} error with the line {line:?}"
        );
        CmdError { kind, line }
    }
}

impl fmt::Display for CmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line)
    }
}

impl std::error::Error for CmdError {}

/// A broken internal invariant, as `validate()` finds it (a bug inside xstreams, never
/// a user's error): the first violation, naming the key and structure involved. The
/// Python binding raises it as `InvariantError`, the server's `DEBUG VALIDATE` as
/// `ERR invalid store: ...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    message: String,
}

impl Violation {
    /// The violation found by a structure's `validate()`.
    pub fn new(message: String) -> Self {
        Violation { message }
    }
    /// What is broken, and where.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Violation {}

/// Result of a command step.
pub type CmdResult<T> = Result<T, CmdError>;

/// The message a caught panic carries (`panic!` with a literal or a formatted one).
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    (panic.downcast_ref::<&str>().copied())
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("unknown panic")
}

/// The bytes a C string function sees: everything up to the first NUL.
pub fn c_str(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(n) => &s[..n],
        None => s,
    }
}

/// Text of a user-supplied argument as `%s` would print it: up to the first NUL byte,
/// invalid UTF-8 replaced (the bytes reach the client unchanged in RESP; only
/// the embedded Python API sees a lossy string).
pub fn c_arg(arg: &[u8]) -> String {
    let s = c_str(arg);
    String::from_utf8_lossy(s).into_owned()
}

/// `%.128s` of an argument.
pub fn c_arg128(arg: &[u8]) -> String {
    let s = c_str(arg);
    let s = &s[..s.len().min(128)];
    String::from_utf8_lossy(s).into_owned()
}

/// Error of the commands of an atomic batch discarded because one was rejected.
pub const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";

/// Error of write commands on a store opened read-only.
pub const READ_ONLY_ERROR: &str = "READONLY You can't write against a read only store.";

/// Error line returned to a blocked caller (and any later command) when the store is
/// closed.
pub const CLOSED_ERROR: &str = "ERR the store was closed";

/// An I/O error as redis-server's `strerror` shows it in MISCONF and the log: the
/// system's text without Rust's ` (os error N)`.
pub fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match (e.raw_os_error(), text.rsplit_once(" (os error ")) {
        (Some(_), Some((reason, _))) => reason.to_owned(),
        _ => text,
    }
}

impl CmdError {
    /// A durable store's log could not be written or fsynced: writes are refused until a
    /// retry succeeds (or, after a failed fsync under `always`, the store reopens).
    pub fn misconf(e: impl fmt::Display) -> Self {
        CmdError::of(
            ErrorKind::Misconf,
            sanitize(format!("MISCONF Errors writing to the AOF file: {e}")),
        )
    }
}

/// Errors of the embedded API (store, batch paths, replay reader, bindings): lines in
/// the commands' style, for calls that have no Redis equivalent.
impl CmdError {
    pub fn db_index_out_of_range() -> Self {
        CmdError::err("DB index is out of range")
    }
    pub fn row_times_mismatch(times: usize, rows: usize) -> Self {
        CmdError::err(format!("{times} row times for {rows} rows"))
    }
    pub fn row_times_need_memory() -> Self {
        CmdError::err("per-row times need an in-memory store")
    }
    pub fn watch_of_another_store() -> Self {
        CmdError::err("the Watch belongs to another store")
    }
    pub fn full_load_part() -> Self {
        CmdError::err("a full-load part is read from a loaded store")
    }
}

/// XREAD / XREADGROUP MAXCOUNT and MAXSIZE (Redis 8.10). The wording is ours: the 8.8
/// binary the tests compare with predates the options.
impl CmdError {
    pub fn maxcount_not_positive() -> Self {
        CmdError::err("MAXCOUNT must be a positive integer")
    }
    pub fn maxsize_not_positive() -> Self {
        CmdError::err("MAXSIZE must be a positive integer")
    }
    pub fn maxcount_below_count() -> Self {
        CmdError::err("MAXCOUNT must be greater than or equal to COUNT")
    }
}

/// Replace CR and LF by spaces and trim trailing CR/LF, as Redis does for formatted errors.
fn sanitize(mut s: String) -> String {
    while s.ends_with('\r') || s.ends_with('\n') {
        s.pop();
    }
    s.chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect()
}

impl CmdError {
    /// An error of family `kind` whose text starts with its own code (`-NOGROUP ...` in
    /// Redis's source).
    fn coded(kind: ErrorKind, line: impl Into<String>) -> Self {
        CmdError::of(kind, sanitize(line.into()))
    }

    /// A generic error: Redis prefixes `ERR ` when the text has no code of its own.
    pub fn err(msg: impl Into<String>) -> Self {
        CmdError::err_of(ErrorKind::Other, msg)
    }

    /// An `ERR` of family `kind`.
    fn err_of(kind: ErrorKind, msg: impl Into<String>) -> Self {
        CmdError::of(kind, format!("ERR {}", sanitize(msg.into())))
    }

    /// The store was closed (a blocked caller, or any later command).
    pub fn closed() -> Self {
        CmdError::of(ErrorKind::Closed, CLOSED_ERROR)
    }
    /// A write on a store opened read-only.
    pub fn read_only() -> Self {
        CmdError::of(ErrorKind::ReadOnly, READ_ONLY_ERROR)
    }
    /// The commands of an atomic batch were discarded because one was rejected.
    pub fn exec_abort() -> Self {
        CmdError::of(ErrorKind::ExecAbort, EXECABORT)
    }
    /// A blocked command ended by the server's `CLIENT UNBLOCK <id> ERROR`.
    pub fn unblocked() -> Self {
        CmdError::of(ErrorKind::Unblocked, server::UNBLOCKED)
    }
    /// This error, for the key `key` of database `db` of an RDB file being imported (the
    /// line names the key; the kind stays the error's own).
    pub fn in_rdb_key(self, key: &[u8], db: u64) -> Self {
        let line = format!(
            "{} (key {:?} of db {db})",
            self.line,
            String::from_utf8_lossy(key)
        );
        CmdError {
            kind: self.kind,
            line,
        }
    }
    /// An error line that comes from outside the engine (a peer's RESP reply, a reference
    /// model's expectation), with the kind its code names (`Other` for every `ERR`, and for
    /// codes that have no kind here). The engine's own errors are never rebuilt this way:
    /// they keep the kind they were made with.
    pub fn from_peer_line(line: &str) -> Self {
        let code = line.split(' ').next().unwrap_or("");
        let kind = [
            ErrorKind::WrongType,
            ErrorKind::NoGroup,
            ErrorKind::BusyGroup,
            ErrorKind::BusyKey,
            ErrorKind::Oom,
            ErrorKind::ExecAbort,
            ErrorKind::ReadOnly,
            ErrorKind::Misconf,
            ErrorKind::Unblocked,
        ]
        .into_iter()
        .find(|k| k.code() == code)
        .unwrap_or(ErrorKind::Other);
        CmdError {
            kind,
            line: line.to_owned(),
        }
    }

    pub fn syntax() -> Self {
        CmdError::of(ErrorKind::Syntax, "ERR syntax error")
    }
    pub fn not_integer() -> Self {
        CmdError::of(
            ErrorKind::OutOfRange,
            "ERR value is not an integer or out of range",
        )
    }
    pub fn out_of_range() -> Self {
        CmdError::of(ErrorKind::OutOfRange, "ERR value is out of range")
    }
    pub fn wrong_type() -> Self {
        CmdError::of(
            ErrorKind::WrongType,
            "WRONGTYPE Operation against a key holding the wrong kind of value",
        )
    }
    pub fn no_such_key() -> Self {
        CmdError::of(ErrorKind::NoSuchKey, "ERR no such key")
    }
    pub fn invalid_stream_id() -> Self {
        CmdError::err_of(
            ErrorKind::InvalidStreamId,
            "Invalid stream ID specified as stream command argument",
        )
    }
    pub fn arity(fullname: &str) -> Self {
        CmdError::err_of(
            ErrorKind::Arity,
            format!("wrong number of arguments for '{fullname}' command"),
        )
    }
    pub fn unknown_command(name: &[u8], args: &[&[u8]]) -> Self {
        let mut msg = format!("unknown command '{}'", c_arg128(name));
        if !args.is_empty() {
            let mut list = String::new();
            for a in args {
                if list.len() >= 128 {
                    break;
                }
                let room = 128 - list.len();
                let s = c_str(a);
                let s = &s[..s.len().min(room)];
                list.push('\'');
                list.push_str(&String::from_utf8_lossy(s));
                list.push_str("' ");
            }
            msg.push_str(&format!(", with args beginning with: {list}"));
        }
        CmdError::err_of(ErrorKind::UnknownCommand, msg)
    }
    pub fn unknown_subcommand(sub: &[u8], container_upper: &str) -> Self {
        CmdError::err_of(
            ErrorKind::UnknownCommand,
            format!(
                "unknown subcommand '{}'. Try {container_upper} HELP.",
                c_arg128(sub)
            ),
        )
    }
    pub fn missing_subcommand(container_upper: &str) -> Self {
        CmdError::err_of(
            ErrorKind::UnknownCommand,
            format!("missing subcommand. Try {container_upper} HELP."),
        )
    }
    pub fn subcommand_syntax(sub: &[u8], container_upper: &str) -> Self {
        CmdError::err_of(
            ErrorKind::UnknownCommand,
            format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try {container_upper} HELP.",
            c_arg128(sub)
        ),
        )
    }
    pub fn timeout_not_integer() -> Self {
        CmdError::err("timeout is not an integer or out of range")
    }
    pub fn timeout_negative() -> Self {
        CmdError::err("timeout is negative")
    }
    pub fn timeout_out_of_range() -> Self {
        CmdError::err("timeout is out of range")
    }
    pub fn invalid_expire(fullname: &str) -> Self {
        CmdError::err(format!("invalid expire time in '{fullname}' command"))
    }
    pub fn expire_unsupported_option(opt: &[u8]) -> Self {
        CmdError::err(format!(
            "Unsupported option {}",
            String::from_utf8_lossy(opt)
        ))
    }
    pub fn expire_nx_incompatible() -> Self {
        CmdError::err("NX and XX, GT or LT options at the same time are not compatible")
    }
    pub fn expire_gt_lt_incompatible() -> Self {
        CmdError::err("GT and LT options at the same time are not compatible")
    }
}

mod commands;
mod config;
pub mod data;
pub mod persist;
pub mod server;

pub use commands::{
    config_set_unknown_text, CONFIG_DUPLICATE, CONFIG_IMMUTABLE, CONFIG_REWRITE_UNSUPPORTED,
    MAXMEMORY_POLICY, NO_CONFIG_FILE, OOM,
};
pub use config::ConfigError;
