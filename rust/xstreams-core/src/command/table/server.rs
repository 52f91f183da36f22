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
            "Reports the name assigned to the current connection.",
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
            "Describes each of the available subcommands.",
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
            "Reports the numeric identifier of the current connection.",
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
                "Describes the current connection's state.",
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
            "Closes one or more client connections chosen by filter.",
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
                "Describes every client connection to the server.",
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
            "Exempts the current connection from client eviction, or stops exempting it.",
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
            "Chooses whether this connection's commands refresh the recency and frequency stats of keys.",
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
                "Records library name or version details for the current connection.",
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
                "Assigns a name to the current connection.",
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
            "Wakes a client that is waiting in a blocking command on another connection.",
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
            "Reports how many commands the server knows.",
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
                "Gives documentation details for the named commands, or for all of them.",
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
            "Works out which arguments of a given command are key names.",
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
            "Describes each of the available subcommands.",
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
                "Gives metadata such as arity, flags and key positions for the named commands, or all.",
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
                "Lists the names of the commands the server knows.",
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
            "Reads the current values of configuration parameters.",
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
            "Describes each of the available subcommands.",
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
                "Zeroes the server's statistics counters.",
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
                "Writes the running configuration back to the config file.",
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
                "Changes configuration parameters at runtime.",
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
                "Removes every function library.",
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
            "Describes each of the available subcommands.",
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
                "Empties the server's Lua script cache.",
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
            "Describes each of the available subcommands.",
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
    srv(m("auth", -2, &[NOSCRIPT, LOADING, STALE, FAST, NO_AUTH, ALLOW_BUSY], CONN, "connection", "1.0.0", "Logs the connection in with a password or user credentials."), ServerCmd::Auth),
    srv(m("hello", -1, &[NOSCRIPT, LOADING, STALE, FAST, NO_AUTH, ALLOW_BUSY], CONN, "connection", "6.0.0", "Negotiates the protocol and, optionally, authenticates with the server."), ServerCmd::Hello),
    srv(deprecated(m("quit", -1, &[ALLOW_BUSY, NOSCRIPT, LOADING, STALE, FAST, NO_AUTH], CONN, "connection", "1.0.0", "Asks the server to close this connection."), "7.2.0"), ServerCmd::Quit),
    srv(m("reset", 1, &[NOSCRIPT, LOADING, STALE, FAST, NO_AUTH, ALLOW_BUSY], CONN, "connection", "6.2.0", "Returns the connection to its initial state."), ServerCmd::Reset),
    srv(logs(m("select", 2, &[LOADING, STALE, FAST], CONN, "connection", "1.0.0", "Switches the connection to another numbered database."), Log::Select), ServerCmd::Select),
    srv(container("client", "connection", "2.4.0", "Umbrella for the subcommands that manage client connections.", &CLIENT_SUBS), ServerCmd::Client),
    srv(m("multi", 1, &[NOSCRIPT, LOADING, STALE, FAST, ALLOW_BUSY], &["TRANSACTION"], "transactions", "1.2.0", "Opens a transaction block."), ServerCmd::Multi),
    srv(m("exec", 1, &[NOSCRIPT, LOADING, STALE, SKIP_SLOWLOG], &["TRANSACTION"], "transactions", "1.2.0", "Runs the commands queued since MULTI as one transaction."), ServerCmd::Exec),
    srv(m("discard", 1, &[NOSCRIPT, LOADING, STALE, FAST, ALLOW_BUSY], &["TRANSACTION"], "transactions", "2.0.0", "Drops the commands queued in a transaction."), ServerCmd::Discard),
    srv(with_keys(m("watch", -2, &[NOSCRIPT, LOADING, STALE, FAST, ALLOW_BUSY], &["TRANSACTION"], "transactions", "2.2.0", "Makes the next transaction conditional on the named keys staying unchanged."), WATCH_KEYS, (1, -1, 1)), ServerCmd::Watch),
    srv(m("unwatch", 1, &[NOSCRIPT, LOADING, STALE, FAST, ALLOW_BUSY], &["TRANSACTION"], "transactions", "2.2.0", "Stops watching all keys for the current transaction."), ServerCmd::Unwatch),
    srv(m("shutdown", -1, &[ADMIN, NOSCRIPT, LOADING, STALE, NO_MULTI, ALLOW_BUSY], &[], "server", "1.0.0", "Stops the server after writing its data to disk."), ServerCmd::Shutdown),
    srv(tips(subs(m("command", -1, &[LOADING, STALE], CONN, "server", "2.8.13", "Gives details of every command the server supports."), &COMMAND_SUBS), &["NONDETERMINISTIC_OUTPUT_ORDER"]), ServerCmd::Command),
    shared(tips(m("info", -1, &[LOADING, STALE], &["DANGEROUS"], "server", "1.0.0", "Reports server information and statistics, by section."), &["NONDETERMINISTIC_OUTPUT", "REQUEST_POLICY:ALL_SHARDS", "RESPONSE_POLICY:SPECIAL"]), admin::info, ServerCmd::Info),
    fuzzed(container("config", "server", "2.0.0", "Umbrella for the subcommands that read and change server settings.", &CONFIG_SUBS), 1),
    srv(doc_flags(m("debug", -2, &[ADMIN, NOSCRIPT, LOADING, STALE, PROTECTED], &[], "server", "1.0.0", "Umbrella for the diagnostic and testing subcommands."), &["SYSCMD"]), ServerCmd::Debug),
    srv(container("function", "scripting", "7.0.0", "Umbrella for the subcommands that manage functions.", &FUNCTION_SUBS), ServerCmd::Function),
    srv(container("script", "scripting", "2.6.0", "Umbrella for the subcommands that manage Lua scripts.", &SCRIPT_SUBS), ServerCmd::Script),
    srv(m("save", 1, &[NO_ASYNC_LOADING, ADMIN, NOSCRIPT, NO_MULTI], &[], "server", "1.0.0", "Writes the dataset to disk, blocking until done."), ServerCmd::Save),
    srv(m("bgsave", -1, &[NO_ASYNC_LOADING, ADMIN, NOSCRIPT], &[], "server", "1.0.0", "Writes the dataset to disk in the background."), ServerCmd::BgSave),
    srv(m("bgrewriteaof", 1, &[NO_ASYNC_LOADING, ADMIN, NOSCRIPT], &[], "server", "1.0.0", "Compacts the append-only file in the background."), ServerCmd::BgRewriteAof),
    srv(tips(m("lastsave", 1, &[LOADING, STALE, FAST], &["ADMIN", "DANGEROUS"], "server", "1.0.0", "Reports when the last successful save to disk happened, as a Unix time."), ND), ServerCmd::LastSave),
    srv(m("role", 1, &[NOSCRIPT, LOADING, STALE, FAST], &["ADMIN", "DANGEROUS"], "server", "2.8.12", "Reports the server's role in replication."), ServerCmd::Role),
];
