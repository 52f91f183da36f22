//! State shared by every connection: the store, the dynamic settings, statistics,
//! the connected clients as others see them (CLIENT LIST/KILL/UNBLOCK), and the keys
//! blocked clients wait on. Depends only on [`crate::config`].

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

use tokio::sync::{watch, Notify};
use xstreams_core::Store;

use crate::commit::Committer;

use crate::config::{Dynamic, OutputLimit, ServerConfig};

/// Server-wide counters (INFO stats).
#[derive(Default)]
pub struct Stats {
    pub connections_received: AtomicU64,
    pub commands_processed: AtomicU64,
    pub net_input_bytes: AtomicU64,
    pub net_output_bytes: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub error_replies: AtomicU64,
    pub query_buffer_limit_disconnections: AtomicU64,
    pub output_buffer_limit_disconnections: AtomicU64,
    pub errorstats: Mutex<BTreeMap<String, u64>>,
    /// Per command slot (see `table::slot_name`).
    pub cmdstats: Mutex<Vec<CmdStat>>,
    /// Ops/sec samples (INFO instantaneous_ops_per_sec).
    pub ops_samples: Mutex<OpsSamples>,
}

#[derive(Default)]
pub struct OpsSamples {
    pub last_count: u64,
    pub last_at: Option<Instant>,
    pub samples: [u64; 16],
    pub idx: usize,
}

impl Stats {
    pub fn reset(&self) {
        for a in [
            &self.connections_received,
            &self.commands_processed,
            &self.net_input_bytes,
            &self.net_output_bytes,
            &self.rejected_connections,
            &self.error_replies,
            &self.query_buffer_limit_disconnections,
            &self.output_buffer_limit_disconnections,
        ] {
            a.store(0, Ordering::Relaxed);
        }
        self.errorstats.lock().unwrap().clear();
        for c in self.cmdstats.lock().unwrap().iter_mut() {
            *c = CmdStat::default();
        }
        *self.ops_samples.lock().unwrap() = OpsSamples::default();
    }

    /// Count one of the server's own error lines by its code (INFO errorstats).
    pub fn error(&self, line: &[u8]) {
        let code = line.split(|&b| b == b' ').next().unwrap_or_default();
        self.error_code(&String::from_utf8_lossy(code));
    }

    /// Count an error reply of code `code` (INFO errorstats).
    pub fn error_code(&self, code: &str) {
        self.error_replies.fetch_add(1, Ordering::Relaxed);
        let mut m = self.errorstats.lock().unwrap();
        if m.len() < 128 || m.contains_key(code) {
            *m.entry(code.to_owned()).or_insert(0) += 1;
        }
    }

    pub fn sample(&self) {
        let now = Instant::now();
        let count = self.commands_processed.load(Ordering::Relaxed);
        let mut s = self.ops_samples.lock().unwrap();
        if let Some(at) = s.last_at {
            let ms = now.duration_since(at).as_millis().max(1) as u64;
            let ops = count.saturating_sub(s.last_count) * 1000 / ms;
            let i = s.idx;
            s.samples[i] = ops;
            s.idx = (i + 1) % 16;
        }
        s.last_at = Some(now);
        s.last_count = count;
    }

    pub fn instantaneous_ops(&self) -> u64 {
        let s = self.ops_samples.lock().unwrap();
        s.samples.iter().sum::<u64>() / 16
    }
}

/// Counters of one command (INFO commandstats).
#[derive(Clone, Copy, Debug, Default)]
pub struct CmdStat {
    pub calls: u64,
    pub usec: u64,
    pub rejected: u64,
    pub failed: u64,
}

impl CmdStat {
    pub fn add(&mut self, o: &CmdStat) {
        self.calls += o.calls;
        self.usec += o.usec;
        self.rejected += o.rejected;
        self.failed += o.failed;
    }
}

