//! The stream commands' rows of the command table (data only: see the parent module).

use super::super::{xack, xadd, xclaim, xgroup, xidmp, xinfo, xpending, xrange, xread};
use super::f::*;
use super::NativeReply::{Entries, Int, Raw, Read};
use super::*;

const RW_UPDATE: &[KeySpec] = &[ks1(&["RW", "UPDATE"], 1)];

/// The Python client runs the command through its Python method.
const PY: Client = Client::Python;

/// The Python client's native method builds redis-py's value from a reply of shape `r`.
const fn native(r: NativeReply) -> Client {
    Client::Native(r)
}

/// XADD appends to its stream, unless it also trims it.
const APPENDS: Log = Log::Appends {
    unless: &["maxlen", "minid"],
};

/// Changes the group state of its key and nothing else.
const GROUP_STATE: Log = Log::GroupState { unless: &[] };

const RW_DELETE: &[KeySpec] = &[ks1(&["RW", "DELETE"], 1)];

const G_RW_INSERT: &[KeySpec] = &[ks1(&["RW", "INSERT"], 2)];

const G_RW_DELETE: &[KeySpec] = &[ks1(&["RW", "DELETE"], 2)];

const G_RW_UPDATE: &[KeySpec] = &[ks1(&["RW", "UPDATE"], 2)];

const G_RO_ACCESS: &[KeySpec] = &[ks1(&["RO", "ACCESS"], 2)];

static XGROUP_SUBS: [CommandSpec; 6] = [
    engine(
        logs(
            with_keys(
                m(
                    "create",
                    -5,
                    &[WRITE, DENYOOM],
                    ST,
                    "stream",
                    "5.0.0",
                    "Adds a new consumer group to a stream.",
                ),
                G_RW_INSERT,
                K2,
            ),
            Log::GroupState {
                unless: &["mkstream"],
            },
        ),
        xgroup::xgroup,
    ),
    engine(
        logs(
            with_keys(
                m(
                    "createconsumer",
                    5,
                    &[WRITE, DENYOOM],
                    ST,
                    "stream",
                    "6.2.0",
                    "Adds a named consumer to an existing group.",
                ),
                G_RW_INSERT,
                K2,
            ),
            GROUP_STATE,
        ),
        xgroup::xgroup,
    ),
    engine(
        logs(
            with_keys(
                m(
                    "delconsumer",
                    5,
                    &[WRITE],
                    ST,
                    "stream",
                    "5.0.0",
                    "Removes a named consumer from its group.",
                ),
                G_RW_DELETE,
                K2,
            ),
            GROUP_STATE,
        ),
        xgroup::xgroup,
    ),
    engine(
        logs(
            with_keys(
                m(
                    "destroy",
                    4,
                    &[WRITE],
                    ST,
                    "stream",
                    "5.0.0",
                    "Removes a consumer group from a stream.",
                ),
                G_RW_DELETE,
                K2,
            ),
            GROUP_STATE,
        ),
        xgroup::xgroup,
    ),
    engine(
        logs(
            m(
                "help",
                2,
                &[LOADING, STALE],
                ST,
                "stream",
                "5.0.0",
                "Describes each of the available subcommands.",
            ),
            Log::NotLogged,
        ),
        xgroup::xgroup,
    ),
    engine(
        logs(
            with_keys(
                m(
                    "setid",
                    -5,
                    &[WRITE],
                    ST,
                    "stream",
                    "5.0.0",
                    "Moves a consumer group's delivery cursor to a given ID.",
                ),
                G_RW_UPDATE,
                K2,
            ),
            GROUP_STATE,
        ),
        xgroup::xgroup,
    ),
];

