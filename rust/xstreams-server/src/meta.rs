//! The command table as `COMMAND`, `COMMAND INFO` and `COMMAND DOCS` report it: every
//! command the server runs (the core's commands and the connection-level commands of
//! this crate), with redis-server's arity, flags, key positions, key specifications and
//! ACL categories, so that client libraries and tools that inspect the table (redis-cli,
//! cluster-aware clients) see what they would see on redis-server.
//!
//! Only the connection-level entries are dispatched from here (see [`Srv`]); the
//! core's commands run through `xstreams_core::command`, whose arity this table mirrors
//! (a unit test checks that they agree).

use std::collections::HashMap;
use std::sync::OnceLock;

use xstreams_core::CmdError;

use crate::out::Out;

/// A connection-level command implemented by the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Srv {
    Auth,
    Hello,
    Quit,
    Reset,
    Select,
    Client,
    Multi,
    Exec,
    Discard,
    Shutdown,
    Command,
    Info,
    Config,
    Debug,
    Function,
    Script,
    Save,
    BgSave,
    BgRewriteAof,
    LastSave,
    Role,
}

/// Where a key specification starts searching.
#[derive(Clone, Copy, Debug)]
pub enum Begin {
    Index(i64),
    Keyword(&'static str, i64),
}

/// A key specification (begin search + a `range` find-keys step).
#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    pub flags: &'static [&'static str],
    pub begin: Begin,
    pub lastkey: i64,
    pub keystep: i64,
    pub limit: i64,
}

/// One command or subcommand.
#[derive(Debug)]
pub struct Meta {
    /// Lower-case name (`xadd`, or `create` for `xgroup|create`).
    pub name: &'static str,
    pub arity: i32,
    /// Command flags (upper case, Redis names).
    pub flags: &'static [&'static str],
    /// Declared ACL categories (implied ones are added when replying).
    pub acl: &'static [&'static str],
    pub tips: &'static [&'static str],
    pub keys: &'static [KeySpec],
    /// Legacy (first key, last key, step).
    pub range: (i32, i32, i32),
    pub group: &'static str,
    pub since: &'static str,
    pub summary: &'static str,
    pub doc_flags: &'static [&'static str],
    pub srv: Option<Srv>,
    pub subs: &'static [Meta],
}

impl Meta {
    pub fn has_flag(&self, f: &str) -> bool {
        self.flags.contains(&f)
    }
}

const fn ks1(flags: &'static [&'static str], pos: i64) -> KeySpec {
    KeySpec {
        flags,
        begin: Begin::Index(pos),
        lastkey: 0,
        keystep: 1,
        limit: 0,
    }
}

const fn m(
    name: &'static str,
    arity: i32,
    flags: &'static [&'static str],
    acl: &'static [&'static str],
    group: &'static str,
    since: &'static str,
    summary: &'static str,
) -> Meta {
    Meta {
        name,
        arity,
        flags,
        acl,
        tips: &[],
        keys: &[],
        range: (0, 0, 0),
        group,
        since,
        summary,
        doc_flags: &[],
        srv: None,
        subs: &[],
    }
}

const fn with_keys(mut c: Meta, keys: &'static [KeySpec], range: (i32, i32, i32)) -> Meta {
    c.keys = keys;
    c.range = range;
    c
}

const fn tips(mut c: Meta, tips: &'static [&'static str]) -> Meta {
    c.tips = tips;
    c
}

const fn srv(mut c: Meta, s: Srv) -> Meta {
    c.srv = Some(s);
    c
}

const fn container(
    name: &'static str,
    group: &'static str,
    since: &'static str,
    summary: &'static str,
    subs: &'static [Meta],
) -> Meta {
    Meta {
        name,
        arity: -2,
        flags: &[],
        acl: &[],
        tips: &[],
        keys: &[],
        range: (0, 0, 0),
        group,
        since,
        summary,
        doc_flags: &[],
        srv: None,
        subs,
    }
}

const ND: &[&str] = &["NONDETERMINISTIC_OUTPUT"];
const ST: &[&str] = &["STREAM"];
const KS: &[&str] = &["KEYSPACE"];
const CONN: &[&str] = &["CONNECTION"];
const K1: (i32, i32, i32) = (1, 1, 1);
const K2: (i32, i32, i32) = (2, 2, 1);

const RW_UPDATE: &[KeySpec] = &[ks1(&["RW", "UPDATE"], 1)];
const RW_DELETE: &[KeySpec] = &[ks1(&["RW", "DELETE"], 1)];
const RO_ACCESS: &[KeySpec] = &[ks1(&["RO", "ACCESS"], 1)];
const RO: &[KeySpec] = &[ks1(&["RO"], 1)];
const G_RW_INSERT: &[KeySpec] = &[ks1(&["RW", "INSERT"], 2)];
const G_RW_DELETE: &[KeySpec] = &[ks1(&["RW", "DELETE"], 2)];
const G_RW_UPDATE: &[KeySpec] = &[ks1(&["RW", "UPDATE"], 2)];
const G_RO_ACCESS: &[KeySpec] = &[ks1(&["RO", "ACCESS"], 2)];

