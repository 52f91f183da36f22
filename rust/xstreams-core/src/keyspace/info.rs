//! INFO's text, laid out as redis-server lays it out: which sections a call asks for, and
//! the sections both the embedded store and the RESP server fill from what the engine
//! knows (server identity, memory from the engine's accounting, persistence, CPU,
//! keyspace). The server adds what only it knows (connections, listeners, command
//! statistics) through the same builders ([`ServerFields`], [`ClientFigures`]).
//!
//! Field names, their order and the `# Title` / `name:value` / CRLF layout are
//! redis-server 8.8's; a field the engine cannot know is left out rather than made up.

use std::fmt::Write as _;

use crate::keyspace::db::Keyspace;
use crate::keyspace::memory;

/// The Redis version xstreams implements (INFO's `redis_version`, HELLO's `version`).
pub const REDIS_VERSION: &str = "8.8.0";

/// Sections INFO without arguments (and `default`) returns, in redis-server's order.
pub const DEFAULT_SECTIONS: &[&str] = &[
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

/// The sections an INFO call asks for (`args` without the command name).
#[derive(Clone, Debug)]
pub struct Wanted {
    names: Vec<String>,
    /// Any section was named (`commandstats` is only listed when asked for by name,
    /// `all` or `everything`).
    pub explicit: bool,
}

impl Wanted {
    /// Parse INFO's arguments: none or `default` (the default sections), `all` and
    /// `everything` (the default ones and `commandstats`), or section names (any case).
    pub fn parse<A: AsRef<[u8]>>(args: &[A]) -> Wanted {
        let mut names: Vec<String> = Vec::new();
        let defaults = |names: &mut Vec<String>| {
            names.extend(DEFAULT_SECTIONS.iter().map(|s| s.to_string()));
        };
        if args.is_empty() {
            defaults(&mut names);
        }
        for a in args {
            let s = String::from_utf8_lossy(a.as_ref()).to_ascii_lowercase();
            match s.as_str() {
                "default" => defaults(&mut names),
                "all" | "everything" => {
                    defaults(&mut names);
                    names.push("commandstats".into());
                }
                _ => names.push(s),
            }
        }
        Wanted {
            names,
            explicit: !args.is_empty(),
        }
    }

    /// Is section `name` (lower case) wanted?
    pub fn has(&self, name: &str) -> bool {
        self.names.iter().any(|w| w == name)
    }
}

/// Append a section (`# Title` and its body) to INFO's text, a blank line between
/// sections.
pub fn push_section(out: &mut String, title: &str, body: &str) {
    if !out.is_empty() {
        out.push_str("\r\n");
    }
    let _ = write!(out, "# {title}\r\n{body}");
}

/// A byte count as redis-server's `bytesToHuman` shows it (`1.00M`).
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    const K: f64 = 1024.0;
    if b < K {
        format!("{bytes}B")
    } else if b < K * K {
        format!("{:.2}K", b / K)
    } else if b < K * K * K {
        format!("{:.2}M", b / (K * K))
    } else {
        format!("{:.2}G", b / (K * K * K))
    }
}

