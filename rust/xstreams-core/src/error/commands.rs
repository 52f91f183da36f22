//! The commands' error lines (streams, keys, RESTORE, maxmemory, CONFIG), redis-server's
//! exact texts.

use super::{c_arg, CmdError, ErrorKind};

impl CmdError {
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
