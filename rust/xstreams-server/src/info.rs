//! INFO sections, CLIENT LIST lines and the CONFIG GET / SET parameter table, with
//! redis-server's field and parameter names.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use xstreams_core::db::Value;

use crate::conn::Conn;
use crate::server::{ClientHandle, Shared};

fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b < 1024.0 {
        format!("{bytes}B")
    } else if b < 1024.0 * 1024.0 {
        format!("{:.2}K", b / 1024.0)
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2}M", b / (1024.0 * 1024.0))
    } else {
        format!("{:.2}G", b / (1024.0 * 1024.0 * 1024.0))
    }
}

/// Resident set size of this process, from /proc (0 where unavailable).
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn total_system_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(0)
}

/// (user, system) CPU seconds of this process, from /proc.
fn cpu_times() -> (f64, f64) {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return (0.0, 0.0);
    };
    let Some(rest) = s.rsplit(')').next() else {
        return (0.0, 0.0);
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / 100.0;
    // Fields after the command name: state is index 0, utime 11, stime 12.
    (ticks(11), ticks(12))
}

/// Keyspace figures: per database (keys, keys with expiry, average TTL ms), and the
/// approximate bytes of the data set.
struct KeyspaceStats {
    dbs: Vec<(usize, usize, i64)>,
    dataset_bytes: u64,
}

/// Keyspace figures. Key counts and expiry figures are exact; the data-set size walks
/// every stream's nodes, so it is recomputed at most once a second (`with_memory`).
fn keyspace_stats(sh: &Shared, with_memory: bool) -> KeyspaceStats {
    let now = sh.store.now_ms();
    let cached = {
        let c = sh.memory_cache.lock().unwrap();
        c.filter(|(at, _)| at.elapsed() < std::time::Duration::from_secs(1))
            .map(|(_, b)| b)
    };
    let walk_memory = with_memory && cached.is_none();
    let stats = sh.store.with_keyspace(|ks| {
        let mut dbs = Vec::new();
        let mut bytes = 0u64;
        for db in &ks.dbs {
            let (mut expires, mut ttl_sum) = (0usize, 0i64);
            let keys = db.len();
            for (k, e) in db.entries_in_order() {
                if let Some(t) = e.expire_at {
                    expires += 1;
                    ttl_sum += (t - now).max(0);
                }
                if walk_memory {
                    bytes += k.len() as u64 + 64;
                    bytes += match &e.value {
                        Value::Str(s) => s.len() as u64 + 16,
                        Value::Stream(s) => s.heap_bytes() as u64,
                    };
                }
            }
            let avg = if expires > 0 {
                ttl_sum / expires as i64
            } else {
                0
            };
            dbs.push((keys, expires, avg));
        }
        KeyspaceStats {
            dbs,
            dataset_bytes: bytes,
        }
    });
    if walk_memory {
        *sh.memory_cache.lock().unwrap() = Some((std::time::Instant::now(), stats.dataset_bytes));
        stats
    } else {
        KeyspaceStats {
            dataset_bytes: cached.unwrap_or(0),
            ..stats
        }
    }
}

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
];