/// Resident set size of this process, from /proc (0 where unavailable).
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// The machine's memory, from /proc (0 where unavailable).
pub fn total_system_memory() -> u64 {
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
pub fn cpu_times() -> (f64, f64) {
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

/// Figures of one database for INFO keyspace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DbFigures {
    pub keys: usize,
    /// Keys with an expiry.
    pub expires: usize,
    /// Average time to live of those keys at the time of the call, in ms.
    pub avg_ttl: i64,
}

/// What INFO's memory and keyspace sections show, taken from the keyspace at once.
#[derive(Clone, Debug, Default)]
pub struct KeyspaceFigures {
    pub dbs: Vec<DbFigures>,
    /// The data set's bytes by the engine's accounting (`None`: not walked).
    pub dataset_bytes: Option<u64>,
    pub maxmemory: u64,
    pub maxmemory_policy: &'static str,
    /// Keys removed by expiry since the store opened (INFO stats' `expired_keys`).
    pub expired_keys: u64,
    /// Those the active expiry removed (`expired_keys_active`).
    pub expired_keys_active: u64,
}

impl KeyspaceFigures {
    /// Read the figures at `now`; the data set is walked only `with_memory`.
    pub fn of(ks: &Keyspace, now: i64, with_memory: bool) -> KeyspaceFigures {
        let dbs = ks
            .dbs
            .iter()
            .map(|db| {
                let (expires, avg_ttl) = db.expiry_stats(now);
                DbFigures {
                    keys: db.len(),
                    expires,
                    avg_ttl,
                }
            })
            .collect();
        KeyspaceFigures {
            dbs,
            dataset_bytes: with_memory.then(|| memory::dataset_bytes(ks)),
            maxmemory: ks.config.maxmemory,
            maxmemory_policy: ks.config.maxmemory_policy.name(),
            expired_keys: ks.dbs.iter().map(|d| d.expired).sum(),
            expired_keys_active: ks.dbs.iter().map(|d| d.expired_active).sum(),
        }
    }

    /// `used_memory`: the data set plus the fixed overhead ([`memory::BASE_OVERHEAD`]).
    pub fn used_memory(&self) -> u64 {
        self.dataset_bytes.unwrap_or(0) + memory::BASE_OVERHEAD
    }
}

/// What the server section says beyond the engine's own identity.
#[derive(Clone, Debug, Default)]
pub struct ServerFields {
    pub run_id: Option<String>,
    pub tcp_port: Option<u16>,
    pub uptime_secs: Option<u64>,
    /// The configuration file the server was started with (empty: none).
    pub config_file: String,
    /// `listener<i>` values (`name=tcp,bind=...,port=...`).
    pub listeners: Vec<String>,
    pub multiplexing_api: &'static str,
}

/// INFO server.
pub fn server_section(f: &ServerFields) -> String {
    let mut b = String::new();
    let now_ms = crate::base::clock::system_now_ms();
    let _ = write!(
        b,
        "redis_version:{REDIS_VERSION}\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\n\
         redis_build_id:0\r\nredis_mode:standalone\r\nos:{} {}\r\narch_bits:{}\r\n\
         monotonic_clock:POSIX clock_gettime\r\nmultiplexing_api:{}\r\n\
         atomicvar_api:c11-builtin\r\ngcc_version:0.0.0\r\nprocess_id:{}\r\n\
         process_supervised:no\r\n",
        std::env::consts::OS,
        std::env::consts::ARCH,
        usize::BITS,
        f.multiplexing_api,
        std::process::id(),
    );
    if let Some(id) = &f.run_id {
        let _ = write!(b, "run_id:{id}\r\n");
    }
    if let Some(p) = f.tcp_port {
        let _ = write!(b, "tcp_port:{p}\r\n");
    }
    let _ = write!(b, "server_time_usec:{}\r\n", now_ms * 1000);
    if let Some(up) = f.uptime_secs {
        let _ = write!(
            b,
            "uptime_in_seconds:{up}\r\nuptime_in_days:{}\r\n",
            up / 86400
        );
    }
    let _ = write!(
        b,
        "hz:10\r\nconfigured_hz:10\r\nlru_clock:{}\r\nexecutable:{}\r\nconfig_file:{}\r\n\
         io_threads_active:0\r\n",
        (now_ms / 1000) & ((1 << 24) - 1),
        std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        f.config_file,
    );
    for (i, l) in f.listeners.iter().enumerate() {
        let _ = write!(b, "listener{i}:{l}\r\n");
    }
    let _ = write!(b, "xstreams_version:{}\r\n", env!("CARGO_PKG_VERSION"));
    b
}

/// What the clients section counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientFigures {
    pub connected: usize,
    /// `maxclients` (`None`: no connection limit to report, the embedded store).
    pub maxclients: Option<usize>,
    pub blocked: usize,
    pub in_timeout_table: usize,
    pub blocking_keys: usize,
    pub blocking_keys_on_nokey: usize,
    /// Watchers with watched keys (connections, or `Watch` handles) and the keys they
    /// watch ([`Keyspace::watch_stats`]).
    pub watching: usize,
    pub watched_keys: usize,
}

