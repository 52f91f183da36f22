//! CONFIG GET / SET / RESETSTAT / REWRITE and the parameter table, with redis-server's
//! parameter names.

use std::sync::atomic::Ordering;

use super::args::eq;
use crate::config::OutputLimit;
use crate::out::Out;
use crate::session::Session;
use crate::state::Shared;
use xstreams_core::error::CmdError;

impl Session {
    pub(super) fn config(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let sub = &args[1];
        if eq(sub, "get") {
            let params = config_params(&self.sh);
            let found = xstreams_core::base::config::matching(&params, &args[2..]);
            let mut o = Out::new(out, self.proto);
            o.map(found.len());
            for (n, v) in found {
                o.bulk_str(n);
                o.bulk_str(v);
            }
        } else if eq(sub, "set") {
            if args.len() % 2 == 1 {
                self.error(out, CmdError::arity("config|set").line());
                return;
            }
            match config_set(&self.sh, &args[2..]) {
                Ok(()) => out.extend_from_slice(b"+OK\r\n"),
                Err(e) => self.error(out, &e),
            }
        } else if eq(sub, "resetstat") {
            self.sh.stats.reset();
            out.extend_from_slice(b"+OK\r\n");
        } else if eq(sub, "rewrite") {
            let e = if self.sh.cfg.config_file.is_some() {
                xstreams_core::error::CONFIG_REWRITE_UNSUPPORTED
            } else {
                xstreams_core::error::NO_CONFIG_FILE
            };
            self.error(out, e);
        } else if eq(sub, "help") {
            Out::new(out, self.proto).help(
                "CONFIG",
                &[
                    "GET <pattern>",
                    "    Return parameters matching the glob-like <pattern> and their values.",
                    "SET <directive> <value>",
                    "    Set the configuration <directive> to <value>.",
                    "RESETSTAT",
                    "    Reset statistics reported by the INFO command.",
                    "REWRITE",
                    "    Rewrite the configuration file.",
                ],
            );
        }
    }
}

/// Parameters that CONFIG SET accepts and stores without effect (so harnesses that save
/// and restore the whole configuration work), with their defaults.
const INERT: &[(&str, &str)] = &[
    ("save", ""),
    ("hz", "10"),
    ("loglevel", "notice"),
    ("tcp-keepalive", "300"),
    ("lazyfree-lazy-user-flush", "no"),
    ("lazyfree-lazy-user-del", "no"),
    ("appendonly", ""),
    ("latency-tracking", "no"),
    ("slowlog-log-slower-than", "10000"),
    ("slowlog-max-len", "128"),
    ("notify-keyspace-events", ""),
    ("busy-reply-threshold", "5000"),
    ("lua-time-limit", "5000"),
];

const IMMUTABLE: &[&str] = &[
    "databases",
    "port",
    "bind",
    "dir",
    "daemonize",
    "enable-debug-command",
    "io-threads",
    "appendfsync",
    "appendonly",
];

/// Every parameter CONFIG GET knows, with its current value.
pub fn config_params(sh: &Shared) -> Vec<(String, String)> {
    let d = sh.dynamic.lock().unwrap().clone();
    let mut v: Vec<(String, String)> = Vec::new();
    for name in xstreams_core::base::config::CONFIG_NAMES {
        v.push((
            name.to_string(),
            sh.store.config_get(name).unwrap_or_default(),
        ));
    }
    let yn = |b: bool| if b { "yes" } else { "no" }.to_string();
    let addrs = sh.listeners.lock().unwrap().clone();
    let port = addrs.first().map_or(sh.cfg.port, |a| a.port());
    let dir = match &sh.cfg.dir {
        Some(d) => d.display().to_string(),
        None => std::env::current_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    };
    v.push(("appendfsync".into(), sh.cfg.appendfsync.name().into()));
    v.push(("databases".into(), sh.cfg.databases.to_string()));
    v.push(("port".into(), port.to_string()));
    v.push(("bind".into(), sh.cfg.bind.join(" ")));
    v.push(("dir".into(), dir));
    v.push(("daemonize".into(), "no".into()));
    v.push(("io-threads".into(), "1".into()));
    v.push((
        "enable-debug-command".into(),
        sh.cfg.enable_debug_command.name().into(),
    ));
    v.push(("protected-mode".into(), yn(d.protected_mode)));
    v.push((
        "requirepass".into(),
        d.requirepass.clone().unwrap_or_default(),
    ));
    v.push(("maxclients".into(), d.maxclients.to_string()));
    v.push((
        "proto-max-bulk-len".into(),
        d.proto_max_bulk_len.to_string(),
    ));
    v.push((
        "client-query-buffer-limit".into(),
        d.client_query_buffer_limit.to_string(),
    ));
    v.push(("timeout".into(), d.timeout.to_string()));
    v.push((
        "client-output-buffer-limit".into(),
        format!(
            "normal {} {} {} {OTHER_CLASSES}",
            d.output_limit.hard, d.output_limit.soft, d.output_limit.soft_seconds
        ),
    ));
    let stored = sh.inert.lock().unwrap();
    for (name, default) in INERT {
        let value = if *name == "appendonly" {
            yn(sh.store.is_durable())
        } else {
            stored
                .get(*name)
                .cloned()
                .unwrap_or_else(|| default.to_string())
        };
        if !v.iter().any(|(n, _)| n == name) {
            v.push((name.to_string(), value));
        }
    }
    v
}

