//! The RESP server's own error lines (connection level: authentication, transactions,
//! connections, limits, the protocol), redis-server's exact texts; the server's `errors`
//! module re-exports them.

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