/// INFO clients.
pub fn clients_section(c: &ClientFigures) -> String {
    let mut b = format!(
        "connected_clients:{}\r\ncluster_connections:0\r\n",
        c.connected
    );
    if let Some(m) = c.maxclients {
        let _ = write!(b, "maxclients:{m}\r\n");
    }
    let _ = write!(
        b,
        "client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\n\
         blocked_clients:{}\r\ntracking_clients:0\r\npubsub_clients:0\r\n\
         watching_clients:{}\r\nclients_in_timeout_table:{}\r\ntotal_watched_keys:{}\r\n\
         total_blocking_keys:{}\r\ntotal_blocking_keys_on_nokey:{}\r\n",
        c.blocked,
        c.watching,
        c.in_timeout_table,
        c.watched_keys,
        c.blocking_keys,
        c.blocking_keys_on_nokey,
    );
    b
}

/// INFO memory: `used_memory` from the engine's accounting, `rss` from the process,
/// `peak` the highest `used_memory` seen (when tracked).
pub fn memory_section(k: &KeyspaceFigures, peak: Option<u64>) -> String {
    let used = k.used_memory();
    let rss = rss_bytes();
    let sys = total_system_memory();
    let mut b = format!(
        "used_memory:{used}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\n\
         used_memory_rss_human:{}\r\n",
        human_bytes(used),
        human_bytes(rss),
    );
    if let Some(peak) = peak {
        let _ = write!(
            b,
            "used_memory_peak:{peak}\r\nused_memory_peak_human:{}\r\n",
            human_bytes(peak)
        );
    }
    let _ = write!(
        b,
        "used_memory_dataset:{}\r\ntotal_system_memory:{sys}\r\n\
         total_system_memory_human:{}\r\nmaxmemory:{}\r\nmaxmemory_human:{}\r\n\
         maxmemory_policy:{}\r\nmem_fragmentation_ratio:{:.2}\r\nmem_allocator:libc\r\n",
        k.dataset_bytes.unwrap_or(0),
        human_bytes(sys),
        k.maxmemory,
        human_bytes(k.maxmemory),
        k.maxmemory_policy,
        if used > 0 {
            rss as f64 / used as f64
        } else {
            0.0
        },
    );
    b
}

/// INFO persistence: `dirty` changes since the store was opened or last compacted,
/// the time of the last save when known, whether commands are logged and whether the
/// log stopped taking writes (a failed write or fsync: `aof_last_write_status:err`).
pub fn persistence_section(
    dirty: u64,
    last_save_unix: Option<i64>,
    durable: bool,
    log_failed: bool,
) -> String {
    let mut b = format!(
        "loading:0\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\n\
         current_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\n\
         current_save_keys_total:0\r\nrdb_changes_since_last_save:{dirty}\r\n\
         rdb_bgsave_in_progress:0\r\n"
    );
    if let Some(t) = last_save_unix {
        let _ = write!(b, "rdb_last_save_time:{t}\r\n");
    }
    let _ = write!(
        b,
        "rdb_last_bgsave_status:ok\r\naof_enabled:{}\r\naof_rewrite_in_progress:0\r\n\
         aof_rewrite_scheduled:0\r\naof_last_bgrewrite_status:ok\r\n\
         aof_last_write_status:{}\r\n",
        u8::from(durable),
        if log_failed { "err" } else { "ok" },
    );
    b
}

/// INFO replication of a primary without replicas (`replid`: the run ID).
pub fn replication_section(replid: &str) -> String {
    format!(
        "role:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\n\
         master_replid:{replid}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n\
         master_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\n\
         repl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\n\
         repl_backlog_histlen:0\r\n"
    )
}

/// INFO cpu, from the process's own times.
pub fn cpu_section() -> String {
    let (user, sys) = cpu_times();
    format!(
        "used_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\nused_cpu_sys_children:0.000000\r\n\
         used_cpu_user_children:0.000000\r\n"
    )
}

/// INFO keyspace: one `dbN:keys=..,expires=..,avg_ttl=..,subexpiry=0` line per non-empty
/// database below `databases`. `avg_ttl` is the exact average over the keys with an
/// expiry at the time of the call (redis-server keeps a running estimate sampled by its
/// active expiry, which converges to the same figure).
pub fn keyspace_section(k: &KeyspaceFigures, databases: usize) -> String {
    let mut b = String::new();
    for (i, d) in k.dbs.iter().enumerate().take(databases) {
        if d.keys > 0 {
            let _ = write!(
                b,
                "db{i}:keys={},expires={},avg_ttl={},subexpiry=0\r\n",
                d.keys, d.expires, d.avg_ttl
            );
        }
    }
    b
}