/// The INFO text for the requested sections (default, `all`, `everything`, or names).
pub fn info(conn: &Conn, args: &[Vec<u8>]) -> String {
    let sh = &conn.sh;
    let mut wanted: Vec<String> = Vec::new();
    if args.is_empty() {
        wanted = DEFAULT_SECTIONS.iter().map(|s| s.to_string()).collect();
    }
    for a in args {
        let s = String::from_utf8_lossy(a).to_ascii_lowercase();
        match s.as_str() {
            "default" => wanted.extend(DEFAULT_SECTIONS.iter().map(|s| s.to_string())),
            "all" | "everything" => {
                wanted.extend(DEFAULT_SECTIONS.iter().map(|s| s.to_string()));
                wanted.push("commandstats".into());
            }
            _ => wanted.push(s),
        }
    }
    let has = |name: &str| wanted.iter().any(|w| w == name);
    let mut out = String::new();
    let section = |out: &mut String, title: &str, body: String| {
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        let _ = write!(out, "# {title}\r\n{body}");
    };
    let ks = if has("memory") || has("keyspace") {
        Some(keyspace_stats(sh, has("memory")))
    } else {
        None
    };
    if has("server") {
        let up = sh.started.elapsed().as_secs();
        let addrs = sh.listeners.lock().unwrap().clone();
        let port = addrs.first().map_or(sh.cfg.port, |a| a.port());
        let mut b = String::new();
        let _ = write!(
            b,
            "redis_version:{}\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\n\
             redis_build_id:0\r\nredis_mode:standalone\r\nos:{} {}\r\narch_bits:{}\r\n\
             monotonic_clock:POSIX clock_gettime\r\nmultiplexing_api:tokio\r\n\
             atomicvar_api:c11-builtin\r\ngcc_version:0.0.0\r\nprocess_id:{}\r\n\
             process_supervised:no\r\nrun_id:{}\r\ntcp_port:{}\r\nserver_time_usec:{}\r\n\
             uptime_in_seconds:{}\r\nuptime_in_days:{}\r\nhz:10\r\nconfigured_hz:10\r\n\
             lru_clock:{}\r\nexecutable:{}\r\nconfig_file:\r\nio_threads_active:0\r\n",
            crate::REDIS_VERSION,
            std::env::consts::OS,
            std::env::consts::ARCH,
            usize::BITS,
            std::process::id(),
            sh.run_id,
            port,
            xstreams_core::clock::system_now_ms() * 1000,
            up,
            up / 86400,
            (xstreams_core::clock::system_now_ms() / 1000) & ((1 << 24) - 1),
            std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        );
        for (i, a) in addrs.iter().enumerate() {
            let _ = write!(
                b,
                "listener{i}:name=tcp,bind={},port={}\r\n",
                a.ip(),
                a.port()
            );
        }
        let _ = write!(b, "xstreams_version:{}\r\n", env!("CARGO_PKG_VERSION"));
        section(&mut out, "Server", b);
    }
    if has("clients") {
        let bk = sh.blocking_keys.lock().unwrap();
        let nokey = bk.keys.values().filter(|(_, n)| *n > 0).count();
        let body = format!(
            "connected_clients:{}\r\ncluster_connections:0\r\nmaxclients:{}\r\n\
             client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\n\
             blocked_clients:{}\r\ntracking_clients:0\r\npubsub_clients:0\r\n\
             watching_clients:0\r\nclients_in_timeout_table:{}\r\ntotal_watched_keys:0\r\n\
             total_blocking_keys:{}\r\ntotal_blocking_keys_on_nokey:{}\r\n",
            sh.connected.load(Ordering::SeqCst),
            sh.dynamic.lock().unwrap().maxclients,
            sh.blocked_clients.load(Ordering::SeqCst),
            sh.blocked_clients.load(Ordering::SeqCst),
            bk.keys.len(),
            nokey,
        );
        drop(bk);
        section(&mut out, "Clients", body);
    }
    if has("memory") {
        let ks = ks.as_ref().expect("computed");
        let rss = rss_bytes();
        let used = ks.dataset_bytes + 1024 * 1024;
        let peak = sh.peak_memory.fetch_max(used, Ordering::Relaxed).max(used);
        let sys = total_system_memory();
        let body = format!(
            "used_memory:{used}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\n\
             used_memory_rss_human:{}\r\nused_memory_peak:{peak}\r\nused_memory_peak_human:{}\r\n\
             used_memory_dataset:{}\r\ntotal_system_memory:{sys}\r\n\
             total_system_memory_human:{}\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\n\
             maxmemory_policy:noeviction\r\nmem_fragmentation_ratio:{:.2}\r\n\
             mem_allocator:libc\r\n",
            human(used),
            human(rss),
            human(peak),
            ks.dataset_bytes,
            human(sys),
            if used > 0 {
                rss as f64 / used as f64
            } else {
                0.0
            },
        );
        section(&mut out, "Memory", body);
    }
    if has("persistence") {
        let durable = sh.store.is_durable();
        let body = format!(
            "loading:0\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\n\
             current_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\n\
             current_save_keys_total:0\r\nrdb_changes_since_last_save:{}\r\n\
             rdb_bgsave_in_progress:0\r\nrdb_last_save_time:{}\r\n\
             rdb_last_bgsave_status:ok\r\naof_enabled:{}\r\naof_rewrite_in_progress:0\r\n\
             aof_rewrite_scheduled:0\r\naof_last_bgrewrite_status:ok\r\n\
             aof_last_write_status:ok\r\n",
            sh.store.dirty(),
            sh.last_save_unix.load(Ordering::Relaxed),
            u8::from(durable),
        );
        section(&mut out, "Persistence", body);
    }
    if has("stats") {
        let s = &sh.stats;
        let body = format!(
            "total_connections_received:{}\r\ntotal_commands_processed:{}\r\n\
             instantaneous_ops_per_sec:{}\r\ntotal_net_input_bytes:{}\r\n\
             total_net_output_bytes:{}\r\nrejected_connections:{}\r\nexpired_keys:0\r\n\
             evicted_keys:0\r\nkeyspace_hits:0\r\nkeyspace_misses:0\r\npubsub_channels:0\r\n\
             pubsub_patterns:0\r\ntotal_error_replies:{}\r\nunexpected_error_replies:0\r\n\
             total_reads_processed:0\r\ntotal_writes_processed:0\r\n\
             client_query_buffer_limit_disconnections:{}\r\n\
             client_output_buffer_limit_disconnections:0\r\n",
            s.connections_received.load(Ordering::Relaxed),
            s.commands_processed.load(Ordering::Relaxed),
            s.instantaneous_ops(),
            s.net_input_bytes.load(Ordering::Relaxed),
            s.net_output_bytes.load(Ordering::Relaxed),
            s.rejected_connections.load(Ordering::Relaxed),
            s.error_replies.load(Ordering::Relaxed),
            s.query_buffer_limit_disconnections.load(Ordering::Relaxed),
        );
        section(&mut out, "Stats", body);
    }
    if has("replication") {
        let body = format!(
            "role:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\n\
             master_replid:{}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n\
             master_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\n\
             repl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\n\
             repl_backlog_histlen:0\r\n",
            sh.run_id
        );
        section(&mut out, "Replication", body);
    }
    if has("cpu") {
        let (user, sys) = cpu_times();
        let body = format!(
            "used_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\nused_cpu_sys_children:0.000000\r\n\
             used_cpu_user_children:0.000000\r\n"
        );
        section(&mut out, "CPU", body);
    }
    if has("modules") {
        section(&mut out, "Modules", String::new());
    }
    if has("commandstats") && !args.is_empty() {
        let mut body = String::new();
        for (slot, c) in sh.stats.cmdstats.lock().unwrap().iter().enumerate() {
            if c.calls + c.rejected + c.failed == 0 {
                continue;
            }
            let per = if c.calls > 0 {
                c.usec as f64 / c.calls as f64
            } else {
                0.0
            };
            let _ = write!(
                body,
                "cmdstat_{}:calls={},usec={},usec_per_call={per:.2},rejected_calls={},failed_calls={}\r\n",
                xstreams_core::command::table::slot_name(slot),
                c.calls,
                c.usec,
                c.rejected,
                c.failed
            );
        }
        section(&mut out, "Commandstats", body);
    }
    if has("errorstats") {
        let mut body = String::new();
        for (code, n) in sh.stats.errorstats.lock().unwrap().iter() {
            let _ = write!(body, "errorstat_{code}:count={n}\r\n");
        }
        section(&mut out, "Errorstats", body);
    }
    if has("cluster") {
        section(&mut out, "Cluster", "cluster_enabled:0\r\n".into());
    }
    if has("keyspace") {
        let ks = ks.as_ref().expect("computed");
        let mut body = String::new();
        for (i, (keys, expires, avg)) in ks.dbs.iter().enumerate().take(sh.cfg.databases) {
            if *keys > 0 {
                let _ = write!(
                    body,
                    "db{i}:keys={keys},expires={expires},avg_ttl={avg},subexpiry=0\r\n"
                );
            }
        }
        section(&mut out, "Keyspace", body);
    }
    out
}

