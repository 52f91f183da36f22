//! The stream commands' rows of the command table (data only: see the parent module).

use super::super::{xack, xadd, xclaim, xgroup, xidmp, xinfo, xpending, xrange, xread};
use super::f::*;
use super::*;

const RW_UPDATE: &[KeySpec] = &[ks1(&["RW", "UPDATE"], 1)];

const RW_DELETE: &[KeySpec] = &[ks1(&["RW", "DELETE"], 1)];

const G_RW_INSERT: &[KeySpec] = &[ks1(&["RW", "INSERT"], 2)];

const G_RW_DELETE: &[KeySpec] = &[ks1(&["RW", "DELETE"], 2)];

const G_RW_UPDATE: &[KeySpec] = &[ks1(&["RW", "UPDATE"], 2)];

const G_RO_ACCESS: &[KeySpec] = &[ks1(&["RO", "ACCESS"], 2)];

static XGROUP_SUBS: [CommandSpec; 6] = [
    engine(
        with_keys(
            m(
                "create",
                -5,
                &[WRITE, DENYOOM],
                ST,
                "stream",
                "5.0.0",
                "Creates a consumer group.",
            ),
            G_RW_INSERT,
            K2,
        ),
        xgroup::xgroup,
    ),
    engine(
        with_keys(
            m(
                "createconsumer",
                5,
                &[WRITE, DENYOOM],
                ST,
                "stream",
                "6.2.0",
                "Creates a consumer in a consumer group.",
            ),
            G_RW_INSERT,
            K2,
        ),
        xgroup::xgroup,
    ),
    engine(
        with_keys(
            m(
                "delconsumer",
                5,
                &[WRITE],
                ST,
                "stream",
                "5.0.0",
                "Deletes a consumer from a consumer group.",
            ),
            G_RW_DELETE,
            K2,
        ),
        xgroup::xgroup,
    ),
    engine(
        with_keys(
            m(
                "destroy",
                4,
                &[WRITE],
                ST,
                "stream",
                "5.0.0",
                "Destroys a consumer group.",
            ),
            G_RW_DELETE,
            K2,
        ),
        xgroup::xgroup,
    ),
    engine(
        m(
            "help",
            2,
            &[LOADING, STALE],
            ST,
            "stream",
            "5.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        xgroup::xgroup,
    ),
    engine(
        with_keys(
            m(
                "setid",
                -5,
                &[WRITE],
                ST,
                "stream",
                "5.0.0",
                "Sets the last-delivered ID of a consumer group.",
            ),
            G_RW_UPDATE,
            K2,
        ),
        xgroup::xgroup,
    ),
];

static XINFO_SUBS: [CommandSpec; 4] = [
    engine(
        tips(
            with_keys(
                m(
                    "consumers",
                    4,
                    &[READONLY],
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
        xinfo::xinfo,
    ),
    engine(
        with_keys(
            m(
                "groups",
                3,
                &[READONLY],
                ST,
                "stream",
                "5.0.0",
                "Returns a list of the consumer groups of a stream.",
            ),
            G_RO_ACCESS,
            K2,
        ),
        xinfo::xinfo,
    ),
    engine(
        m(
            "help",
            2,
            &[LOADING, STALE],
            ST,
            "stream",
            "5.0.0",
            "Returns helpful text about the different subcommands.",
        ),
        xinfo::xinfo,
    ),
    engine(
        with_keys(
            m(
                "stream",
                -3,
                &[READONLY],
                ST,
                "stream",
                "5.0.0",
                "Returns information about a stream.",
            ),
            G_RO_ACCESS,
            K2,
        ),
        xinfo::xinfo,
    ),
];

static XIDMP_SUBS: [CommandSpec; 2] = [
    engine(
        with_keys(
            m(
                "cfgget",
                -3,
                &[READONLY],
                ST,
                "stream",
                "8.6.0",
                "Returns the idempotent-producer settings of a stream.",
            ),
            G_RO_ACCESS,
            K2,
        ),
        xidmp::xidmp_cfgget,
    ),
    engine(
        with_keys(
            m(
                "cfgset",
                -3,
                &[WRITE],
                ST,
                "stream",
                "8.6.0",
                "Changes the idempotent-producer settings of a stream.",
            ),
            G_RW_UPDATE,
            K2,
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
    engine(tips(with_keys(m("xadd", -5, &[WRITE, DENYOOM, FAST], ST, "stream", "5.0.0", "Appends a new message to a stream. Creates the key if it doesn't exist."), RW_UPDATE, K1), ND), xadd::xadd),
    engine(tips(with_keys(m("xtrim", -4, &[WRITE], ST, "stream", "5.0.0", "Deletes messages from the beginning of a stream."), RW_DELETE, K1), ND), xadd::xtrim),
    engine(with_keys(m("xlen", 2, &[READONLY, FAST], ST, "stream", "5.0.0", "Return the number of messages in a stream."), RO, K1), xrange::xlen),
    engine(with_keys(m("xrange", -4, &[READONLY], ST, "stream", "5.0.0", "Returns the messages from a stream within a range of IDs."), RO_ACCESS, K1), xrange::xrange),
    engine(with_keys(m("xrevrange", -4, &[READONLY], ST, "stream", "5.0.0", "Returns the messages from a stream within a range of IDs in reverse order."), RO_ACCESS, K1), xrange::xrevrange),
    engine(with_keys(m("xdel", -3, &[WRITE, FAST], ST, "stream", "5.0.0", "Returns the number of messages after removing them from a stream."), RW_DELETE, K1), xrange::xdel),
    engine(with_keys(m("xdelex", -5, &[WRITE, FAST], ST, "stream", "8.2.0", "Deletes one or multiple entries from the stream."), RW_DELETE, K1), xrange::xdelex),
    engine(with_keys(m("xsetid", -3, &[WRITE, DENYOOM, FAST], ST, "stream", "5.0.0", "An internal command for replicating stream values."), RW_UPDATE, K1), xrange::xsetid),
    engine(with_keys(m("xread", -4, &[BLOCKING, READONLY, MOVABLEKEYS], ST, "stream", "5.0.0", "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise."), XREAD_KEYS, (0, 0, 0)), xread::xread),
    engine(with_keys(m("xreadgroup", -7, &[BLOCKING, WRITE, MOVABLEKEYS], ST, "stream", "5.0.0", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise."), XREADGROUP_KEYS, (0, 0, 0)), xread::xread),
    container("xgroup", "stream", "5.0.0", "A container for consumer groups commands.", &XGROUP_SUBS),
    container("xinfo", "stream", "5.0.0", "A container for stream introspection commands.", &XINFO_SUBS),
    engine(with_keys(m("xack", -4, &[WRITE, FAST], ST, "stream", "5.0.0", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream."), RW_UPDATE, K1), xack::xack),
    engine(with_keys(m("xackdel", -6, &[WRITE, FAST], ST, "stream", "8.2.0", "Acknowledges and deletes one or multiple messages for a stream consumer group."), &[ks1(&["RW", "UPDATE", "DELETE"], 1)], K1), xack::xackdel),
    engine(with_keys(m("xnack", -7, &[WRITE, FAST], ST, "stream", "8.8.0", "Returns pending messages of a consumer group to the group without acknowledging them."), RW_UPDATE, K1), xack::xnack),
    engine(tips(with_keys(m("xpending", -3, &[READONLY], ST, "stream", "5.0.0", "Returns the information and entries from a stream consumer group's pending entries list."), RO_ACCESS, K1), ND), xpending::xpending),
    engine(tips(with_keys(m("xclaim", -6, &[WRITE, FAST], ST, "stream", "5.0.0", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member."), RW_UPDATE, K1), ND), xclaim::xclaim),
    engine(tips(with_keys(m("xautoclaim", -6, &[WRITE, FAST], ST, "stream", "6.2.0", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member."), RW_DELETE, K1), ND), xclaim::xautoclaim),
    engine(with_keys(m("xcfgset", -2, &[WRITE, FAST], ST, "stream", "8.6.0", "Sets the idempotent-producer configuration of a stream."), RW_UPDATE, K1), xidmp::xcfgset),
    engine(with_keys(m("xidmprecord", 5, &[WRITE, DENYOOM, FAST], ST, "stream", "8.6.2", "An internal command recording an idempotent-producer entry."), RW_UPDATE, K1), xidmp::xidmprecord),
    container("xidmp", "stream", "8.6.0", "A container for idempotent-producer commands.", &XIDMP_SUBS),
];