/// Mutable per-client fields shown by CLIENT LIST / INFO.
#[derive(Clone, Debug, Default)]
pub struct ClientFields {
    pub name: Vec<u8>,
    pub lib_name: Vec<u8>,
    pub lib_ver: Vec<u8>,
    pub db: usize,
    pub resp: u8,
    pub multi: i64,
    pub last_cmd: String,
    pub no_evict: bool,
    pub no_touch: bool,
    /// The connection's watched keys (count) and their dirty flag (CLIENT LIST's
    /// `watch=` and `d` flag).
    pub watched: Option<(usize, Arc<AtomicBool>)>,
}

/// How CLIENT UNBLOCK ends a blocked call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Unblock {
    /// Not asked to unblock.
    None = 0,
    /// As if the timeout expired.
    Timeout = 1,
    /// With an `-UNBLOCKED` error.
    Error = 2,
}

/// An [`Unblock`] request other connections can set.
#[derive(Default)]
pub struct UnblockCell(AtomicU8);

impl UnblockCell {
    pub fn set(&self, u: Unblock) {
        self.0.store(u as u8, Ordering::SeqCst);
    }

    /// The request, cleared.
    pub fn take(&self) -> Unblock {
        match self.0.swap(Unblock::None as u8, Ordering::SeqCst) {
            1 => Unblock::Timeout,
            2 => Unblock::Error,
            _ => Unblock::None,
        }
    }
}

/// A connected client as other connections see it.
pub struct ClientHandle {
    pub id: u64,
    pub addr: SocketAddr,
    pub laddr: SocketAddr,
    pub created: Instant,
    pub fields: Mutex<ClientFields>,
    pub blocked: AtomicBool,
    pub unblock: UnblockCell,
    pub killed: AtomicBool,
    pub kill: Notify,
    /// Counters shown by CLIENT LIST (tot-cmds, tot-net-in, tot-net-out).
    pub commands: AtomicU64,
    pub net_in: AtomicU64,
    pub net_out: AtomicU64,
    /// Milliseconds since the server started, at the last command (idle=).
    pub last_interaction_ms: AtomicU64,
}

/// Keys that blocked clients wait on (INFO clients: total_blocking_keys...).
#[derive(Default)]
pub struct BlockingKeys {
    /// (db, key) -> (clients, clients that want to be unblocked if the key is deleted)
    pub keys: HashMap<(usize, Vec<u8>), (usize, usize)>,
}

/// State shared by every connection.
pub struct Shared {
    pub store: Store,
    pub cfg: ServerConfig,
    pub dynamic: Mutex<Dynamic>,
    pub stats: Stats,
    pub clients: Mutex<BTreeMap<u64, Arc<ClientHandle>>>,
    pub next_client_id: AtomicU64,
    pub connected: AtomicUsize,
    pub blocked_clients: AtomicUsize,
    pub blocking_keys: Mutex<BlockingKeys>,
    pub shutdown: watch::Sender<bool>,
    pub started: Instant,
    pub run_id: String,
    pub listeners: Mutex<Vec<SocketAddr>>,
    pub last_save_unix: AtomicI64,
    /// With `appendfsync always` on a durable store: replies wait for it.
    pub commit: Option<Committer>,
    /// Why the server stopped by itself (a failed fsync with `appendfsync always`).
    pub fatal: Mutex<Option<String>>,
    pub peak_memory: AtomicU64,
    /// `proto-max-bulk-len` and `client-query-buffer-limit`, read on every request.
    pub proto_max_bulk_len: AtomicI64,
    pub query_buffer_limit: AtomicU64,
    /// `timeout` and `client-output-buffer-limit`, read by every connection.
    pub limits: LiveLimits,
    /// Values of parameters CONFIG SET accepts without effect.
    pub inert: Mutex<HashMap<String, String>>,
    /// What makes an EXEC one step, as redis-server's event loop does: every command
    /// and the cron's expiry run holding it shared; an EXEC whose queue has to run in
    /// parts (a connection-level command in it locks the store itself: INFO, CONFIG,
    /// SAVE…) holds it alone, so no other client's command runs between its parts.
    pub exec_gate: RwLock<()>,
}

