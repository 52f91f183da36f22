//! Every error a command can reply with, as the exact line redis-server sends (without
//! the leading `-`). Keeping them in one file makes the strings reviewable against Redis.

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
/// value`. Every one is made by a constructor of this file.
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
        CmdError {
            kind,
            line: line.into(),
        }
    }
}

impl fmt::Display for CmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line)
    }
}

impl std::error::Error for CmdError {}

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

    // ---- stream errors ------------------------------------------------------------
    pub fn xadd_id_zero() -> Self {
        CmdError::err("The ID specified in XADD must be greater than 0-0")
    }
    pub fn xadd_id_too_small() -> Self {
        CmdError::err(
            "The ID specified in XADD is equal or smaller than the target stream top item",
        )
    }
    pub fn xadd_exhausted() -> Self {
        CmdError::err("The stream has exhausted the last possible ID, unable to add more items")
    }
    pub fn elements_too_large() -> Self {
        CmdError::err("Elements are too large to be stored")
    }
    pub fn maxlen_minid_together() -> Self {
        CmdError::err_of(
            ErrorKind::Syntax,
            "syntax error, MAXLEN and MINID options at the same time are not compatible",
        )
    }
    pub fn maxlen_negative() -> Self {
        CmdError::err("The MAXLEN argument must be >= 0.")
    }
    pub fn limit_negative() -> Self {
        CmdError::err("The LIMIT argument must be >= 0.")
    }
    pub fn limit_without_strategy() -> Self {
        CmdError::err_of(
            ErrorKind::Syntax,
            "syntax error, LIMIT cannot be used without specifying a trimming strategy",
        )
    }
    pub fn limit_without_tilde() -> Self {
        CmdError::err_of(
            ErrorKind::Syntax,
            "syntax error, LIMIT cannot be used without the special ~ option",
        )
    }
    pub fn xtrim_without_strategy() -> Self {
        CmdError::err_of(
            ErrorKind::Syntax,
            "syntax error, XTRIM must be called with a trimming strategy",
        )
    }
    pub fn idmp_twice() -> Self {
        CmdError::err_of(
            ErrorKind::Syntax,
            "syntax error, IDMP/IDMPAUTO specified multiple times",
        )
    }
    pub fn idmpauto_empty_pid() -> Self {
        CmdError::err_of(
            ErrorKind::Syntax,
            "syntax error, IDMPAUTO requires a non-empty producer ID",
        )
    }
    pub fn idmp_empty_pid() -> Self {
        CmdError::err_of(
            ErrorKind::Syntax,
            "syntax error, IDMP requires a non-empty producer ID",
        )
    }
    pub fn idmp_empty_iid() -> Self {
        CmdError::err_of(
            ErrorKind::Syntax,
            "syntax error, IDMP requires a non-empty idempotent ID",
        )
    }
    pub fn idmp_needs_auto_id() -> Self {
        CmdError::err_of(
            ErrorKind::Syntax,
            "syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs",
        )
    }
    pub fn numids_positive() -> Self {
        CmdError::err("Number of IDs must be a positive integer")
    }
    pub fn numids_mismatch() -> Self {
        CmdError::err("The `numids` parameter must match the number of arguments")
    }
    pub fn ids_required() -> Self {
        CmdError::err("IDS option is required")
    }
    pub fn invalid_start_interval() -> Self {
        CmdError::err("invalid start ID for the interval")
    }
    pub fn invalid_end_interval() -> Self {
        CmdError::err("invalid end ID for the interval")
    }
    pub fn xsetid_entries_added_negative() -> Self {
        CmdError::err("entries_added must be positive")
    }
    pub fn xsetid_maxdeleted_larger() -> Self {
        CmdError::err(
            "The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
        )
    }
    pub fn xsetid_smaller_than_maxdeleted() -> Self {
        CmdError::err("The ID specified in XSETID is smaller than current max_deleted_entry_id")
    }
    pub fn xsetid_smaller_than_top() -> Self {
        CmdError::err("The ID specified in XSETID is smaller than the target stream top item")
    }
    pub fn xsetid_entries_added_small() -> Self {
        CmdError::err(
            "The entries_added specified in XSETID is smaller than the target stream length",
        )
    }
    pub fn xread_option_only_group(opt: &str) -> Self {
        CmdError::err(format!(
            "The {opt} option is only supported by XREADGROUP. You called XREAD instead."
        ))
    }
    pub fn min_idle_not_integer() -> Self {
        CmdError::err("min-idle-time is not an integer or out of range")
    }
    pub fn min_idle_negative() -> Self {
        CmdError::err("min-idle-time must be a positive integer")
    }
    pub fn unbalanced_streams(group: bool) -> Self {
        if group {
            CmdError::err("Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.")
        } else {
            CmdError::err("Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be specified.")
        }
    }
    pub fn missing_group_option() -> Self {
        CmdError::err("Missing GROUP option for XREADGROUP")
    }
    pub fn nogroup_xreadgroup(key: &[u8], group: &[u8]) -> Self {
        CmdError::coded(
            ErrorKind::NoGroup,
            format!(
                "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                c_arg(key),
                c_arg(group)
            ),
        )
    }
    pub fn nogroup_key_or_group(key: &[u8], group: &[u8]) -> Self {
        CmdError::coded(
            ErrorKind::NoGroup,
            format!(
                "NOGROUP No such key '{}' or consumer group '{}'",
                c_arg(key),
                c_arg(group)
            ),
        )
    }
    pub fn nogroup_for_key(group: &[u8], key: &[u8]) -> Self {
        CmdError::coded(
            ErrorKind::NoGroup,
            format!(
                "NOGROUP No such consumer group '{}' for key name '{}'",
                c_arg(group),
                c_arg(key)
            ),
        )
    }
    pub fn dollar_in_xreadgroup() -> Self {
        CmdError::err("The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
    }
    pub fn plus_in_xreadgroup() -> Self {
        CmdError::err("The + ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The + ID would just return an empty result set.")
    }
    pub fn gt_in_xread() -> Self {
        CmdError::err("The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
    }
    pub fn xgroup_key_required() -> Self {
        CmdError::err("The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
    }
    pub fn entriesread_invalid() -> Self {
        CmdError::err("value for ENTRIESREAD must be positive or -1")
    }
    pub fn busygroup() -> Self {
        CmdError::of(
            ErrorKind::BusyGroup,
            "BUSYGROUP Consumer Group name already exists",
        )
    }
    pub fn xclaim_min_idle() -> Self {
        CmdError::err("Invalid min-idle-time argument for XCLAIM")
    }
    pub fn xclaim_idle() -> Self {
        CmdError::err("Invalid IDLE option argument for XCLAIM")
    }
    pub fn xclaim_time() -> Self {
        CmdError::err("Invalid TIME option argument for XCLAIM")
    }
    pub fn xclaim_retrycount() -> Self {
        CmdError::err("Invalid RETRYCOUNT option argument for XCLAIM")
    }
    pub fn xclaim_unrecognized(opt: &[u8]) -> Self {
        CmdError::err(format!("Unrecognized XCLAIM option '{}'", c_arg(opt)))
    }
    pub fn xautoclaim_min_idle() -> Self {
        CmdError::err("Invalid min-idle-time argument for XAUTOCLAIM")
    }
    pub fn xautoclaim_count() -> Self {
        CmdError::err("COUNT must be > 0")
    }
    pub fn xnack_mode() -> Self {
        CmdError::err("mode must be SILENT, FAIL, or FATAL")
    }
    pub fn xnack_numids() -> Self {
        CmdError::err("numids must be a positive integer")
    }
    pub fn xnack_numids_mismatch() -> Self {
        CmdError::err("number of IDs doesn't match numids")
    }
    pub fn xnack_retrycount() -> Self {
        CmdError::err("Invalid RETRYCOUNT value, must be >= 0")
    }
    pub fn xnack_unrecognized(opt: &[u8]) -> Self {
        CmdError::err(format!("Unrecognized XNACK option '{}'", c_arg(opt)))
    }
    pub fn xnack_expected_ids() -> Self {
        CmdError::err_of(ErrorKind::Syntax, "syntax error, expected IDS keyword")
    }
    pub fn xcfgset_duration_twice() -> Self {
        CmdError::err("IDMP-DURATION specified multiple times")
    }
    pub fn xcfgset_maxsize_twice() -> Self {
        CmdError::err("IDMP-MAXSIZE specified multiple times")
    }
    pub fn xcfgset_duration_range() -> Self {
        CmdError::err("IDMP-DURATION must be between 1 and 86400 seconds")
    }
    pub fn xcfgset_maxsize_range() -> Self {
        CmdError::err("IDMP-MAXSIZE must be between 1 and 10000 entries")
    }
    pub fn xcfgset_no_param() -> Self {
        CmdError::err("At least one parameter must be specified")
    }
    pub fn xidmprecord_empty_pid() -> Self {
        CmdError::err("producer ID must be non-empty")
    }
    pub fn xidmprecord_empty_iid() -> Self {
        CmdError::err("idempotent ID must be non-empty")
    }
    pub fn xidmprecord_no_message() -> Self {
        CmdError::err("No such message in stream")
    }
    pub fn xidmprecord_conflict() -> Self {
        CmdError::err("IID already exists for this producer with a different stream ID")
    }

    // DUMP / RESTORE (redis-server's cluster.c) and RDB files.
    pub fn busykey() -> Self {
        CmdError::of(
            ErrorKind::BusyKey,
            "BUSYKEY Target key name already exists.",
        )
    }
    pub fn restore_invalid_ttl() -> Self {
        CmdError::err("Invalid TTL value, must be >= 0")
    }
    pub fn restore_invalid_idletime() -> Self {
        CmdError::err("Invalid IDLETIME value, must be >= 0")
    }
    pub fn restore_invalid_freq() -> Self {
        CmdError::err("Invalid FREQ value, must be >= 0 and <= 255")
    }
    pub fn dump_payload_wrong() -> Self {
        CmdError::err("DUMP payload version or checksum are wrong")
    }
    pub fn bad_data_format() -> Self {
        CmdError::err("Bad data format")
    }
    /// A valid payload of a type xstreams does not store (redis-server would accept it).
    pub fn restore_unsupported_type(type_name: &str) -> Self {
        CmdError::err(format!(
            "DUMP payload holds a {type_name} value; xstreams stores only streams and strings"
        ))
    }
}

/// `maxmemory` reached under `noeviction`: redis-server's reply to a `denyoom` command.
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";
/// `maxmemory-policy` other than `noeviction` (xstreams never evicts keys).
pub const MAXMEMORY_POLICY: &str = "argument must be 'noeviction' (xstreams never evicts keys)";

impl CmdError {
    /// The OOM error of `maxmemory` under `noeviction`.
    pub fn oom() -> Self {
        CmdError::of(ErrorKind::Oom, OOM)
    }
}

/// CONFIG SET of a parameter that cannot change at run time.
pub const CONFIG_IMMUTABLE: &str = "can't set immutable config";
/// CONFIG SET naming a parameter twice.
pub const CONFIG_DUPLICATE: &str = "duplicate parameter";
/// CONFIG REWRITE without a configuration file.
pub const NO_CONFIG_FILE: &str = "ERR The server is running without a config file";
/// CONFIG REWRITE on a server started with a configuration file (xstreams never writes it).
pub const CONFIG_REWRITE_UNSUPPORTED: &str =
    "ERR CONFIG REWRITE is not supported: xstreams never rewrites its configuration file";

/// The text (without `ERR `) of CONFIG SET naming an unknown parameter.
pub fn config_set_unknown_text(name: &str) -> String {
    format!("Unknown option or number of arguments for CONFIG SET - '{name}'")
}

impl CmdError {
    /// CONFIG SET naming an unknown parameter (`name` as given).
    pub fn config_set_unknown(name: &str) -> Self {
        CmdError::err(config_set_unknown_text(name))
    }
    /// CONFIG SET refused for parameter `name` (as given) with `msg`.
    pub fn config_set_failed(name: &str, msg: &str) -> Self {
        CmdError::err(format!(
            "CONFIG SET failed (possibly related to argument '{name}') - {msg}"
        ))
    }
    /// CONFIG REWRITE without a configuration file.
    pub fn no_config_file() -> Self {
        CmdError::of(ErrorKind::Other, NO_CONFIG_FILE)
    }
}
/// The `DataError` texts of the Python API, as redis-py raises them for the same bad
/// arguments (or in its style for options of our own).
pub mod data {
    pub const XREAD_STREAMS_EMPTY: &str = "XREAD streams must be a non empty dict";
    pub const GROUP_AND_CONSUMER: &str = "group and consumer go together";
    pub const IDMP_NEEDS_PRODUCER: &str =
        "iid and idmpauto need a producer (a producer column or a pid)";
    pub const IDMPAUTO_OR_IID: &str = "Only one of ```idmpauto``` or ```iid``` may be specified";
    pub const PRODUCER_NEEDS_IID: &str = "a producer needs an iid column or idmpauto=True";
    pub const MAXLEN_OR_MINID: &str = "Only one of ```maxlen``` or ```minid``` may be specified";
    pub const REF_POLICY: &str = "XADD ref_policy must be one of: KEEPREF, DELREF, ACKED";
    pub const MAXLEN_NEGATIVE: &str = "XADD maxlen must be non-negative integer";

    /// The dedup's settings and columns (`DedupSpec`, `xstreams.Deduper`): the texts
    /// `xstreams.spark.dedup` raises for the same arguments.
    pub const DEDUP_IID_OR_CONTENT: &str = "give iid or content columns (one of them)";
    pub const DEDUP_CONTENT_EMPTY: &str = "content needs at least one column";

    /// A dedup's `duration` or `maxsize` below 1 (the ranges XCFGSET takes are checked
    /// by the Python API, `xstreams.dedup.check_settings`).
    pub fn dedup_setting(name: &str, got: i128) -> String {
        format!("{name} must be at least 1, got {got}")
    }

    pub fn dedup_no_column(name: &str) -> String {
        format!("column {name:?} is not in the batch")
    }

    /// A row the dedup cannot answer as XADD would (`row`: its place in the input).
    pub fn dedup_row(role: &str, name: &str, row: usize, what: &str) -> String {
        format!("dedup: the {role} column {name:?} {what} on row {row}")
    }

    /// An argument of a type that is not bytes, str, int or float.
    pub fn invalid_input(type_name: &str) -> String {
        format!(
            "Invalid input of type: '{type_name}'. Convert to a bytes, string, int or float first."
        )
    }
}

/// The RESP server's own error lines (connection level: authentication, transactions,
/// connections, limits, the protocol), redis-server's exact texts; the server's `errors`
/// module re-exports them.
pub mod server {
    pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
    pub const PROTO_NOT_INTEGER: &str = "ERR Protocol version is not an integer or out of range";
    pub const NOPROTO: &str = "NOPROTO unsupported protocol version";
    pub const CLIENT_NAME_CHARS: &str =
        "ERR Client names cannot contain spaces, newlines or special characters.";
    pub const DB_INDEX_RANGE_INT: &str =
        "ERR value is out of range, value must between -2147483648 and 2147483647";
    pub const DB_INDEX_RANGE: &str = "ERR DB index is out of range";
    pub const UNBLOCK_REASON: &str = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
    pub const INVALID_CLIENT_ID: &str = "ERR Invalid client ID";
    pub const NO_SUCH_CLIENT: &str = "ERR No such client";
    pub const CLIENT_ID_POSITIVE: &str = "ERR client-id should be greater than 0";
    pub const INVALID_COMMAND: &str = "ERR Invalid command specified";
    pub const INVALID_ARG_COUNT: &str = "ERR Invalid number of arguments specified for command";
    pub const NO_KEY_ARGS: &str = "ERR The command has no key arguments";
    pub const SYNTAX: &str = "ERR syntax error";
    pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
    pub const MULTI_NESTED: &str = "ERR MULTI calls can not be nested";
    pub const DISCARD_WITHOUT_MULTI: &str = "ERR DISCARD without MULTI";
    pub const NO_SHUTDOWN: &str = "ERR No shutdown in progress.";
    pub const IN_MEMORY: &str =
        "ERR this server keeps its data in memory (start it with --dir to persist)";
    pub const NOAUTH: &str = "NOAUTH Authentication required.";
    pub const NOT_IN_MULTI: &str = "ERR Command not allowed inside a transaction";
    pub const EXEC_WITHOUT_MULTI: &str = "ERR EXEC without MULTI";
    pub const WATCH_IN_MULTI: &str = "ERR WATCH inside MULTI is not allowed";
    pub const UNBLOCKED: &str = "UNBLOCKED client unblocked via CLIENT UNBLOCK";
    pub const DEBUG_NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the \
enable-debug-command option is set to \"local\", you can run it from a local connection, \
otherwise you need to set this option in the configuration file, and then restart the server.";
    /// The line a connection over `maxclients` gets before it is closed.
    pub const MAX_CLIENTS_LINE: &[u8] = b"-ERR max number of clients reached\r\n";

    pub const AUTH_WITHOUT_PASSWORD: &str = "ERR AUTH <password> called without any password \
configured for the default user. Are you sure your configuration is correct?";

    /// An operation of the store failed (SAVE, BGSAVE: compaction).
    pub fn failed(e: &dyn std::fmt::Display) -> String {
        format!("ERR {e}")
    }
    /// The commit thread of `--appendfsync always` is gone (cannot happen while the
    /// server runs: said rather than assumed).
    pub const COMMIT_THREAD_ENDED: &str = "the commit thread ended";
    /// Why `xstreams serve --appendfsync always` stops after a failed log write or fsync
    /// (as redis-server exits then): replies waiting for it cannot be sent.
    pub fn log_failed_under_always(why: &str) -> String {
        format!("Can't persist the log ({why}) with appendfsync always: exiting")
    }
    /// DEBUG VALIDATE found a broken invariant.
    pub fn invalid_store(e: &dyn std::fmt::Display) -> String {
        format!("ERR invalid store: {e}")
    }
    pub fn hello_option(opt: &str) -> String {
        format!("ERR Syntax error in HELLO option '{opt}'")
    }
    pub fn unrecognized_option(opt: &str) -> String {
        format!("ERR Unrecognized option '{opt}'")
    }
    pub fn attr_chars(attr: &str) -> String {
        format!("ERR {attr} cannot contain spaces, newlines or special characters.")
    }
    pub fn unknown_client_type(t: &str) -> String {
        format!("ERR Unknown client type '{t}'")
    }
    pub fn debug_subcommand(sub: &str) -> String {
        format!("ERR unknown subcommand or wrong number of arguments for '{sub}'. Try DEBUG HELP.")
    }

    /// redis-server's reply to a non-loopback client in protected mode.
    /// The beginning of a protocol error line (the reason follows).
    pub const PROTOCOL_ERROR: &str = "ERR Protocol error: ";
    /// The beginning of the protocol error for a byte other than `$` (the byte and a quote
    /// follow).
    pub const PROTOCOL_EXPECTED_DOLLAR: &str = "ERR Protocol error: expected '$', got '";
    /// HELLO without AUTH on a connection that must authenticate.
    pub const NOAUTH_HELLO: &str = "NOAUTH HELLO must be called with the client already \
authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to \
authenticate the client and select the RESP protocol version at the same time";

    pub const PROTECTED_MODE_ERROR: &str =
        "-DENIED Redis is running in protected mode because protected \
mode is enabled and no password is set for the default user. \
In this mode connections are only accepted from the loopback interface. \
If you want to connect from external computers to Redis you \
may adopt one of the following solutions: \
1) Just disable protected mode sending the command \
'CONFIG SET protected-mode no' from the loopback interface \
by connecting to Redis from the same host the server is \
running, however MAKE SURE Redis is not publicly accessible \
from internet if you do so. Use CONFIG REWRITE to make this \
change permanent. \
2) Alternatively you can just disable the protected mode by \
editing the Redis configuration file, and setting the protected \
mode option to 'no', and then restarting the server. \
3) If you started the server manually just for testing, restart \
it with the '--protected-mode no' option. \
4) Set up an authentication password for the default user. \
NOTE: You only need to do one of the above things in order for \
the server to start accepting connections from the outside.\r\n";
}