/// One line of CLIENT LIST / CLIENT INFO.
pub fn client_line(sh: &Shared, c: &ClientHandle, cmd: Option<&str>) -> String {
    let f = c.fields.lock().unwrap().clone();
    let mut flags = String::new();
    if f.multi >= 0 {
        flags.push('x');
    }
    if c.blocked.load(Ordering::SeqCst) {
        flags.push('b');
    }
    if f.no_evict {
        flags.push('e');
    }
    if f.no_touch {
        flags.push('T');
    }
    if flags.is_empty() {
        flags.push('N');
    }
    format!(
        "id={} addr={} laddr={} fd=0 name={} age={} idle={} flags={flags} db={} sub=0 psub=0 \
         ssub=0 multi={} watch=0 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=16384 rbp=0 \
         obl=0 oll=0 omem=0 omem-shared=0 omem-unshared=0 tot-mem=0 events=r cmd={} \
         user=default redir=-1 resp={} lib-name={} lib-ver={} io-thread=0 tot-net-in={} \
         tot-net-out={} tot-cmds={}",
        c.id,
        c.addr,
        c.laddr,
        String::from_utf8_lossy(&f.name),
        c.created.elapsed().as_secs(),
        (sh.started.elapsed().as_millis() as u64)
            .saturating_sub(c.last_interaction_ms.load(Ordering::Relaxed))
            / 1000,
        f.db,
        f.multi,
        cmd.unwrap_or(&f.last_cmd),
        f.resp,
        String::from_utf8_lossy(&f.lib_name),
        String::from_utf8_lossy(&f.lib_ver),
        c.net_in.load(Ordering::Relaxed),
        c.net_out.load(Ordering::Relaxed),
        c.commands.load(Ordering::Relaxed),
    )
}

