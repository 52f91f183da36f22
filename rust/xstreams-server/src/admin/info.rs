//! INFO and its sections, with redis-server's field names.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use xstreams_core::memory;

use crate::session::Session;
use crate::state::Shared;

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
    maxmemory: u64,
}

/// Keyspace figures. Key counts and expiry figures are exact; the data-set size is the
/// engine's own accounting (`xstreams_core::memory`), walked only when INFO memory asks.
fn keyspace_stats(sh: &Shared, with_memory: bool) -> KeyspaceStats {
    let now = sh.store.now_ms();
    sh.store.with_keyspace(|ks| {
        let mut dbs = Vec::new();
        for db in &ks.dbs {
            let (mut expires, mut ttl_sum) = (0usize, 0i64);
            let keys = db.len();
            for (_, e) in db.entries_in_order() {
                if let Some(t) = e.expire_at {
                    expires += 1;
                    ttl_sum += (t - now).max(0);
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
            dataset_bytes: if with_memory {
                memory::dataset_bytes(ks)
            } else {
                0
            },
            maxmemory: ks.config.maxmemory,
        }
    })
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
pub fn info(conn: &Session, args: &[Vec<u8>]) -> String {
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
        let used = ks.dataset_bytes + memory::BASE_OVERHEAD;
        let peak = sh.peak_memory.fetch_max(used, Ordering::Relaxed).max(used);
        let sys = total_system_memory();
        let body = format!(
            "used_memory:{used}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\n\
             used_memory_rss_human:{}\r\nused_memory_peak:{peak}\r\nused_memory_peak_human:{}\r\n\
             used_memory_dataset:{}\r\ntotal_system_memory:{sys}\r\n\
             total_system_memory_human:{}\r\nmaxmemory:{}\r\nmaxmemory_human:{}\r\n\
             maxmemory_policy:noeviction\r\nmem_fragmentation_ratio:{:.2}\r\n\
             mem_allocator:libc\r\n",
            human(used),
            human(rss),
            human(peak),
            ks.dataset_bytes,
            human(sys),
            ks.maxmemory,
            human(ks.maxmemory),
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
             client_output_buffer_limit_disconnections:{}\r\n",
            s.connections_received.load(Ordering::Relaxed),
            s.commands_processed.load(Ordering::Relaxed),
            s.instantaneous_ops(),
            s.net_input_bytes.load(Ordering::Relaxed),
            s.net_output_bytes.load(Ordering::Relaxed),
            s.rejected_connections.load(Ordering::Relaxed),
            s.error_replies.load(Ordering::Relaxed),
            s.query_buffer_limit_disconnections.load(Ordering::Relaxed),
            s.output_buffer_limit_disconnections.load(Ordering::Relaxed),
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