/// The replica and pub/sub classes of `client-output-buffer-limit` CONFIG GET reports
/// (redis-server's defaults; this server has neither kind of client).
const OTHER_CLASSES: &str = "slave 268435456 67108864 60 pubsub 33554432 8388608 60";

/// `client-output-buffer-limit "<class> <hard> <soft> <seconds> [...]"`: the normal
/// class is kept; replica and pub/sub triples are checked and ignored.
fn parse_output_limit(v: &str) -> Result<OutputLimit, String> {
    let words: Vec<&str> = v.split_whitespace().collect();
    if words.is_empty() || !words.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut limit = None;
    for w in words.chunks(4) {
        let class = w[0].to_ascii_lowercase();
        if !matches!(class.as_str(), "normal" | "slave" | "replica" | "pubsub") {
            return Err("Invalid client class specified in buffer limit configuration.".into());
        }
        let hard = xstreams_core::base::config::parse_memory(w[1]);
        let soft = xstreams_core::base::config::parse_memory(w[2]);
        let secs = xstreams_core::base::num::string2ll(w[3].as_bytes()).filter(|s| *s >= 0);
        let (Some(hard), Some(soft), Some(secs)) = (hard, soft, secs) else {
            return Err(
                "Error in hard, soft or soft_seconds setting in buffer limit configuration.".into(),
            );
        };
        if class == "normal" {
            limit = Some(OutputLimit {
                hard,
                soft,
                soft_seconds: secs as u64,
            });
        }
    }
    Ok(limit.unwrap_or_default())
}

fn parse_yes_no(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("argument must be 'yes' or 'no'".into()),
    }
}

fn parse_int(v: &str, lo: i64, hi: i64) -> Result<i64, String> {
    let n = xstreams_core::base::num::string2ll(v.as_bytes())
        .ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
    if n < lo || n > hi {
        return Err(format!("argument must be between {lo} and {hi} inclusive"));
    }
    Ok(n)
}

fn parse_mem(v: &str, lo: i64) -> Result<i64, String> {
    let n = xstreams_core::base::config::parse_memory(v)
        .ok_or_else(|| "argument must be a memory value".to_string())?;
    if n > i64::MAX as u64 || (n as i64) < lo {
        return Err(format!(
            "argument must be between {lo} and {} inclusive",
            i64::MAX
        ));
    }
    Ok(n as i64)
}

/// CONFIG SET name value [name value ...]: all or nothing, with redis-server's errors.
pub fn config_set(sh: &Shared, pairs: &[Vec<u8>]) -> Result<(), String> {
    let known: Vec<String> = config_params(sh).into_iter().map(|(n, _)| n).collect();
    let names = xstreams_core::base::config::check_set_names(
        pairs,
        |n| known.iter().any(|k| k == n),
        |n| IMMUTABLE.contains(&n),
    )
    .map_err(CmdError::into_line)?;
    // Validate every value before applying any.
    let fail = |name: &str, msg: String| CmdError::config_set_failed(name, &msg).into_line();
    let mut dynamic = sh.dynamic.lock().unwrap().clone();
    let mut store_sets: Vec<(String, String)> = Vec::new();
    let mut inert_sets: Vec<(String, String)> = Vec::new();
    for (name, p) in names.iter().zip(pairs.chunks(2)) {
        let value = String::from_utf8_lossy(&p[1]).into_owned();
        let r: Result<(), String> = match name.as_str() {
            n if xstreams_core::base::config::CONFIG_NAMES.contains(&n) => {
                let mut c = xstreams_core::Config::default();
                c.set(n, &value)
                    .map(|_| store_sets.push((n.to_string(), value.clone())))
                    .map_err(|e| e.reason())
            }
            "protected-mode" => parse_yes_no(&value).map(|b| dynamic.protected_mode = b),
            "requirepass" => {
                dynamic.requirepass = (!value.is_empty()).then(|| value.clone());
                Ok(())
            }
            "maxclients" => parse_int(&value, 1, i64::MAX).map(|n| dynamic.maxclients = n as usize),
            "proto-max-bulk-len" => {
                parse_mem(&value, 1024 * 1024).map(|n| dynamic.proto_max_bulk_len = n)
            }
            "client-query-buffer-limit" => {
                parse_mem(&value, 1024 * 1024).map(|n| dynamic.client_query_buffer_limit = n as u64)
            }
            "timeout" => parse_int(&value, 0, i32::MAX as i64).map(|n| dynamic.timeout = n as u64),
            "client-output-buffer-limit" => {
                parse_output_limit(&value).map(|l| dynamic.output_limit = l)
            }
            n => {
                inert_sets.push((n.to_string(), value.clone()));
                Ok(())
            }
        };
        r.map_err(|m| fail(&String::from_utf8_lossy(&p[0]), m))?;
    }
    for (n, v) in store_sets {
        sh.store
            .config_set(&n, &v)
            .map_err(|e| e.to_cmd_error(&n).into_line())?;
    }
    sh.proto_max_bulk_len
        .store(dynamic.proto_max_bulk_len, Ordering::Relaxed);
    sh.query_buffer_limit
        .store(dynamic.client_query_buffer_limit, Ordering::Relaxed);
    sh.limits.set(&dynamic);
    *sh.dynamic.lock().unwrap() = dynamic;
    let mut stored = sh.inert.lock().unwrap();
    for (n, v) in inert_sets {
        stored.insert(n, v);
    }
    Ok(())
}