/// Parameters that CONFIG SET accepts and stores without effect (so harnesses that save
/// and restore the whole configuration work), with their defaults.
const INERT: &[(&str, &str)] = &[
    ("save", ""),
    ("hz", "10"),
    ("loglevel", "notice"),
    ("maxmemory", "0"),
    ("maxmemory-policy", "noeviction"),
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
    for name in xstreams_core::config::CONFIG_NAMES {
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

fn parse_yes_no(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("argument must be 'yes' or 'no'".into()),
    }
}

fn parse_int(v: &str, lo: i64, hi: i64) -> Result<i64, String> {
    let n = xstreams_core::num::string2ll(v.as_bytes())
        .ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
    if n < lo || n > hi {
        return Err(format!("argument must be between {lo} and {hi} inclusive"));
    }
    Ok(n)
}

fn parse_mem(v: &str, lo: i64) -> Result<i64, String> {
    let n = xstreams_core::config::parse_memory(v)
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
pub fn config_set(conn: &Conn, pairs: &[Vec<u8>]) -> Result<(), String> {
    let sh = &conn.sh;
    let known: Vec<String> = config_params(sh).into_iter().map(|(n, _)| n).collect();
    let mut names: Vec<String> = Vec::new();
    let mut err: Option<String> = None;
    for p in pairs.chunks(2) {
        let name = String::from_utf8_lossy(&p[0]).to_ascii_lowercase();
        if !known.contains(&name) {
            return Err(format!(
                "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                String::from_utf8_lossy(&p[0])
            ));
        }
        if err.is_none() {
            if IMMUTABLE.contains(&name.as_str()) {
                err = Some(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{}') - can't set immutable config",
                    String::from_utf8_lossy(&p[0])
                ));
            } else if names.contains(&name) {
                err = Some(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{}') - duplicate parameter",
                    String::from_utf8_lossy(&p[0])
                ));
            }
        }
        names.push(name);
    }
    if let Some(e) = err {
        return Err(e);
    }
    // Validate every value before applying any.
    let fail = |name: &str, msg: String| {
        format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {msg}")
    };
    let mut dynamic = sh.dynamic.lock().unwrap().clone();
    let mut store_sets: Vec<(String, String)> = Vec::new();
    let mut inert_sets: Vec<(String, String)> = Vec::new();
    for (name, p) in names.iter().zip(pairs.chunks(2)) {
        let value = String::from_utf8_lossy(&p[1]).into_owned();
        let r: Result<(), String> = match name.as_str() {
            n if xstreams_core::config::CONFIG_NAMES.contains(&n) => {
                let mut c = xstreams_core::Config::default();
                c.set(n, &value)
                    .map(|_| store_sets.push((n.to_string(), value.clone())))
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
            n => {
                inert_sets.push((n.to_string(), value.clone()));
                Ok(())
            }
        };
        r.map_err(|m| fail(name, m))?;
    }
    for (n, v) in store_sets {
        sh.store.config_set(&n, &v).map_err(|m| fail(&n, m))?;
    }
    sh.proto_max_bulk_len
        .store(dynamic.proto_max_bulk_len, Ordering::Relaxed);
    sh.query_buffer_limit
        .store(dynamic.client_query_buffer_limit, Ordering::Relaxed);
    *sh.dynamic.lock().unwrap() = dynamic;
    let mut stored = sh.inert.lock().unwrap();
    for (n, v) in inert_sets {
        stored.insert(n, v);
    }
    Ok(())
}