impl Shared {
    /// A share of [`Shared::exec_gate`]: held while one command (or the cron) runs.
    pub fn step(&self) -> RwLockReadGuard<'_, ()> {
        self.exec_gate.read().unwrap_or_else(|e| e.into_inner())
    }

    /// [`Shared::exec_gate`] alone: held while an EXEC run in parts runs.
    pub fn exclusive_step(&self) -> RwLockWriteGuard<'_, ()> {
        self.exec_gate.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn dynamic(&self) -> Dynamic {
        self.dynamic.lock().unwrap().clone()
    }

    pub fn auth_configured(&self) -> bool {
        self.dynamic.lock().unwrap().requirepass.is_some()
    }

    /// Ask every task to stop.
    pub fn request_shutdown(&self) {
        let _ = self.shutdown.send(true);
    }

    /// Stop because serving on would be wrong (`why` is logged and becomes the
    /// server's exit error).
    pub fn fail(&self, why: String) {
        let mut fatal = self.fatal.lock().unwrap();
        if fatal.is_none() {
            eprintln!("{} # {why}", std::process::id());
            *fatal = Some(why);
        }
        drop(fatal);
        self.request_shutdown();
    }

    pub fn log(&self, msg: &str) {
        if self.cfg.verbose {
            eprintln!("{} * {msg}", std::process::id());
        }
    }

    /// Count a client blocking on (`delta` 1) or leaving (`delta` -1) `keys` of `db`.
    pub fn register_block(&self, db: usize, keys: &[Vec<u8>], nokey: bool, delta: isize) {
        let sh = self;
        // The count changes under the keys' lock, which INFO holds while it reads both:
        // a reader never sees a blocked client without its keys.
        let mut bk = sh.blocking_keys.lock().unwrap();
        if delta > 0 {
            sh.blocked_clients.fetch_add(1, Ordering::SeqCst);
        } else {
            sh.blocked_clients.fetch_sub(1, Ordering::SeqCst);
        }
        let mut seen: Vec<&Vec<u8>> = Vec::new();
        for k in keys {
            if seen.contains(&k) {
                continue;
            }
            seen.push(k);
            let e = bk.keys.entry((db, k.clone())).or_insert((0, 0));
            if delta > 0 {
                e.0 += 1;
                if nokey {
                    e.1 += 1;
                }
            } else {
                e.0 = e.0.saturating_sub(1);
                if nokey {
                    e.1 = e.1.saturating_sub(1);
                }
            }
            if e.0 == 0 {
                bk.keys.remove(&(db, k.clone()));
            }
        }
    }
}

/// Resolves once shutdown has been requested.
pub async fn stopped(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|v| *v).await;
}

/// The limits connections check on every read and write, without a lock.
#[derive(Default)]
pub struct LiveLimits {
    timeout_secs: AtomicU64,
    out_hard: AtomicU64,
    out_soft: AtomicU64,
    out_soft_secs: AtomicU64,
}

impl LiveLimits {
    pub fn set(&self, d: &Dynamic) {
        self.timeout_secs.store(d.timeout, Ordering::Relaxed);
        self.out_hard.store(d.output_limit.hard, Ordering::Relaxed);
        self.out_soft.store(d.output_limit.soft, Ordering::Relaxed);
        self.out_soft_secs
            .store(d.output_limit.soft_seconds, Ordering::Relaxed);
    }

    /// Idle seconds before a client is closed (0 = never).
    pub fn timeout_secs(&self) -> u64 {
        self.timeout_secs.load(Ordering::Relaxed)
    }

    pub fn output(&self) -> OutputLimit {
        OutputLimit {
            hard: self.out_hard.load(Ordering::Relaxed),
            soft: self.out_soft.load(Ordering::Relaxed),
            soft_seconds: self.out_soft_secs.load(Ordering::Relaxed),
        }
    }
}
