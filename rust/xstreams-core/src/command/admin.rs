//! INFO and CONFIG as the embedded store answers them. The RESP server answers both
//! itself with more (connections, its own parameters), through the same builders:
//! [`crate::keyspace::info`] for INFO's sections, [`crate::base::config::matching`] and
//! [`crate::base::config::check_set_names`] for CONFIG GET/SET.

use super::xgroup::help_reply;
use super::Ctx;
use crate::base::config;
use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::info::{self, Wanted};

/// INFO [section ...]: the sections the store can fill (see [`info::store_info`]), as a
/// bulk string (RESP3 clients get the same text: redis-py strips a verbatim string's
/// `txt:` prefix).
pub fn info(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let wanted = Wanted::parse(&args[1..]);
    // A store that records (durable) refuses writes only when its log stopped.
    let log_failed = ctx.recording() && ctx.reject_writes.is_some();
    let text = info::store_info(
        ctx.ks,
        ctx.now,
        &wanted,
        ctx.facts,
        ctx.recording(),
        log_failed,
    );
    Ok(Reply::Bulk(text.into_bytes()))
}

/// Parameters of the embedded store that CONFIG SET refuses to change.
const STORE_IMMUTABLE: &[&str] = &["databases"];

/// Every parameter of the embedded store with its value: the store's settings and the
/// number of databases.
fn store_params(ctx: &Ctx<'_>) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = config::CONFIG_NAMES
        .iter()
        .map(|n| (n.to_string(), ctx.ks.config.get(n).unwrap_or_default()))
        .collect();
    v.push(("databases".into(), ctx.ks.dbs.len().to_string()));
    v
}

const CONFIG_HELP: &[&str] = &[
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
];

/// CONFIG GET pattern [pattern ...]: a map of every matching parameter.
pub fn config_get(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let params = store_params(ctx);
    let found = config::matching(&params, &args[2..]);
    Ok(Reply::Map(
        found
            .into_iter()
            .map(|(n, v)| (Reply::bulk_str(n), Reply::bulk_str(v)))
            .collect(),
    ))
}

/// CONFIG SET name value [name value ...]: all or nothing, with redis-server's checks
/// in its order. A durable store logs the settings its data depends on (node sizes,
/// IDMP defaults), not the limits (`maxmemory`).
pub fn config_set(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    if !(args.len() - 2).is_multiple_of(2) {
        return Err(CmdError::arity("config|set"));
    }
    let pairs = &args[2..];
    let known: Vec<String> = store_params(ctx).into_iter().map(|(n, _)| n).collect();
    let names = config::check_set_names(
        pairs,
        |n| known.iter().any(|k| k == n),
        |n| STORE_IMMUTABLE.contains(&n),
    )?;
    // Check every value on a copy, then apply them all.
    let mut next = ctx.ks.config.clone();
    for (name, p) in names.iter().zip(pairs.chunks(2)) {
        let value = String::from_utf8_lossy(p[1]);
        next.set(name, &value)
            .map_err(|e| e.to_cmd_error(&String::from_utf8_lossy(p[0])))?;
    }
    for name in &names {
        if !config::LIMIT_NAMES.contains(&name.as_str()) {
            let value = next.get(name).unwrap_or_default();
            ctx.propagate_record(super::LogRecord::Config {
                name: name.clone(),
                value,
            });
        }
    }
    ctx.ks.config = next;
    Ok(Reply::ok())
}

/// CONFIG RESETSTAT: the store keeps no statistics INFO could reset.
pub fn config_resetstat(_ctx: &mut Ctx<'_>, _args: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::ok())
}

/// CONFIG REWRITE: an embedded store has no configuration file.
pub fn config_rewrite(_ctx: &mut Ctx<'_>, _args: &[&[u8]]) -> CmdResult<Reply> {
    Err(CmdError::no_config_file())
}

/// CONFIG HELP.
pub fn config_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]]) -> CmdResult<Reply> {
    Ok(help_reply("CONFIG", CONFIG_HELP))
}