/// What an embedded store knows of itself beyond its keyspace, for INFO.
#[derive(Clone, Copy, Debug, Default)]
pub struct StoreFacts {
    /// Changes since the store was opened or last compacted.
    pub dirty: u64,
    /// Callers waiting in a blocking read.
    pub blocked_clients: usize,
}

/// The INFO text of the embedded store (no connections, no server statistics): the
/// sections of `wanted` it can fill from the keyspace `ks` at `now`; `log_failed`: the
/// log of a `durable` store stopped taking writes.
pub fn store_info(
    ks: &Keyspace,
    now: i64,
    wanted: &Wanted,
    facts: StoreFacts,
    durable: bool,
    log_failed: bool,
) -> String {
    let figures = (wanted.has("memory") || wanted.has("keyspace"))
        .then(|| KeyspaceFigures::of(ks, now, wanted.has("memory")));
    let mut out = String::new();
    if wanted.has("server") {
        let f = ServerFields {
            multiplexing_api: "none",
            ..ServerFields::default()
        };
        push_section(&mut out, "Server", &server_section(&f));
    }
    if wanted.has("clients") {
        let (watching, watched_keys) = ks.watch_stats();
        let c = ClientFigures {
            blocked: facts.blocked_clients,
            watching,
            watched_keys,
            ..ClientFigures::default()
        };
        push_section(&mut out, "Clients", &clients_section(&c));
    }
    if let (true, Some(k)) = (wanted.has("memory"), &figures) {
        push_section(&mut out, "Memory", &memory_section(k, None));
    }
    if wanted.has("persistence") {
        push_section(
            &mut out,
            "Persistence",
            &persistence_section(facts.dirty, None, durable, log_failed),
        );
    }
    if wanted.has("cpu") {
        push_section(&mut out, "CPU", &cpu_section());
    }
    if wanted.has("modules") {
        push_section(&mut out, "Modules", "");
    }
    if wanted.has("cluster") {
        push_section(&mut out, "Cluster", "cluster_enabled:0\r\n");
    }
    if let (true, Some(k)) = (wanted.has("keyspace"), &figures) {
        push_section(&mut out, "Keyspace", &keyspace_section(k, ks.dbs.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::config::Config;
    use crate::keyspace::db::Value;

    #[test]
    fn wanted_sections() {
        let w = Wanted::parse::<&[u8]>(&[]);
        assert!(w.has("keyspace") && !w.has("commandstats") && !w.explicit);
        let w = Wanted::parse(&[b"KeySpace".as_slice()]);
        assert!(w.has("keyspace") && !w.has("server") && w.explicit);
        let w = Wanted::parse(&[b"everything".as_slice()]);
        assert!(w.has("commandstats") && w.has("cpu"));
    }

    #[test]
    fn human() {
        assert_eq!(human_bytes(1023), "1023B");
        assert_eq!(human_bytes(1024 * 1024), "1.00M");
        assert_eq!(human_bytes(1536), "1.50K");
    }

    #[test]
    fn keyspace_lines_count_expires_and_average_ttl() {
        let mut ks = Keyspace::new(Config::default());
        ks.dbs[0].set(b"a", Value::Str(b"1".to_vec()), None);
        ks.dbs[0].set(b"b", Value::Str(b"1".to_vec()), Some(11_000));
        ks.dbs[0].set(b"c", Value::Str(b"1".to_vec()), Some(21_000));
        ks.dbs[3].set(b"d", Value::Str(b"1".to_vec()), None);
        let k = KeyspaceFigures::of(&ks, 1_000, false);
        assert_eq!(
            keyspace_section(&k, 16),
            "db0:keys=3,expires=2,avg_ttl=15000,subexpiry=0\r\n\
             db3:keys=1,expires=0,avg_ttl=0,subexpiry=0\r\n"
        );
        let text = store_info(
            &ks,
            1_000,
            &Wanted::parse::<&[u8]>(&[]),
            StoreFacts::default(),
            false,
            false,
        );
        assert!(text.starts_with("# Server\r\nredis_version:8.8.0\r\n"));
        assert!(text.contains("\r\n\r\n# Keyspace\r\ndb0:keys=3"));
        assert!(text.contains("# Memory\r\nused_memory:"));
        assert!(text.contains("aof_enabled:0\r\n"));
    }
}
