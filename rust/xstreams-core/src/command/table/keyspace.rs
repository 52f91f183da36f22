//! The keyspace and generic commands' rows of the command table (data only).

use super::super::{dump, expire, keyspace};
use super::f::*;
use super::*;

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

const RW_UPDATE: &[KeySpec] = &[ks1(&["RW", "UPDATE"], 1)];

const SHARDS_SUM: &[&str] = &["REQUEST_POLICY:MULTI_SHARD", "RESPONSE_POLICY:AGG_SUM"];

const ALL_SHARDS_OK: &[&str] = &["REQUEST_POLICY:ALL_SHARDS", "RESPONSE_POLICY:ALL_SUCCEEDED"];

#[rustfmt::skip]
pub(super) static ROWS: &[CommandSpec] = &[
    engine(fuzzed(served(tips(with_keys(m("del", -2, &[WRITE], KS, "generic", "1.0.0", "Removes the named keys and reports how many existed."), MULTI_KEYS_RM, (1, -1, 1)), SHARDS_SUM), Client::Native(NativeReply::Int)), 1), keyspace::del),
    engine(fuzzed(tips(with_keys(m("unlink", -2, &[WRITE, FAST], KS, "generic", "4.0.0", "Removes the named keys, reclaiming their memory in the background."), MULTI_KEYS_RM, (1, -1, 1)), SHARDS_SUM), 1), keyspace::del),
    engine(fuzzed(served(tips(with_keys(m("exists", -2, &[READONLY, FAST], KS, "generic", "1.0.0", "Counts how many of the named keys are present."), MULTI_KEYS_RO, (1, -1, 1)), SHARDS_SUM), Client::Native(NativeReply::Int)), 1), keyspace::exists),
    engine(fuzzed(served(with_keys(m("type", 2, &[READONLY, FAST], KS, "generic", "1.0.0", "Reports the kind of value held at a key."), RO, K1), Client::Native(NativeReply::Raw)), 1), keyspace::type_cmd),
    engine(fuzzed(tips(m("keys", 2, &[READONLY], &["KEYSPACE", "DANGEROUS"], "generic", "1.0.0", "Lists every key whose name matches a glob pattern."), &["REQUEST_POLICY:ALL_SHARDS", "NONDETERMINISTIC_OUTPUT_ORDER"]), 1), keyspace::keys),
    engine(fuzzed(tips(m("scan", -2, &[READONLY], KS, "generic", "2.8.0", "Walks the keyspace incrementally with a cursor."), &["NONDETERMINISTIC_OUTPUT", "REQUEST_POLICY:SPECIAL", "RESPONSE_POLICY:SPECIAL"]), 1), keyspace::scan),
    engine(fuzzed(tips(m("dbsize", 1, &[READONLY, FAST], KS, "server", "1.0.0", "Reports how many keys the selected database holds."), &["REQUEST_POLICY:ALL_SHARDS", "RESPONSE_POLICY:AGG_SUM"]), 1), keyspace::dbsize),
    engine(fuzzed(logs(tips(m("flushall", -1, &[WRITE], &["KEYSPACE", "DANGEROUS"], "server", "1.0.0", "Empties every database of all its keys."), ALL_SHARDS_OK), Log::AllDatabases), 1), keyspace::flushall),
    engine(fuzzed(logs(tips(m("flushdb", -1, &[WRITE], &["KEYSPACE", "DANGEROUS"], "server", "1.0.0", "Empties the selected database."), ALL_SHARDS_OK), Log::Database), 1), keyspace::flushdb),
    engine(tips(m("ping", -1, &[FAST], CONN, "connection", "1.0.0", "Checks that the server is responsive, replying PONG or an echoed message."), ALL_SHARDS_OK), keyspace::ping),
    engine(m("echo", 2, &[LOADING, STALE, FAST], CONN, "connection", "1.0.0", "Replies with the message it was sent."), keyspace::echo),
    engine(tips(m("time", 1, &[LOADING, STALE, FAST], &[], "server", "2.6.0", "Reports the current server clock as seconds and microseconds."), ND), keyspace::time),
    engine(fuzzed(with_keys(m("rename", 3, &[WRITE], KS, "generic", "1.0.0", "Gives a key a new name, replacing any key already using it."), &[ks1(&["RW", "ACCESS", "DELETE"], 1), ks1(&["OW", "UPDATE"], 2)], (1, 2, 1)), 1), keyspace::rename),
    engine(fuzzed(with_keys(m("renamenx", 3, &[WRITE, FAST], KS, "generic", "1.0.0", "Gives a key a new name unless that name is already taken."), &[ks1(&["RW", "ACCESS", "DELETE"], 1), ks1(&["OW", "INSERT"], 2)], (1, 2, 1)), 1), keyspace::renamenx),
    engine(fuzzed(logs(with_keys(m("copy", -3, &[WRITE, DENYOOM], KS, "generic", "6.2.0", "Duplicates a key's value under another key name."), &[ks1(&["RO", "ACCESS"], 1), ks1(&["OW", "UPDATE"], 2)], (1, 2, 1)), Log::OtherDb), 1), keyspace::copy),
    engine(fuzzed(logs(with_keys(m("move", 3, &[WRITE, FAST], KS, "generic", "1.0.0", "Transfers a key from the selected database to another one."), &[ks1(&["RW", "ACCESS", "UPDATE"], 1)], K1), Log::OtherDb), 1), keyspace::move_cmd),
    engine(fuzzed(logs(m("swapdb", 3, &[WRITE, FAST], &["KEYSPACE", "DANGEROUS"], "server", "4.0.0", "Exchanges the contents of two databases."), Log::AllDatabases), 1), keyspace::swapdb),
    engine(fuzzed(with_keys(m("set", -3, &[WRITE, DENYOOM], &["STRING"], "string", "1.0.0", "Stores a string under a key, replacing any existing value whatever its type."), &[ks1(&["RW", "ACCESS", "UPDATE", "VARIABLE_FLAGS"], 1)], K1), 1), keyspace::set),
    engine(fuzzed(with_keys(m("get", 2, &[READONLY, FAST], &["STRING"], "string", "1.0.0", "Reads the string held at a key."), RO_ACCESS, K1), 1), keyspace::get),
    engine(fuzzed(tips(with_keys(m("dump", 2, &[READONLY], KS, "generic", "2.6.0", "Serializes the value at a key into an opaque payload."), RO_ACCESS, K1), ND), 1), dump::dump),
    engine(fuzzed(with_keys(m("restore", -4, &[WRITE, DENYOOM], &["KEYSPACE", "DANGEROUS"], "generic", "2.6.0", "Recreates a key from a payload produced by DUMP."), &[ks1(&["OW", "UPDATE"], 1)], K1), 1), dump::restore),
    engine(fuzzed(with_keys(m("expire", -3, &[WRITE, FAST], KS, "generic", "1.0.0", "Gives a key a time to live, in seconds."), RW_UPDATE, K1), 1), expire::expire),
    engine(fuzzed(with_keys(m("pexpire", -3, &[WRITE, FAST], KS, "generic", "2.6.0", "Gives a key a time to live, in milliseconds."), RW_UPDATE, K1), 1), expire::pexpire),
    engine(with_keys(m("expireat", -3, &[WRITE, FAST], KS, "generic", "1.2.0", "Schedules a key's deletion at a Unix time in seconds."), RW_UPDATE, K1), expire::expireat),
    engine(fuzzed(with_keys(m("pexpireat", -3, &[WRITE, FAST], KS, "generic", "2.6.0", "Schedules a key's deletion at a Unix time in milliseconds."), RW_UPDATE, K1), 1), expire::pexpireat),
    engine(fuzzed(tips(with_keys(m("ttl", 2, &[READONLY, FAST], KS, "generic", "1.0.0", "Reports a key's remaining time to live in seconds."), RO_ACCESS, K1), ND), 1), expire::ttl),
    engine(tips(with_keys(m("pttl", 2, &[READONLY, FAST], KS, "generic", "2.6.0", "Reports a key's remaining time to live in milliseconds."), RO_ACCESS, K1), ND), expire::pttl),
    engine(with_keys(m("expiretime", 2, &[READONLY, FAST], KS, "generic", "7.0.0", "Reports the Unix time, in seconds, at which a key will expire."), RO_ACCESS, K1), expire::expiretime),
    engine(with_keys(m("pexpiretime", 2, &[READONLY, FAST], KS, "generic", "7.0.0", "Reports the Unix time, in milliseconds, at which a key will expire."), RO_ACCESS, K1), expire::pexpiretime),
    engine(fuzzed(with_keys(m("persist", 2, &[WRITE, FAST], KS, "generic", "2.2.0", "Clears a key's expiry so it no longer times out."), RW_UPDATE, K1), 1), expire::persist),
];