static XGROUP_SUBS: [Meta; 6] = [
    with_keys(
        m(
            "create",
            -5,
            &["WRITE", "DENYOOM"],
            ST,
            "stream",
            "5.0.0",
            "Creates a consumer group.",
        ),
        G_RW_INSERT,
        K2,
    ),
    with_keys(
        m(
            "createconsumer",
            5,
            &["WRITE", "DENYOOM"],
            ST,
            "stream",
            "6.2.0",
            "Creates a consumer in a consumer group.",
        ),
        G_RW_INSERT,
        K2,
    ),
    with_keys(
        m(
            "delconsumer",
            5,
            &["WRITE"],
            ST,
            "stream",
            "5.0.0",
            "Deletes a consumer from a consumer group.",
        ),
        G_RW_DELETE,
        K2,
    ),
    with_keys(
        m(
            "destroy",
            4,
            &["WRITE"],
            ST,
            "stream",
            "5.0.0",
            "Destroys a consumer group.",
        ),
        G_RW_DELETE,
        K2,
    ),
    m(
        "help",
        2,
        &["LOADING", "STALE"],
        ST,
        "stream",
        "5.0.0",
        "Returns helpful text about the different subcommands.",
    ),
    with_keys(
        m(
            "setid",
            -5,
            &["WRITE"],
            ST,
            "stream",
            "5.0.0",
            "Sets the last-delivered ID of a consumer group.",
        ),
        G_RW_UPDATE,
        K2,
    ),
];

static XINFO_SUBS: [Meta; 4] = [
    tips(
        with_keys(
            m(
                "consumers",
                4,
                &["READONLY"],
                ST,
                "stream",
                "5.0.0",
                "Returns a list of the consumers in a consumer group.",
            ),
            G_RO_ACCESS,
            K2,
        ),
        ND,
    ),
    with_keys(
        m(
            "groups",
            3,
            &["READONLY"],
            ST,
            "stream",
            "5.0.0",
            "Returns a list of the consumer groups of a stream.",
        ),
        G_RO_ACCESS,
        K2,
    ),
    m(
        "help",
        2,
        &["LOADING", "STALE"],
        ST,
        "stream",
        "5.0.0",
        "Returns helpful text about the different subcommands.",
    ),
    with_keys(
        m(
            "stream",
            -3,
            &["READONLY"],
            ST,
            "stream",
            "5.0.0",
            "Returns information about a stream.",
        ),
        G_RO_ACCESS,
        K2,
    ),
];

static XIDMP_SUBS: [Meta; 2] = [
    with_keys(
        m(
            "cfgget",
            -3,
            &["READONLY"],
            ST,
            "stream",
            "8.6.0",
            "Returns the idempotent-producer settings of a stream.",
        ),
        G_RO_ACCESS,
        K2,
    ),
    with_keys(
        m(
            "cfgset",
            -3,
            &["WRITE"],
            ST,
            "stream",
            "8.6.0",
            "Changes the idempotent-producer settings of a stream.",
        ),
        G_RW_UPDATE,
        K2,
    ),
];