static XINFO_SUBS: [CommandSpec; 4] = [
    engine(
        logs(
            tips(
                with_keys(
                    m(
                        "consumers",
                        4,
                        &[READONLY],
                        ST,
                        "stream",
                        "5.0.0",
                        "Lists the members of a consumer group with their details.",
                    ),
                    G_RO_ACCESS,
                    K2,
                ),
                ND,
            ),
            Log::NotLogged,
        ),
        xinfo::xinfo,
    ),
    engine(
        logs(
            with_keys(
                m(
                    "groups",
                    3,
                    &[READONLY],
                    ST,
                    "stream",
                    "5.0.0",
                    "Lists the consumer groups attached to a stream.",
                ),
                G_RO_ACCESS,
                K2,
            ),
            Log::NotLogged,
        ),
        xinfo::xinfo,
    ),
    engine(
        logs(
            m(
                "help",
                2,
                &[LOADING, STALE],
                ST,
                "stream",
                "5.0.0",
                "Describes each of the available subcommands.",
            ),
            Log::NotLogged,
        ),
        xinfo::xinfo,
    ),
    engine(
        logs(
            with_keys(
                m(
                    "stream",
                    -3,
                    &[READONLY],
                    ST,
                    "stream",
                    "5.0.0",
                    "Reports metadata and statistics for a stream.",
                ),
                G_RO_ACCESS,
                K2,
            ),
            Log::NotLogged,
        ),
        xinfo::xinfo,
    ),
];

