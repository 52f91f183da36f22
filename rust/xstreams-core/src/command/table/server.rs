//! The connection-level and server commands' rows: in the one table so that `COMMAND`
//! lists them and resolution is one, run by the RESP server ([`ServerCmd`]); the embedded
//! store answers them as unknown commands, but for INFO and CONFIG, which it answers
//! itself ([`Run::Shared`]).

use super::super::admin;
use super::f::*;
use super::*;

const ALL_NODES_OK: &[&str] = &["REQUEST_POLICY:ALL_NODES", "RESPONSE_POLICY:ALL_SUCCEEDED"];
const ALL_SHARDS_OK: &[&str] = &["REQUEST_POLICY:ALL_SHARDS", "RESPONSE_POLICY:ALL_SUCCEEDED"];
const NDO: &[&str] = &["NONDETERMINISTIC_OUTPUT_ORDER"];

static CLIENT_SUBS: [CommandSpec; 11] = [
    srv(
        m(
            "getname",
            2,
            &[NOSCRIPT, LOADING, STALE],
            CONN,
            "connection",
            "2.6.9",
            "Returns the name of the connection.",
        ),
        ServerCmd::Client,
    ),
    srv(
        m(
            "help",
            2,
            &[LOADING, STALE],
            CONN,
            "connection",
            "5.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        ServerCmd::Client,
    ),
    srv(
        m(
            "id",
            2,
            &[NOSCRIPT, LOADING, STALE],
            CONN,
            "connection",
            "5.0.0",
            "Returns the unique client ID of the connection.",
        ),
        ServerCmd::Client,
    ),
    srv(
        tips(
            m(
                "info",
                2,
                &[NOSCRIPT, LOADING, STALE],
                CONN,
                "connection",
                "6.2.0",
                "Returns information about the connection.",
            ),
            ND,
        ),
        ServerCmd::Client,
    ),
    srv(
        m(
            "kill",
            -3,
            &[ADMIN, NOSCRIPT, LOADING, STALE],
            CONN,
            "connection",
            "2.4.0",
            "Terminates open connections.",
        ),
        ServerCmd::Client,
    ),
    srv(
        tips(
            m(
                "list",
                -2,
                &[ADMIN, NOSCRIPT, LOADING, STALE],
                CONN,
                "connection",
                "2.4.0",
                "Lists open connections.",
            ),
            ND,
        ),
        ServerCmd::Client,
    ),
    srv(
        m(
            "no-evict",
            3,
            &[ADMIN, NOSCRIPT, LOADING, STALE],
            CONN,
            "connection",
            "7.0.0",
            "Sets the client eviction mode of the connection.",
        ),
        ServerCmd::Client,
    ),
    srv(
        m(
            "no-touch",
            3,
            &[NOSCRIPT, LOADING, STALE],
            CONN,
            "connection",
            "7.2.0",
            "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
        ),
        ServerCmd::Client,
    ),
    srv(
        tips(
            m(
                "setinfo",
                4,
                &[NOSCRIPT, LOADING, STALE],
                CONN,
                "connection",
                "7.2.0",
                "Sets information specific to the client or connection.",
            ),
            ALL_NODES_OK,
        ),
        ServerCmd::Client,
    ),
    srv(
        tips(
            m(
                "setname",
                3,
                &[NOSCRIPT, LOADING, STALE],
                CONN,
                "connection",
                "2.6.9",
                "Sets the connection name.",
            ),
            ALL_NODES_OK,
        ),
        ServerCmd::Client,
    ),
    srv(
        m(
            "unblock",
            -3,
            &[ADMIN, NOSCRIPT, LOADING, STALE],
            CONN,
            "connection",
            "5.0.0",
            "Unblocks a client blocked by a blocking command from a different connection.",
        ),
        ServerCmd::Client,
    ),
];

static COMMAND_SUBS: [CommandSpec; 6] = [
    srv(
        m(
            "count",
            2,
            &[LOADING, STALE],
            CONN,
            "server",
            "2.8.13",
            "Returns a count of commands.",
        ),
        ServerCmd::Command,
    ),
    srv(
        tips(
            m(
                "docs",
                -2,
                &[LOADING, STALE],
                CONN,
                "server",
                "7.0.0",
                "Returns documentary information about one, multiple or all commands.",
            ),
            NDO,
        ),
        ServerCmd::Command,
    ),
    srv(
        m(
            "getkeys",
            -3,
            &[LOADING, STALE],
            CONN,
            "server",
            "2.8.13",
            "Extracts the key names from an arbitrary command.",
        ),
        ServerCmd::Command,
    ),
    srv(
        m(
            "help",
            2,
            &[LOADING, STALE],
            CONN,
            "server",
            "5.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        ServerCmd::Command,
    ),
    srv(
        tips(
            m(
                "info",
                -2,
                &[LOADING, STALE],
                CONN,
                "server",
                "2.8.13",
                "Returns information about one, multiple or all commands.",
            ),
            NDO,
        ),
        ServerCmd::Command,
    ),
    srv(
        tips(
            m(
                "list",
                -2,
                &[LOADING, STALE],
                CONN,
                "server",
                "7.0.0",
                "Returns a list of command names.",
            ),
            NDO,
        ),
        ServerCmd::Command,
    ),
];

static CONFIG_SUBS: [CommandSpec; 5] = [
    shared(
        m(
            "get",
            -3,
            &[ADMIN, NOSCRIPT, LOADING, STALE],
            &[],
            "server",
            "2.0.0",
            "Returns the effective values of configuration parameters.",
        ),
        admin::config_get,
        ServerCmd::Config,
    ),
    shared(
        m(
            "help",
            2,
            &[LOADING, STALE],
            &[],
            "server",
            "5.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        admin::config_help,
        ServerCmd::Config,
    ),
    shared(
        tips(
            m(
                "resetstat",
                2,
                &[ADMIN, NOSCRIPT, LOADING, STALE],
                &[],
                "server",
                "2.0.0",
                "Resets the server's statistics.",
            ),
            ALL_NODES_OK,
        ),
        admin::config_resetstat,
        ServerCmd::Config,
    ),
    shared(
        tips(
            m(
                "rewrite",
                2,
                &[ADMIN, NOSCRIPT, LOADING, STALE],
                &[],
                "server",
                "2.8.0",
                "Persists the effective configuration to file.",
            ),
            ALL_NODES_OK,
        ),
        admin::config_rewrite,
        ServerCmd::Config,
    ),
    shared(
        tips(
            m(
                "set",
                -4,
                &[ADMIN, NOSCRIPT, LOADING, STALE],
                &[],
                "server",
                "2.0.0",
                "Sets configuration parameters in-flight.",
            ),
            ALL_NODES_OK,
        ),
        admin::config_set,
        ServerCmd::Config,
    ),
];

static FUNCTION_SUBS: [CommandSpec; 2] = [
    srv(
        tips(
            m(
                "flush",
                -2,
                &[NOSCRIPT, WRITE],
                &["SCRIPTING"],
                "scripting",
                "7.0.0",
                "Deletes all libraries and functions.",
            ),
            ALL_SHARDS_OK,
        ),
        ServerCmd::Function,
    ),
    srv(
        m(
            "help",
            2,
            &[LOADING, STALE],
            &["SCRIPTING"],
            "scripting",
            "7.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        ServerCmd::Function,
    ),
];

static SCRIPT_SUBS: [CommandSpec; 2] = [
    srv(
        tips(
            m(
                "flush",
                -2,
                &[NOSCRIPT],
                &["SCRIPTING"],
                "scripting",
                "2.6.0",
                "Removes all server-side Lua scripts from the script cache.",
            ),
            ALL_NODES_OK,
        ),
        ServerCmd::Script,
    ),
    srv(
        m(
            "help",
            2,
            &[LOADING, STALE],
            &["SCRIPTING"],
            "scripting",
            "5.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        ServerCmd::Script,
    ),
];

/// WATCH's keys: every argument, read-only.
const WATCH_KEYS: &[KeySpec] = &[KeySpec {
    flags: &["RO"],
    begin: Begin::Index(1),
    lastkey: -1,
    keystep: 1,
    limit: 0,
}];

#[rustfmt::skip]
pub(super) static ROWS: &[CommandSpec] = &[
    srv(m("auth", -2, &[NOSCRIPT, LOADING, STALE, FAST, NO_AUTH, ALLOW_BUSY], CONN, "connection", "1.0.0", "Authenticates the connection."), ServerCmd::Auth),
    srv(m("hello", -1, &[NOSCRIPT, LOADING, STALE, FAST, NO_AUTH, ALLOW_BUSY], CONN, "connection", "6.0.0", "Handshakes with the Redis server."), ServerCmd::Hello),
    srv(deprecated(m("quit", -1, &[ALLOW_BUSY, NOSCRIPT, LOADING, STALE, FAST, NO_AUTH], CONN, "connection", "1.0.0", "Closes the connection."), "7.2.0"), ServerCmd::Quit),
    srv(m("reset", 1, &[NOSCRIPT, LOADING, STALE, FAST, NO_AUTH, ALLOW_BUSY], CONN, "connection", "6.2.0", "Resets the connection."), ServerCmd::Reset),
    srv(m("select", 2, &[LOADING, STALE, FAST], CONN, "connection", "1.0.0", "Changes the selected database."), ServerCmd::Select),
    srv(container("client", "connection", "2.4.0", "A container for client connection commands.", &CLIENT_SUBS), ServerCmd::Client),
    srv(m("multi", 1, &[NOSCRIPT, LOADING, STALE, FAST, ALLOW_BUSY], &["TRANSACTION"], "transactions", "1.2.0", "Starts a transaction."), ServerCmd::Multi),
    srv(m("exec", 1, &[NOSCRIPT, LOADING, STALE, SKIP_SLOWLOG], &["TRANSACTION"], "transactions", "1.2.0", "Executes all commands in a transaction."), ServerCmd::Exec),
    srv(m("discard", 1, &[NOSCRIPT, LOADING, STALE, FAST, ALLOW_BUSY], &["TRANSACTION"], "transactions", "2.0.0", "Discards a transaction."), ServerCmd::Discard),
    srv(with_keys(m("watch", -2, &[NOSCRIPT, LOADING, STALE, FAST, ALLOW_BUSY], &["TRANSACTION"], "transactions", "2.2.0", "Monitors changes to keys to determine the execution of a transaction."), WATCH_KEYS, (1, -1, 1)), ServerCmd::Watch),
    srv(m("unwatch", 1, &[NOSCRIPT, LOADING, STALE, FAST, ALLOW_BUSY], &["TRANSACTION"], "transactions", "2.2.0", "Forgets about watched keys of a transaction."), ServerCmd::Unwatch),
    srv(m("shutdown", -1, &[ADMIN, NOSCRIPT, LOADING, STALE, NO_MULTI, ALLOW_BUSY], &[], "server", "1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server."), ServerCmd::Shutdown),
    srv(tips(subs(m("command", -1, &[LOADING, STALE], CONN, "server", "2.8.13", "Returns detailed information about all commands."), &COMMAND_SUBS), &["NONDETERMINISTIC_OUTPUT_ORDER"]), ServerCmd::Command),
    shared(tips(m("info", -1, &[LOADING, STALE], &["DANGEROUS"], "server", "1.0.0", "Returns information and statistics about the server."), &["NONDETERMINISTIC_OUTPUT", "REQUEST_POLICY:ALL_SHARDS", "RESPONSE_POLICY:SPECIAL"]), admin::info, ServerCmd::Info),
    container("config", "server", "2.0.0", "A container for server configuration commands.", &CONFIG_SUBS),
    srv(doc_flags(m("debug", -2, &[ADMIN, NOSCRIPT, LOADING, STALE, PROTECTED], &[], "server", "1.0.0", "A container for debugging commands."), &["SYSCMD"]), ServerCmd::Debug),
    srv(container("function", "scripting", "7.0.0", "A container for function commands.", &FUNCTION_SUBS), ServerCmd::Function),
    srv(container("script", "scripting", "2.6.0", "A container for Lua scripts management commands.", &SCRIPT_SUBS), ServerCmd::Script),
    srv(m("save", 1, &[NO_ASYNC_LOADING, ADMIN, NOSCRIPT, NO_MULTI], &[], "server", "1.0.0", "Synchronously saves the database(s) to disk."), ServerCmd::Save),
    srv(m("bgsave", -1, &[NO_ASYNC_LOADING, ADMIN, NOSCRIPT], &[], "server", "1.0.0", "Asynchronously saves the database(s) to disk."), ServerCmd::BgSave),
    srv(m("bgrewriteaof", 1, &[NO_ASYNC_LOADING, ADMIN, NOSCRIPT], &[], "server", "1.0.0", "Asynchronously rewrites the append-only file to disk."), ServerCmd::BgRewriteAof),
    srv(tips(m("lastsave", 1, &[LOADING, STALE, FAST], &["ADMIN", "DANGEROUS"], "server", "1.0.0", "Returns the Unix timestamp of the last successful save to disk."), ND), ServerCmd::LastSave),
    srv(m("role", 1, &[NOSCRIPT, LOADING, STALE, FAST], &["ADMIN", "DANGEROUS"], "server", "2.8.12", "Returns the replication role."), ServerCmd::Role),
];