static CLIENT_SUBS: [Meta; 11] = [
    srv(
        m(
            "getname",
            2,
            &["NOSCRIPT", "LOADING", "STALE"],
            CONN,
            "connection",
            "2.6.9",
            "Returns the name of the connection.",
        ),
        Srv::Client,
    ),
    srv(
        m(
            "help",
            2,
            &["LOADING", "STALE"],
            CONN,
            "connection",
            "5.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        Srv::Client,
    ),
    srv(
        m(
            "id",
            2,
            &["NOSCRIPT", "LOADING", "STALE"],
            CONN,
            "connection",
            "5.0.0",
            "Returns the unique client ID of the connection.",
        ),
        Srv::Client,
    ),
    srv(
        tips(
            m(
                "info",
                2,
                &["NOSCRIPT", "LOADING", "STALE"],
                CONN,
                "connection",
                "6.2.0",
                "Returns information about the connection.",
            ),
            ND,
        ),
        Srv::Client,
    ),
    srv(
        m(
            "kill",
            -3,
            &["ADMIN", "NOSCRIPT", "LOADING", "STALE"],
            CONN,
            "connection",
            "2.4.0",
            "Terminates open connections.",
        ),
        Srv::Client,
    ),
    srv(
        tips(
            m(
                "list",
                -2,
                &["ADMIN", "NOSCRIPT", "LOADING", "STALE"],
                CONN,
                "connection",
                "2.4.0",
                "Lists open connections.",
            ),
            ND,
        ),
        Srv::Client,
    ),
    srv(
        m(
            "no-evict",
            3,
            &["ADMIN", "NOSCRIPT", "LOADING", "STALE"],
            CONN,
            "connection",
            "7.0.0",
            "Sets the client eviction mode of the connection.",
        ),
        Srv::Client,
    ),
    srv(
        m(
            "no-touch",
            3,
            &["NOSCRIPT", "LOADING", "STALE"],
            CONN,
            "connection",
            "7.2.0",
            "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
        ),
        Srv::Client,
    ),
    srv(
        m(
            "setinfo",
            4,
            &["NOSCRIPT", "LOADING", "STALE"],
            CONN,
            "connection",
            "7.2.0",
            "Sets information specific to the client or connection.",
        ),
        Srv::Client,
    ),
    srv(
        m(
            "setname",
            3,
            &["NOSCRIPT", "LOADING", "STALE"],
            CONN,
            "connection",
            "2.6.9",
            "Sets the connection name.",
        ),
        Srv::Client,
    ),
    srv(
        m(
            "unblock",
            -3,
            &["ADMIN", "NOSCRIPT", "LOADING", "STALE"],
            CONN,
            "connection",
            "5.0.0",
            "Unblocks a client blocked by a blocking command from a different connection.",
        ),
        Srv::Client,
    ),
];

static COMMAND_SUBS: [Meta; 6] = [
    srv(
        m(
            "count",
            2,
            &["LOADING", "STALE"],
            CONN,
            "server",
            "2.8.13",
            "Returns a count of commands.",
        ),
        Srv::Command,
    ),
    srv(
        m(
            "docs",
            -2,
            &["LOADING", "STALE"],
            CONN,
            "server",
            "7.0.0",
            "Returns documentary information about one, multiple or all commands.",
        ),
        Srv::Command,
    ),
    srv(
        m(
            "getkeys",
            -3,
            &["LOADING", "STALE"],
            CONN,
            "server",
            "2.8.13",
            "Extracts the key names from an arbitrary command.",
        ),
        Srv::Command,
    ),
    srv(
        m(
            "help",
            2,
            &["LOADING", "STALE"],
            CONN,
            "server",
            "5.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        Srv::Command,
    ),
    srv(
        m(
            "info",
            -2,
            &["LOADING", "STALE"],
            CONN,
            "server",
            "2.8.13",
            "Returns information about one, multiple or all commands.",
        ),
        Srv::Command,
    ),
    srv(
        m(
            "list",
            -2,
            &["LOADING", "STALE"],
            CONN,
            "server",
            "7.0.0",
            "Returns a list of command names.",
        ),
        Srv::Command,
    ),
];

static CONFIG_SUBS: [Meta; 5] = [
    srv(
        m(
            "get",
            -3,
            &["ADMIN", "NOSCRIPT", "LOADING", "STALE"],
            &[],
            "server",
            "2.0.0",
            "Returns the effective values of configuration parameters.",
        ),
        Srv::Config,
    ),
    srv(
        m(
            "help",
            2,
            &["LOADING", "STALE"],
            &[],
            "server",
            "5.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        Srv::Config,
    ),
    srv(
        m(
            "resetstat",
            2,
            &["ADMIN", "NOSCRIPT", "LOADING", "STALE"],
            &[],
            "server",
            "2.0.0",
            "Resets the server's statistics.",
        ),
        Srv::Config,
    ),
    srv(
        m(
            "rewrite",
            2,
            &["ADMIN", "NOSCRIPT", "LOADING", "STALE"],
            &[],
            "server",
            "2.8.0",
            "Persists the effective configuration to file.",
        ),
        Srv::Config,
    ),
    srv(
        m(
            "set",
            -4,
            &["ADMIN", "NOSCRIPT", "LOADING", "STALE"],
            &[],
            "server",
            "2.0.0",
            "Sets configuration parameters in-flight.",
        ),
        Srv::Config,
    ),
];

static FUNCTION_SUBS: [Meta; 2] = [
    srv(
        m(
            "flush",
            -2,
            &["NOSCRIPT", "WRITE"],
            &["SCRIPTING"],
            "scripting",
            "7.0.0",
            "Deletes all libraries and functions.",
        ),
        Srv::Function,
    ),
    srv(
        m(
            "help",
            2,
            &["LOADING", "STALE"],
            &["SCRIPTING"],
            "scripting",
            "7.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        Srv::Function,
    ),
];

static SCRIPT_SUBS: [Meta; 2] = [
    srv(
        m(
            "flush",
            -2,
            &["NOSCRIPT"],
            &["SCRIPTING"],
            "scripting",
            "2.6.0",
            "Removes all server-side Lua scripts from the script cache.",
        ),
        Srv::Script,
    ),
    srv(
        m(
            "help",
            2,
            &["LOADING", "STALE"],
            &["SCRIPTING"],
            "scripting",
            "5.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        Srv::Script,
    ),
];

const XREAD_KEYS: &[KeySpec] = &[KeySpec {
    flags: &["RO", "ACCESS"],
    begin: Begin::Keyword("STREAMS", 1),
    lastkey: -1,
    keystep: 1,
    limit: 2,
}];
const XREADGROUP_KEYS: &[KeySpec] = &[KeySpec {
    flags: &["RO", "ACCESS"],
    begin: Begin::Keyword("STREAMS", 4),
    lastkey: -1,
    keystep: 1,
    limit: 2,
}];
const MULTI_KEYS_RM: &[KeySpec] = &[KeySpec {
    flags: &["RM", "DELETE"],
    begin: Begin::Index(1),
    lastkey: -1,
    keystep: 1,
    limit: 0,
}];
const MULTI_KEYS_RO: &[KeySpec] = &[KeySpec {
    flags: &["RO"],
    begin: Begin::Index(1),
    lastkey: -1,
    keystep: 1,
    limit: 0,
}];
const SHARDS_SUM: &[&str] = &["REQUEST_POLICY:MULTI_SHARD", "RESPONSE_POLICY:AGG_SUM"];
const ALL_SHARDS_OK: &[&str] = &["REQUEST_POLICY:ALL_SHARDS", "RESPONSE_POLICY:ALL_SUCCEEDED"];

/// Every top-level command.
pub static COMMANDS: &[Meta] = &[
    // Streams.
    tips(with_keys(m("xadd", -5, &["WRITE", "DENYOOM", "FAST"], ST, "stream", "5.0.0", "Appends a new message to a stream. Creates the key if it doesn't exist."), RW_UPDATE, K1), ND),
    tips(with_keys(m("xtrim", -4, &["WRITE"], ST, "stream", "5.0.0", "Deletes messages from the beginning of a stream."), RW_DELETE, K1), ND),
    with_keys(m("xlen", 2, &["READONLY", "FAST"], ST, "stream", "5.0.0", "Return the number of messages in a stream."), RO, K1),
    with_keys(m("xrange", -4, &["READONLY"], ST, "stream", "5.0.0", "Returns the messages from a stream within a range of IDs."), RO_ACCESS, K1),
    with_keys(m("xrevrange", -4, &["READONLY"], ST, "stream", "5.0.0", "Returns the messages from a stream within a range of IDs in reverse order."), RO_ACCESS, K1),
    with_keys(m("xdel", -3, &["WRITE", "FAST"], ST, "stream", "5.0.0", "Returns the number of messages after removing them from a stream."), RW_DELETE, K1),
    with_keys(m("xdelex", -5, &["WRITE", "FAST"], ST, "stream", "8.2.0", "Deletes one or multiple entries from the stream."), RW_DELETE, K1),
    with_keys(m("xsetid", -3, &["WRITE", "DENYOOM", "FAST"], ST, "stream", "5.0.0", "An internal command for replicating stream values."), RW_UPDATE, K1),
    with_keys(m("xread", -4, &["BLOCKING", "READONLY", "MOVABLEKEYS"], ST, "stream", "5.0.0", "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise."), XREAD_KEYS, (0, 0, 0)),
    with_keys(m("xreadgroup", -7, &["BLOCKING", "WRITE", "MOVABLEKEYS"], ST, "stream", "5.0.0", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise."), XREADGROUP_KEYS, (0, 0, 0)),
    container("xgroup", "stream", "5.0.0", "A container for consumer groups commands.", &XGROUP_SUBS),
    container("xinfo", "stream", "5.0.0", "A container for stream introspection commands.", &XINFO_SUBS),
    with_keys(m("xack", -4, &["WRITE", "FAST"], ST, "stream", "5.0.0", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream."), RW_UPDATE, K1),
    with_keys(m("xackdel", -6, &["WRITE", "FAST"], ST, "stream", "8.2.0", "Acknowledges and deletes one or multiple messages for a stream consumer group."), &[ks1(&["RW", "UPDATE", "DELETE"], 1)], K1),
    with_keys(m("xnack", -7, &["WRITE", "FAST"], ST, "stream", "8.8.0", "Returns pending messages of a consumer group to the group without acknowledging them."), RW_UPDATE, K1),
    tips(with_keys(m("xpending", -3, &["READONLY"], ST, "stream", "5.0.0", "Returns the information and entries from a stream consumer group's pending entries list."), RO_ACCESS, K1), ND),
    tips(with_keys(m("xclaim", -6, &["WRITE", "FAST"], ST, "stream", "5.0.0", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member."), RW_UPDATE, K1), ND),
    tips(with_keys(m("xautoclaim", -6, &["WRITE", "FAST"], ST, "stream", "6.2.0", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member."), RW_DELETE, K1), ND),
    with_keys(m("xcfgset", -2, &["WRITE", "FAST"], ST, "stream", "8.6.0", "Sets the idempotent-producer configuration of a stream."), RW_UPDATE, K1),
    with_keys(m("xidmprecord", 5, &["WRITE", "DENYOOM", "FAST"], ST, "stream", "8.6.2", "An internal command recording an idempotent-producer entry."), RW_UPDATE, K1),
    container("xidmp", "stream", "8.6.0", "A container for idempotent-producer commands.", &XIDMP_SUBS),
    // Keyspace.
    tips(with_keys(m("del", -2, &["WRITE"], KS, "generic", "1.0.0", "Deletes one or more keys."), MULTI_KEYS_RM, (1, -1, 1)), SHARDS_SUM),
    tips(with_keys(m("unlink", -2, &["WRITE", "FAST"], KS, "generic", "4.0.0", "Asynchronously deletes one or more keys."), MULTI_KEYS_RM, (1, -1, 1)), SHARDS_SUM),
    tips(with_keys(m("exists", -2, &["READONLY", "FAST"], KS, "generic", "1.0.0", "Determines whether one or more keys exist."), MULTI_KEYS_RO, (1, -1, 1)), SHARDS_SUM),
    with_keys(m("type", 2, &["READONLY", "FAST"], KS, "generic", "1.0.0", "Determines the type of value stored at a key."), RO, K1),
    tips(m("keys", 2, &["READONLY"], &["KEYSPACE", "DANGEROUS"], "generic", "1.0.0", "Returns all key names that match a pattern."), &["REQUEST_POLICY:ALL_SHARDS", "NONDETERMINISTIC_OUTPUT_ORDER"]),
    tips(m("scan", -2, &["READONLY"], KS, "generic", "2.8.0", "Iterates over the key names in the database."), &["NONDETERMINISTIC_OUTPUT", "REQUEST_POLICY:SPECIAL", "RESPONSE_POLICY:SPECIAL"]),
    tips(m("dbsize", 1, &["READONLY", "FAST"], KS, "server", "1.0.0", "Returns the number of keys in the database."), &["REQUEST_POLICY:ALL_SHARDS", "RESPONSE_POLICY:AGG_SUM"]),
    tips(m("flushall", -1, &["WRITE"], &["KEYSPACE", "DANGEROUS"], "server", "1.0.0", "Removes all keys from all databases."), ALL_SHARDS_OK),
    tips(m("flushdb", -1, &["WRITE"], &["KEYSPACE", "DANGEROUS"], "server", "1.0.0", "Remove all keys from the current database."), ALL_SHARDS_OK),
    tips(m("ping", -1, &["FAST"], CONN, "connection", "1.0.0", "Returns the server's liveliness response."), ALL_SHARDS_OK),
    m("echo", 2, &["LOADING", "STALE", "FAST"], CONN, "connection", "1.0.0", "Returns the given string."),
    tips(m("time", 1, &["LOADING", "STALE", "FAST"], &[], "server", "2.6.0", "Returns the server time."), ND),
    with_keys(m("rename", 3, &["WRITE"], KS, "generic", "1.0.0", "Renames a key and overwrites the destination."), &[ks1(&["RW", "ACCESS", "DELETE"], 1), ks1(&["OW", "UPDATE"], 2)], (1, 2, 1)),
    with_keys(m("renamenx", 3, &["WRITE", "FAST"], KS, "generic", "1.0.0", "Renames a key only when the target key name doesn't exist."), &[ks1(&["RW", "ACCESS", "DELETE"], 1), ks1(&["OW", "INSERT"], 2)], (1, 2, 1)),
    with_keys(m("copy", -3, &["WRITE", "DENYOOM"], KS, "generic", "6.2.0", "Copies the value of a key to a new key."), &[ks1(&["RO", "ACCESS"], 1), ks1(&["OW", "UPDATE"], 2)], (1, 2, 1)),
    with_keys(m("move", 3, &["WRITE", "FAST"], KS, "generic", "1.0.0", "Moves a key to another database."), &[ks1(&["RW", "ACCESS", "UPDATE"], 1)], K1),
    m("swapdb", 3, &["WRITE", "FAST"], &["KEYSPACE", "DANGEROUS"], "server", "4.0.0", "Swaps two Redis databases."),
    with_keys(m("set", -3, &["WRITE", "DENYOOM"], &["STRING"], "string", "1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."), &[ks1(&["RW", "ACCESS", "UPDATE", "VARIABLE_FLAGS"], 1)], K1),
    with_keys(m("get", 2, &["READONLY", "FAST"], &["STRING"], "string", "1.0.0", "Returns the string value of a key."), RO_ACCESS, K1),
    // Connection and server (implemented by this crate).
    srv(m("auth", -2, &["NOSCRIPT", "LOADING", "STALE", "FAST", "NO_AUTH", "ALLOW_BUSY"], CONN, "connection", "1.0.0", "Authenticates the connection."), Srv::Auth),
    srv(m("hello", -1, &["NOSCRIPT", "LOADING", "STALE", "FAST", "NO_AUTH", "ALLOW_BUSY"], CONN, "connection", "6.0.0", "Handshakes with the Redis server."), Srv::Hello),
    srv(Meta { doc_flags: &["DEPRECATED"], ..m("quit", -1, &["ALLOW_BUSY", "NOSCRIPT", "LOADING", "STALE", "FAST", "NO_AUTH"], CONN, "connection", "1.0.0", "Closes the connection.") }, Srv::Quit),
    srv(m("reset", 1, &["NOSCRIPT", "LOADING", "STALE", "FAST", "NO_AUTH", "ALLOW_BUSY"], CONN, "connection", "6.2.0", "Resets the connection."), Srv::Reset),
    srv(m("select", 2, &["LOADING", "STALE", "FAST"], CONN, "connection", "1.0.0", "Changes the selected database."), Srv::Select),
    srv(container("client", "connection", "2.4.0", "A container for client connection commands.", &CLIENT_SUBS), Srv::Client),
    srv(m("multi", 1, &["NOSCRIPT", "LOADING", "STALE", "FAST", "ALLOW_BUSY"], &["TRANSACTION"], "transactions", "1.2.0", "Starts a transaction."), Srv::Multi),
    srv(m("exec", 1, &["NOSCRIPT", "LOADING", "STALE", "SKIP_SLOWLOG"], &["TRANSACTION"], "transactions", "1.2.0", "Executes all commands in a transaction."), Srv::Exec),
    srv(m("discard", 1, &["NOSCRIPT", "LOADING", "STALE", "FAST", "ALLOW_BUSY"], &["TRANSACTION"], "transactions", "2.0.0", "Discards a transaction."), Srv::Discard),
    srv(m("shutdown", -1, &["ADMIN", "NOSCRIPT", "LOADING", "STALE", "NO_MULTI", "ALLOW_BUSY"], &[], "server", "1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server."), Srv::Shutdown),
    srv(tips(Meta { subs: &COMMAND_SUBS, ..m("command", -1, &["LOADING", "STALE"], CONN, "server", "2.8.13", "Returns detailed information about all commands.") }, &["NONDETERMINISTIC_OUTPUT_ORDER"]), Srv::Command),
    srv(tips(m("info", -1, &["LOADING", "STALE"], &["DANGEROUS"], "server", "1.0.0", "Returns information and statistics about the server."), &["NONDETERMINISTIC_OUTPUT", "REQUEST_POLICY:ALL_SHARDS", "RESPONSE_POLICY:SPECIAL"]), Srv::Info),
    srv(container("config", "server", "2.0.0", "A container for server configuration commands.", &CONFIG_SUBS), Srv::Config),
    srv(Meta { doc_flags: &["SYSCMD"], ..m("debug", -2, &["ADMIN", "NOSCRIPT", "LOADING", "STALE", "PROTECTED"], &[], "server", "1.0.0", "A container for debugging commands.") }, Srv::Debug),
    srv(container("function", "scripting", "7.0.0", "A container for function commands.", &FUNCTION_SUBS), Srv::Function),
    srv(container("script", "scripting", "2.6.0", "A container for Lua scripts management commands.", &SCRIPT_SUBS), Srv::Script),
    srv(m("save", 1, &["NO_ASYNC_LOADING", "ADMIN", "NOSCRIPT", "NO_MULTI"], &[], "server", "1.0.0", "Synchronously saves the database(s) to disk."), Srv::Save),
    srv(m("bgsave", -1, &["NO_ASYNC_LOADING", "ADMIN", "NOSCRIPT"], &[], "server", "1.0.0", "Asynchronously saves the database(s) to disk."), Srv::BgSave),
    srv(m("bgrewriteaof", 1, &["NO_ASYNC_LOADING", "ADMIN", "NOSCRIPT"], &[], "server", "1.0.0", "Asynchronously rewrites the append-only file to disk."), Srv::BgRewriteAof),
    srv(tips(m("lastsave", 1, &["LOADING", "STALE", "FAST"], &["ADMIN", "DANGEROUS"], "server", "1.0.0", "Returns the Unix timestamp of the last successful save to disk."), ND), Srv::LastSave),
    srv(m("role", 1, &["NOSCRIPT", "LOADING", "STALE", "FAST"], &["ADMIN", "DANGEROUS"], "server", "2.8.12", "Returns the replication role."), Srv::Role),
];

struct Index {
    /// Lower-case name -> position in COMMANDS.
    by_name: HashMap<&'static str, usize>,
    /// Position in COMMANDS -> first statistics slot (the command itself; its
    /// subcommands follow).
    first_slot: Vec<usize>,
    /// Statistics slot -> full name (`xadd`, `xgroup|create`).
    names: Vec<String>,
}

fn index() -> &'static Index {
    static I: OnceLock<Index> = OnceLock::new();
    I.get_or_init(|| {
        let mut by_name = HashMap::new();
        let mut first_slot = Vec::new();
        let mut names = Vec::new();
        for (i, c) in COMMANDS.iter().enumerate() {
            by_name.insert(c.name, i);
            first_slot.push(names.len());
            names.push(c.name.to_string());
            for s in c.subs {
                names.push(format!("{}|{}", c.name, s.name));
            }
        }
        Index {
            by_name,
            first_slot,
            names,
        }
    })
}

/// Number of statistics slots (one per command and subcommand).
pub fn slot_count() -> usize {
    index().names.len()
}

/// Full name of a statistics slot.
pub fn slot_name(slot: usize) -> &'static str {
    &index().names[slot]
}

fn position(name: &[u8]) -> Option<usize> {
    if name.len() > 32 {
        return None;
    }
    let mut buf = [0u8; 32];
    let lower = &mut buf[..name.len()];
    lower.copy_from_slice(name);
    lower.make_ascii_lowercase();
    let s = std::str::from_utf8(lower).ok()?;
    index().by_name.get(s).copied()
}

/// Look a top-level command up by name (case-insensitive).
pub fn lookup(name: &[u8]) -> Option<&'static Meta> {
    position(name).map(|i| &COMMANDS[i])
}

/// A command resolved from its arguments.
#[derive(Clone, Copy, Debug)]
pub struct Resolved {
    /// The command or subcommand.
    pub spec: &'static Meta,
    /// Its statistics slot.
    pub slot: usize,
}

/// Resolve `args` as redis-server does: the unknown-command, unknown-subcommand and
/// arity errors are redis-server's (the same texts the core produces). On an arity
/// error the command's slot is returned with the error (it counts as rejected).
pub fn resolve(args: &[Vec<u8>]) -> Result<Resolved, (Option<usize>, CmdError)> {
    let Some(pos) = position(&args[0]) else {
        let rest: Vec<&[u8]> = args[1..].iter().map(|a| a.as_slice()).collect();
        return Err((None, CmdError::unknown_command(&args[0], &rest)));
    };
    let base = &COMMANDS[pos];
    let first = index().first_slot[pos];
    let (spec, slot) = if base.subs.is_empty() || args.len() == 1 {
        (base, first)
    } else {
        match base
            .subs
            .iter()
            .position(|c| c.name.as_bytes().eq_ignore_ascii_case(&args[1]))
        {
            Some(i) => (&base.subs[i], first + 1 + i),
            None => {
                return Err((
                    None,
                    CmdError::unknown_subcommand(&args[1], &base.name.to_ascii_uppercase()),
                ))
            }
        }
    };
    let argc = args.len() as i32;
    let a = spec.arity;
    if (a > 0 && a != argc) || argc < -a {
        return Err((Some(slot), CmdError::arity(&index().names[slot])));
    }
    Ok(Resolved { spec, slot })
}

/// Look a command up by full name (`xgroup|create`, case-insensitive).
pub fn lookup_fullname(name: &[u8]) -> Option<(&'static Meta, String)> {
    let s = std::str::from_utf8(name).ok()?.to_ascii_lowercase();
    let mut parts = s.splitn(2, '|');
    let base = lookup(parts.next()?.as_bytes())?;
    match parts.next() {
        None => Some((base, base.name.to_string())),
        Some(sub) => {
            let sub = base.subs.iter().find(|c| c.name == sub)?;
            Some((sub, format!("{}|{}", base.name, sub.name)))
        }
    }
}

/// Find a subcommand by name (case-insensitive).
pub fn sub(base: &'static Meta, name: &[u8]) -> Option<&'static Meta> {
    base.subs
        .iter()
        .find(|c| c.name.as_bytes().eq_ignore_ascii_case(name))
}

const FLAG_ORDER: &[(&str, &str)] = &[
    ("WRITE", "write"),
    ("READONLY", "readonly"),
    ("DENYOOM", "denyoom"),
    ("MODULE", "module"),
    ("ADMIN", "admin"),
    ("PUBSUB", "pubsub"),
    ("NOSCRIPT", "noscript"),
    ("BLOCKING", "blocking"),
    ("LOADING", "loading"),
    ("STALE", "stale"),
    ("SKIP_MONITOR", "skip_monitor"),
    ("SKIP_SLOWLOG", "skip_slowlog"),
    ("ASKING", "asking"),
    ("FAST", "fast"),
    ("NO_AUTH", "no_auth"),
    ("NO_MANDATORY_KEYS", "no_mandatory_keys"),
    ("NO_ASYNC_LOADING", "no_async_loading"),
    ("NO_MULTI", "no_multi"),
    ("MOVABLEKEYS", "movablekeys"),
    ("ALLOW_BUSY", "allow_busy"),
];

const ACL_ORDER: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// ACL categories including the ones implied by the flags (as redis-server computes
/// them), in redis-server's order.
pub fn acl_categories(c: &Meta) -> Vec<&'static str> {
    let mut have: Vec<String> = c.acl.iter().map(|a| a.to_ascii_lowercase()).collect();
    let scripting = have.iter().any(|a| a == "scripting");
    if c.has_flag("WRITE") {
        have.push("write".into());
    }
    if c.has_flag("READONLY") && !scripting {
        have.push("read".into());
    }
    if c.has_flag("ADMIN") {
        have.push("admin".into());
        have.push("dangerous".into());
    }
    if c.has_flag("FAST") {
        have.push("fast".into());
    }
    if c.has_flag("BLOCKING") {
        have.push("blocking".into());
    }
    if !have.iter().any(|a| a == "fast") {
        have.push("slow".into());
    }
    ACL_ORDER
        .iter()
        .copied()
        .filter(|a| have.iter().any(|h| h == a))
        .collect()
}

fn write_info_one(o: &mut Out<'_>, c: &Meta, fullname: &str) {
    o.array(10);
    o.bulk_str(fullname);
    o.int(c.arity as i64);
    let flags: Vec<&str> = FLAG_ORDER
        .iter()
        .filter(|(f, _)| c.has_flag(f))
        .map(|(_, n)| *n)
        .collect();
    o.set(flags.len());
    for f in flags {
        o.status(f);
    }
    o.int(c.range.0 as i64);
    o.int(c.range.1 as i64);
    o.int(c.range.2 as i64);
    let cats = acl_categories(c);
    o.set(cats.len());
    for a in cats {
        o.status(&format!("@{a}"));
    }
    o.set(c.tips.len());
    for t in c.tips {
        o.bulk_str(&t.to_ascii_lowercase());
    }
    o.set(c.keys.len());
    for k in c.keys {
        o.map(3);
        o.bulk_str("flags");
        o.set(k.flags.len());
        for f in k.flags {
            // redis-server: access types upper case, operations lower case.
            if matches!(*f, "RO" | "RW" | "OW" | "RM") {
                o.status(f);
            } else {
                o.status(&f.to_ascii_lowercase());
            }
        }
        o.bulk_str("begin_search");
        o.map(2);
        o.bulk_str("type");
        match k.begin {
            Begin::Index(pos) => {
                o.bulk_str("index");
                o.bulk_str("spec");
                o.map(1);
                o.bulk_str("index");
                o.int(pos);
            }
            Begin::Keyword(kw, from) => {
                o.bulk_str("keyword");
                o.bulk_str("spec");
                o.map(2);
                o.bulk_str("keyword");
                o.bulk_str(kw);
                o.bulk_str("startfrom");
                o.int(from);
            }
        }
        o.bulk_str("find_keys");
        o.map(2);
        o.bulk_str("type");
        o.bulk_str("range");
        o.bulk_str("spec");
        o.map(3);
        o.bulk_str("lastkey");
        o.int(k.lastkey);
        o.bulk_str("keystep");
        o.int(k.keystep);
        o.bulk_str("limit");
        o.int(k.limit);
    }
    if c.subs.is_empty() {
        o.set(0);
    } else {
        o.array(c.subs.len());
        for s in c.subs {
            write_info_one(o, s, &format!("{fullname}|{}", s.name));
        }
    }
}

/// One entry of `COMMAND` / `COMMAND INFO`.
pub fn write_info(o: &mut Out<'_>, c: &Meta, fullname: &str) {
    write_info_one(o, c, fullname);
}

/// One entry of `COMMAND DOCS` (the map after the name).
pub fn write_docs(o: &mut Out<'_>, c: &Meta, fullname: &str) {
    let mut n = 3;
    if !c.doc_flags.is_empty() {
        n += 1;
    }
    if !c.subs.is_empty() {
        n += 1;
    }
    o.map(n);
    o.bulk_str("summary");
    o.bulk_str(c.summary);
    o.bulk_str("since");
    o.bulk_str(c.since);
    o.bulk_str("group");
    o.bulk_str(c.group);
    if !c.doc_flags.is_empty() {
        o.bulk_str("doc_flags");
        o.set(c.doc_flags.len());
        for f in c.doc_flags {
            o.status(&f.to_ascii_lowercase());
        }
    }
    if !c.subs.is_empty() {
        o.bulk_str("subcommands");
        o.map(c.subs.len());
        for s in c.subs {
            let full = format!("{fullname}|{}", s.name);
            o.bulk_str(&full);
            write_docs(o, s, &full);
        }
    }
}

/// Keys of a command according to its key specifications (COMMAND GETKEYS).
pub fn command_keys<'a>(c: &Meta, args: &'a [Vec<u8>]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let argc = args.len() as i64;
    for k in c.keys {
        let start = match k.begin {
            Begin::Index(pos) => pos,
            Begin::Keyword(kw, from) => {
                let mut found = None;
                for i in from..argc {
                    if args[i as usize].eq_ignore_ascii_case(kw.as_bytes()) {
                        found = Some(i + 1);
                        break;
                    }
                }
                match found {
                    Some(i) => i,
                    None => continue,
                }
            }
        };
        let last = if k.lastkey >= 0 {
            start + k.lastkey
        } else if k.limit > 1 {
            start + (argc - start) / k.limit - 1
        } else {
            argc + k.lastkey
        };
        let mut i = start;
        while i <= last && i < argc {
            out.push(args[i as usize].as_slice());
            i += k.keystep.max(1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arity of every core command (and subcommand) here equals the core's.
    #[test]
    fn arity_matches_core() {
        for name in xstreams_core::command::command_names() {
            let meta = lookup(name.as_bytes()).unwrap_or_else(|| panic!("{name} missing"));
            assert!(meta.srv.is_none(), "{name} is a core command");
            if meta.subs.is_empty() {
                let r = xstreams_core::command::resolve(&[name.as_bytes()]);
                let spec = match r {
                    Ok(r) => r.spec,
                    Err(_) => {
                        // arity error: find the spec by giving enough arguments
                        let many: Vec<&[u8]> = std::iter::once(name.as_bytes())
                            .chain(std::iter::repeat_n(b"x".as_slice(), 10))
                            .collect();
                        let fixed = (meta.arity.unsigned_abs()) as usize;
                        xstreams_core::command::resolve(&many[..fixed.max(1)])
                            .map(|r| r.spec)
                            .unwrap_or_else(|e| panic!("{name}: {e}"))
                    }
                };
                assert_eq!(spec.arity, meta.arity, "{name}");
            } else {
                for s in meta.subs {
                    let fixed = s.arity.unsigned_abs() as usize;
                    let mut args: Vec<&[u8]> = vec![name.as_bytes(), s.name.as_bytes()];
                    while args.len() < fixed {
                        args.push(b"x");
                    }
                    let r = xstreams_core::command::resolve(&args)
                        .unwrap_or_else(|e| panic!("{name}|{}: {e}", s.name));
                    assert_eq!(r.spec.arity, s.arity, "{name}|{}", s.name);
                }
            }
        }
    }

    /// Resolution errors are the core's, for every command and argument count.
    #[test]
    fn resolve_matches_core() {
        let mut names: Vec<Vec<u8>> = xstreams_core::command::command_names()
            .map(|n| n.as_bytes().to_vec())
            .collect();
        names.push(b"NOSUCH".to_vec());
        names.push(b"XGROUP".to_vec());
        for name in names {
            for sub in [&b"create"[..], b"HELP", b"nope", b"stream", b"x"] {
                for n in 0..8 {
                    let mut args = vec![name.clone()];
                    if n > 0 {
                        args.push(sub.to_vec());
                    }
                    while args.len() < n + 1 {
                        args.push(b"a".to_vec());
                    }
                    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
                    let core = xstreams_core::command::resolve(&refs).err();
                    let ours = resolve(&args).err().map(|(_, e)| e);
                    assert_eq!(ours, core, "{:?}", String::from_utf8_lossy(&args.concat()));
                }
            }
        }
    }

    #[test]
    fn names_unique_and_lowercase() {
        let mut seen = std::collections::HashSet::new();
        for c in COMMANDS {
            assert_eq!(c.name, c.name.to_ascii_lowercase());
            assert!(seen.insert(c.name), "duplicate {}", c.name);
        }
    }

    #[test]
    fn implied_categories() {
        let xadd = lookup(b"XADD").unwrap();
        assert_eq!(acl_categories(xadd), vec!["write", "stream", "fast"]);
        let xread = lookup(b"xread").unwrap();
        assert_eq!(
            acl_categories(xread),
            vec!["read", "stream", "slow", "blocking"]
        );
    }

    #[test]
    fn getkeys() {
        let xread = lookup(b"xread").unwrap();
        let args: Vec<Vec<u8>> = ["XREAD", "COUNT", "2", "STREAMS", "a", "b", "0", "0"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(command_keys(xread, &args), vec![b"a".as_slice(), b"b"]);
        let del = lookup(b"del").unwrap();
        let args: Vec<Vec<u8>> = ["DEL", "a", "b"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(command_keys(del, &args), vec![b"a".as_slice(), b"b"]);
    }
}
