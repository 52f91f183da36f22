//! INFO and its sections, with redis-server's field names: the engine's sections come
//! from `xstreams_core::keyspace::info` (the embedded store answers INFO with the same builders);
//! this module adds what only the server knows (connections, listeners, statistics).

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use xstreams_core::keyspace::info::{self as core_info, push_section as section, Wanted};

use crate::session::Session;

/// The INFO text for the requested sections (default, `all`, `everything`, or names).
pub fn info(conn: &Session, args: &[Vec<u8>]) -> String {
    let sh = &conn.sh;
    let wanted = Wanted::parse(args);
    let has = |name: &str| wanted.has(name);
    let mut out = String::new();
    let ks = if has("memory") || has("keyspace") || has("stats") {
        let now = sh.store.now_ms();
        Some(
            sh.store
                .with_keyspace(|ks| core_info::KeyspaceFigures::of(ks, now, has("memory"))),
        )
    } else {
        None
    };
    if has("server") {
        let up = sh.started.elapsed().as_secs();
        let addrs = sh.listeners.lock().unwrap().clone();
        let f = core_info::ServerFields {
            run_id: Some(sh.run_id.clone()),
            tcp_port: Some(addrs.first().map_or(sh.cfg.port, |a| a.port())),
            uptime_secs: Some(up),
            config_file: sh
                .cfg
                .config_file
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            listeners: addrs
                .iter()
                .map(|a| format!("name=tcp,bind={},port={}", a.ip(), a.port()))
                .collect(),
            multiplexing_api: "tokio",
        };
        section(&mut out, "Server", &core_info::server_section(&f));
    }
    if has("clients") {
        let bk = sh.blocking_keys.lock().unwrap();
        let (watching, watched_keys) = sh.store.watch_stats();
        let c = core_info::ClientFigures {
            connected: sh.connected.load(Ordering::SeqCst),
            maxclients: Some(sh.dynamic.lock().unwrap().maxclients),
            blocked: sh.blocked_clients.load(Ordering::SeqCst),
            in_timeout_table: sh.blocked_clients.load(Ordering::SeqCst),
            blocking_keys: bk.keys.len(),
            blocking_keys_on_nokey: bk.keys.values().filter(|(_, n)| *n > 0).count(),
            watching,
            watched_keys,
        };
        drop(bk);
        section(&mut out, "Clients", &core_info::clients_section(&c));
    }
    if let (true, Some(k)) = (has("memory"), &ks) {
        let used = k.used_memory();
        let peak = sh.peak_memory.fetch_max(used, Ordering::Relaxed).max(used);
        section(
            &mut out,
            "Memory",
            &core_info::memory_section(k, Some(peak)),
        );
    }
    if has("persistence") {
        let body = core_info::persistence_section(
            sh.store.dirty(),
            Some(sh.last_save_unix.load(Ordering::Relaxed)),
            sh.store.is_durable(),
            sh.store.log_writes().is_some_and(|w| w.failed.is_some()),
        );
        section(&mut out, "Persistence", &body);
    }
    if has("stats") {
        let s = &sh.stats;
        let body = format!(
            "total_connections_received:{}\r\ntotal_commands_processed:{}\r\n\
             instantaneous_ops_per_sec:{}\r\ntotal_net_input_bytes:{}\r\n\
             total_net_output_bytes:{}\r\nrejected_connections:{}\r\nexpired_keys:{}\r\nexpired_keys_active:{}\r\n\
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
            ks.as_ref().map_or(0, |k| k.expired_keys),
            ks.as_ref().map_or(0, |k| k.expired_keys_active),
            s.error_replies.load(Ordering::Relaxed),
            s.query_buffer_limit_disconnections.load(Ordering::Relaxed),
            s.output_buffer_limit_disconnections.load(Ordering::Relaxed),
        );
        section(&mut out, "Stats", &body);
    }
    if has("replication") {
        section(
            &mut out,
            "Replication",
            &core_info::replication_section(&sh.run_id),
        );
    }
    if has("cpu") {
        section(&mut out, "CPU", &core_info::cpu_section());
    }
    if has("modules") {
        section(&mut out, "Modules", "");
    }
    if has("commandstats") && wanted.explicit {
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
        section(&mut out, "Commandstats", &body);
    }
    if has("errorstats") {
        let mut body = String::new();
        for (code, n) in sh.stats.errorstats.lock().unwrap().iter() {
            let _ = write!(body, "errorstat_{code}:count={n}\r\n");
        }
        section(&mut out, "Errorstats", &body);
    }
    if has("cluster") {
        section(&mut out, "Cluster", "cluster_enabled:0\r\n");
    }
    if let (true, Some(k)) = (has("keyspace"), &ks) {
        section(
            &mut out,
            "Keyspace",
            &core_info::keyspace_section(k, sh.cfg.databases),
        );
    }
    out
}