static XIDMP_SUBS: [CommandSpec; 2] = [
    engine(
        logs(
            with_keys(
                m(
                    "cfgget",
                    -3,
                    &[READONLY],
                    ST,
                    "stream",
                    "8.6.0",
                    "Reports the duplicate-suppression settings a stream applies to producers.",
                ),
                G_RO_ACCESS,
                K2,
            ),
            Log::NotLogged,
        ),
        xidmp::xidmp_cfgget,
    ),
    engine(
        logs(
            with_keys(
                m(
                    "cfgset",
                    -3,
                    &[WRITE],
                    ST,
                    "stream",
                    "8.6.0",
                    "Updates the duplicate-suppression settings a stream applies to producers.",
                ),
                G_RW_UPDATE,
                K2,
            ),
            Log::Data,
        ),
        xidmp::xidmp_cfgset,
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

#[rustfmt::skip]
pub(super) static ROWS: &[CommandSpec] = &[
    engine(lists(tips(with_keys(m("xadd", -5, &[WRITE, DENYOOM, FAST], ST, "stream", "5.0.0", "Adds an entry to the end of a stream, creating the stream when it is missing."), RW_UPDATE, K1), ND), 4, APPENDS, native(Raw)), xadd::xadd),
    engine(lists(tips(with_keys(m("xtrim", -4, &[WRITE], ST, "stream", "5.0.0", "Shrinks a stream by evicting its oldest entries."), RW_DELETE, K1), ND), 1, Log::Data, PY), xadd::xtrim),
    engine(lists(with_keys(m("xlen", 2, &[READONLY, FAST], ST, "stream", "5.0.0", "Counts the entries held in a stream."), RO, K1), 1, Log::NotLogged, native(Int)), xrange::xlen),
    engine(lists(with_keys(m("xrange", -4, &[READONLY], ST, "stream", "5.0.0", "Reads the stream entries whose IDs fall between two bounds."), RO_ACCESS, K1), 1, Log::NotLogged, native(Entries)), xrange::xrange),
    engine(lists(with_keys(m("xrevrange", -4, &[READONLY], ST, "stream", "5.0.0", "Reads the stream entries between two ID bounds, newest first."), RO_ACCESS, K1), 1, Log::NotLogged, native(Entries)), xrange::xrevrange),
    engine(lists(with_keys(m("xdel", -3, &[WRITE, FAST], ST, "stream", "5.0.0", "Removes entries from a stream by ID and reports how many were removed."), RW_DELETE, K1), 1, Log::Data, native(Int)), xrange::xdel),
    engine(lists(with_keys(m("xdelex", -5, &[WRITE, FAST], ST, "stream", "8.2.0", "Removes entries from a stream by ID, with options for their pending references."), RW_DELETE, K1), 1, Log::Data, PY), xrange::xdelex),
    engine(lists(with_keys(m("xsetid", -3, &[WRITE, DENYOOM, FAST], ST, "stream", "5.0.0", "Internal command that overwrites a stream's last ID and metadata for replication."), RW_UPDATE, K1), 1, Log::Data, PY), xrange::xsetid),
    engine(lists(with_keys(m("xread", -4, &[BLOCKING, READONLY, MOVABLEKEYS], ST, "stream", "5.0.0", "Reads entries newer than given IDs from one or more streams, optionally waiting for new data."), XREAD_KEYS, (0, 0, 0)), 1, Log::NotLogged, native(Read)), xread::xread),
    engine(lists(with_keys(m("xreadgroup", -7, &[BLOCKING, WRITE, MOVABLEKEYS], ST, "stream", "5.0.0", "Delivers new or already-pending entries to a group consumer, optionally waiting for data."), XREADGROUP_KEYS, (0, 0, 0)), 2, GROUP_STATE, native(Read)), xread::xread),
    fuzzed(served(container("xgroup", "stream", "5.0.0", "Umbrella for the consumer-group management subcommands.", &XGROUP_SUBS), PY), 2),
    fuzzed(served(container("xinfo", "stream", "5.0.0", "Umbrella for the subcommands that inspect streams and their groups.", &XINFO_SUBS), PY), 1),
    engine(lists(with_keys(m("xack", -4, &[WRITE, FAST], ST, "stream", "5.0.0", "Marks pending entries of a consumer group as processed and reports how many were."), RW_UPDATE, K1), 1, GROUP_STATE, native(Int)), xack::xack),
    engine(lists(with_keys(m("xackdel", -6, &[WRITE, FAST], ST, "stream", "8.2.0", "Marks entries as processed for a group and removes them from the stream."), &[ks1(&["RW", "UPDATE", "DELETE"], 1)], K1), 1, Log::Data, PY), xack::xackdel),
    engine(lists(with_keys(m("xnack", -7, &[WRITE, FAST], ST, "stream", "8.8.0", "Hands pending entries back to their group for redelivery without marking them processed."), RW_UPDATE, K1), 1, GROUP_STATE, PY), xack::xnack),
    engine(lists(tips(with_keys(m("xpending", -3, &[READONLY], ST, "stream", "5.0.0", "Reports on the entries a consumer group has delivered but not yet acknowledged."), RO_ACCESS, K1), ND), 1, Log::NotLogged, PY), xpending::xpending),
    engine(lists(tips(with_keys(m("xclaim", -6, &[WRITE, FAST], ST, "stream", "5.0.0", "Transfers ownership of pending group entries to another consumer, as though delivered to it."), RW_UPDATE, K1), ND), 1, GROUP_STATE, PY), xclaim::xclaim),
    engine(lists(tips(with_keys(m("xautoclaim", -6, &[WRITE, FAST], ST, "stream", "6.2.0", "Scans a group's pending entries and transfers idle ones to another consumer."), RW_DELETE, K1), ND), 1, GROUP_STATE, PY), xclaim::xautoclaim),
    engine(lists(with_keys(m("xcfgset", -2, &[WRITE, FAST], ST, "stream", "8.6.0", "Adjusts the duplicate-suppression settings a stream applies to producers."), RW_UPDATE, K1), 1, Log::Data, PY), xidmp::xcfgset),
    engine(lists(with_keys(m("xidmprecord", 5, &[WRITE, DENYOOM, FAST], ST, "stream", "8.6.2", "Internal command that stores a producer's idempotency ID for an existing stream entry."), RW_UPDATE, K1), 1, Log::Data, PY), xidmp::xidmprecord),
    fuzzed(served(container("xidmp", "stream", "8.6.0", "Umbrella for the subcommands that manage producer duplicate suppression.", &XIDMP_SUBS), PY), 1),
];
