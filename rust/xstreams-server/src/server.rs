//! The top of the crate: open the store, bind the listeners, run the accept loop (one
//! [`crate::conn`] task per client), and shut down.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr, TcpListener as StdListener};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tokio_rustls::TlsAcceptor;
use xstreams_core::store::persist::{Fsync, Options};
use xstreams_core::{Config, Store};

use crate::admin::config_set;
use crate::commit::Committer;
use crate::config::{Dynamic, OutputLimit, ServerConfig, ServerError};
use crate::conn;
use crate::errors::{self, PROTECTED_MODE_ERROR};
use crate::state::{
    stopped, BlockingKeys, ClientFields, ClientHandle, CmdStat, Shared, Stats, UnblockCell,
};

/// Is `addr` a loopback address (or a wildcard that includes only loopback)?
fn is_loopback_bind(addr: &str) -> bool {
    let a = addr.trim_start_matches('-');
    if a.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match a.trim_matches(|c| c == '[' || c == ']').parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => false,
    }
}

fn random_hex40() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::with_capacity(40);
    let mut i = 0u64;
    while out.len() < 40 {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        out.push_str(&format!("{:016x}", h.finish()));
        i += 1;
    }
    out.truncate(40);
    out
}

/// A running server.
pub struct ServerHandle {
    shared: Arc<Shared>,
    addrs: Vec<SocketAddr>,
    thread: Option<std::thread::JoinHandle<()>>,
    done: Arc<(Mutex<bool>, Condvar)>,
}

impl ServerHandle {
    /// The addresses the server listens on.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Stop accepting, close every connection, flush and close the store.
    pub fn shutdown(&self) {
        self.shared.request_shutdown();
    }

    /// Wait up to `d` for the server to stop; true once it has.
    pub fn wait_timeout(&self, d: Duration) -> bool {
        let (m, cv) = &*self.done;
        let guard = m.lock().unwrap();
        let (guard, _) = cv.wait_timeout_while(guard, d, |done| !*done).unwrap();
        *guard
    }

    /// Wait for the server to stop. Returns why it stopped by itself, if it did (a
    /// failed fsync with `appendfsync always`); `None` after a shutdown.
    pub fn join(mut self) -> Option<String> {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.shared.fatal.lock().unwrap().clone()
    }

    /// The store the server runs on.
    pub fn store(&self) -> &Store {
        &self.shared.store
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.shared.request_shutdown();
            let _ = t.join();
        }
    }
}

/// Protected mode: refuse to listen on a non-loopback address without a password.
pub fn check_protected(cfg: &ServerConfig) -> Result<(), ServerError> {
    if !cfg.protected_mode || cfg.requirepass.is_some() {
        return Ok(());
    }
    if let Some(a) = cfg.bind.iter().find(|a| !is_loopback_bind(a)) {
        return Err(ServerError(format!(
            "Refusing to listen on '{a}': protected mode is enabled and no password is set for \
             the default user. In this mode connections are only accepted from the loopback \
             interface (as redis-server's protected mode does). Set a password with \
             --requirepass, or start with '--protected-mode no' if the network is trusted."
        )));
    }
    Ok(())
}

/// Open the store the server runs on.
fn open_store(cfg: &ServerConfig) -> Result<Store, ServerError> {
    for (n, v) in &cfg.store_config {
        Config::default()
            .set(n, v)
            .map_err(|e| ServerError(format!("invalid setting {n}={v}: {e}")))?;
    }
    match &cfg.dir {
        None => {
            let mut c = Config::default();
            for (n, v) in &cfg.store_config {
                c.set(n, v).map_err(|e| ServerError(e.to_string()))?;
            }
            Ok(Store::new(c))
        }
        Some(dir) => {
            let opts = Options {
                fsync: cfg.appendfsync,
                // With `always`, replies wait for one fsync per group of clients
                // (`conn::write_out`), not one per write under the store lock.
                group_commit: cfg.appendfsync == Fsync::Always,
                config_overrides: cfg.store_config.clone(),
                disk: cfg.disk.clone(),
                ..Options::default()
            };
            let (store, report) = Store::open(dir, Config::default(), opts)
                .map_err(|e| ServerError(format!("cannot open {}: {e}", dir.display())))?;
            if cfg.verbose {
                eprintln!(
                    "{} * DB loaded from {}: {} commands replayed{}",
                    std::process::id(),
                    dir.display(),
                    report.commands,
                    if report.truncated.is_empty() {
                        String::new()
                    } else {
                        format!(", {} truncated log(s)", report.truncated.len())
                    }
                );
            }
            Ok(store)
        }
    }
}

/// The listening sockets: plain TCP on `port` (unless turned off), TLS on `tls-port`;
/// `true` marks a TLS one.
fn bind_all(cfg: &ServerConfig) -> Result<Vec<(StdListener, bool)>, ServerError> {
    let mut out = Vec::new();
    if cfg.tcp {
        for l in bind_port(cfg, cfg.port)? {
            out.push((l, false));
        }
    }
    if let Some(tls) = &cfg.tls {
        for l in bind_port(cfg, tls.port)? {
            out.push((l, true));
        }
    }
    if out.is_empty() {
        return Err(ServerError(
            "Configured to not listen anywhere, exiting.".into(),
        ));
    }
    Ok(out)
}

fn bind_port(cfg: &ServerConfig, port: u16) -> Result<Vec<StdListener>, ServerError> {
    let mut out = Vec::new();
    for a in &cfg.bind {
        let optional = a.starts_with('-');
        let host = a.trim_start_matches('-');
        let host = if host == "*" { "0.0.0.0" } else { host };
        let host = host.trim_matches(|c| c == '[' || c == ']');
        let addr = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        match StdListener::bind(&addr) {
            Ok(l) => {
                l.set_nonblocking(true)
                    .map_err(|e| ServerError(format!("{addr}: {e}")))?;
                out.push(l);
            }
            Err(e) if optional => {
                if cfg.verbose {
                    eprintln!(
                        "{} # Skipping optional bind {addr}: {e}",
                        std::process::id()
                    );
                }
            }
            Err(e) => {
                return Err(ServerError(format!(
                    "Warning: Could not create server TCP listening socket {addr}: {e}"
                )))
            }
        }
    }
    if out.is_empty() {
        return Err(ServerError("no address to listen on".into()));
    }
    Ok(out)
}

/// Start a server: open the store, bind, and serve on a background thread.
pub fn start(cfg: ServerConfig) -> Result<ServerHandle, ServerError> {
    if cfg.databases == 0 || cfg.databases > xstreams_core::keyspace::db::NUM_DBS {
        return Err(ServerError(format!(
            "databases must be between 1 and {} (the number of databases of an xstreams store)",
            xstreams_core::keyspace::db::NUM_DBS
        )));
    }
    check_protected(&cfg)?;
    let listeners = bind_all(&cfg)?;
    let addrs: Vec<SocketAddr> = listeners
        .iter()
        .filter_map(|(l, _)| l.local_addr().ok())
        .collect();
    let acceptor = cfg.tls.as_ref().map(crate::tls::acceptor).transpose()?;
    let store = open_store(&cfg)?;
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    rt.enable_all()
        .thread_name("xstreams-serve")
        .max_blocking_threads(cfg.maxclients.clamp(64, 4096));
    if cfg.threads > 0 {
        rt.worker_threads(cfg.threads);
    }
    let rt = rt
        .build()
        .map_err(|e| ServerError(format!("cannot start the event loop: {e}")))?;
    let (tx, _rx) = watch::channel(false);
    let now_ms = xstreams_core::base::clock::system_now_ms();
    let commit = match (&cfg.dir, cfg.appendfsync) {
        (Some(_), Fsync::Always) => Some(
            Committer::start(store.clone())
                .map_err(|e| ServerError(format!("cannot start the commit thread: {e}")))?,
        ),
        _ => None,
    };
    let shared = Arc::new(Shared {
        store,
        commit,
        dynamic: Mutex::new(Dynamic {
            requirepass: cfg.requirepass.clone(),
            protected_mode: cfg.protected_mode,
            maxclients: cfg.maxclients,
            proto_max_bulk_len: crate::resp::DEFAULT_MAX_BULK_LEN,
            client_query_buffer_limit: 1024 * 1024 * 1024,
            timeout: 0,
            output_limit: OutputLimit::default(),
        }),
        cfg,
        stats: Stats {
            cmdstats: Mutex::new(vec![
                CmdStat::default();
                xstreams_core::command::table::slot_count()
            ]),
            ..Stats::default()
        },
        clients: Mutex::new(BTreeMap::new()),
        next_client_id: AtomicU64::new(1),
        connected: AtomicUsize::new(0),
        blocked_clients: AtomicUsize::new(0),
        blocking_keys: Mutex::new(BlockingKeys::default()),
        shutdown: tx,
        started: Instant::now(),
        run_id: random_hex40(),
        listeners: Mutex::new(addrs.clone()),
        last_save_unix: AtomicI64::new(now_ms / 1000),
        fatal: Mutex::new(None),
        peak_memory: AtomicU64::new(0),
        inert: Mutex::new(HashMap::new()),
        exec_gate: RwLock::new(()),
        proto_max_bulk_len: AtomicI64::new(crate::resp::DEFAULT_MAX_BULK_LEN),
        limits: Default::default(),
        query_buffer_limit: AtomicU64::new(1024 * 1024 * 1024),
    });
    if !shared.cfg.dynamic_config.is_empty() {
        let pairs: Vec<Vec<u8>> = shared
            .cfg
            .dynamic_config
            .iter()
            .flat_map(|(n, v)| [n.clone().into_bytes(), v.clone().into_bytes()])
            .collect();
        config_set(&shared, &pairs).map_err(ServerError)?;
    }
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let sh = shared.clone();
    let done2 = done.clone();
    let thread = std::thread::Builder::new()
        .name("xstreams-serve-main".into())
        .spawn(move || {
            rt.block_on(serve(sh.clone(), listeners, acceptor));
            // Let blocked waiters notice the shutdown, then release the runtime.
            rt.shutdown_timeout(Duration::from_secs(2));
            if let Some(c) = &sh.commit {
                c.stop();
            }
            sh.store.close();
            sh.log("DB saved on disk. Redis is now ready to exit, bye bye...");
            let (m, cv) = &*done2;
            *m.lock().unwrap() = true;
            cv.notify_all();
        })
        .map_err(|e| ServerError(format!("cannot start the server thread: {e}")))?;
    for a in &addrs {
        shared.log(&format!("Ready to accept connections tcp {a}"));
    }
    Ok(ServerHandle {
        shared,
        addrs,
        thread: Some(thread),
        done,
    })
}

#[cfg(unix)]
async fn terminate_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending::<()>().await,
    }
}

#[cfg(not(unix))]
async fn terminate_signal() {
    std::future::pending::<()>().await
}

async fn serve(
    shared: Arc<Shared>,
    listeners: Vec<(StdListener, bool)>,
    acceptor: Option<TlsAcceptor>,
) {
    let mut rx = shared.shutdown.subscribe();
    let mut tasks = tokio::task::JoinSet::new();
    for (l, tls) in listeners {
        let l = match TcpListener::from_std(l) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("listener: {e}");
                shared.request_shutdown();
                continue;
            }
        };
        let sh = shared.clone();
        let tls = if tls { acceptor.clone() } else { None };
        tasks.spawn(accept_loop(sh, l, tls));
    }
    if shared.cfg.handle_signals {
        let sh = shared.clone();
        tasks.spawn(async move {
            let mut rx = sh.shutdown.subscribe();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {
                    sh.log("Received SIGINT scheduling shutdown...");
                }
                _ = terminate_signal() => {
                    sh.log("Received SIGTERM scheduling shutdown...");
                }
                _ = stopped(&mut rx) => {}
            }
            sh.request_shutdown();
        });
    }
    // Ten times a second, as redis-server's cron at hz 10: ops/sec samples, the memory
    // peak, and the active expiry of keys no command touches.
    {
        let sh = shared.clone();
        tasks.spawn(async move {
            let mut rx = sh.shutdown.subscribe();
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            loop {
                tokio::select! {
                    _ = tick.tick() => {
                        sh.stats.sample();
                        let sh = sh.clone();
                        let _ = tokio::task::spawn_blocking(move || {
                            let _step = sh.step();
                            sh.store.cron()
                        })
                        .await;
                    }
                    _ = stopped(&mut rx) => break,
                }
            }
        });
    }
    let _ = stopped(&mut rx).await;
    shared.log("User requested shutdown...");
    // Connections see the same signal; give them a moment to flush their replies.
    let deadline = Instant::now() + Duration::from_secs(2);
    while shared.connected.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
}

async fn accept_loop(shared: Arc<Shared>, listener: TcpListener, tls: Option<TlsAcceptor>) {
    let mut rx = shared.shutdown.subscribe();
    let laddr = listener.local_addr().ok();
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = stopped(&mut rx) => return,
        };
        let (sock, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                // EMFILE and friends: back off briefly instead of spinning.
                shared.log(&format!("Accepting client connection: {e}"));
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        shared
            .stats
            .connections_received
            .fetch_add(1, Ordering::Relaxed);
        let laddr = sock.local_addr().ok().or(laddr);
        let sh = shared.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let _ = sock.set_nodelay(true);
            match tls {
                None => {
                    let (rd, wr) = sock.into_split();
                    accept_one(sh, rd, wr, peer, laddr).await;
                }
                Some(acceptor) => {
                    let hs = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(sock)).await;
                    match hs {
                        Ok(Ok(s)) => {
                            let (rd, wr) = tokio::io::split(s);
                            accept_one(sh, rd, wr, peer, laddr).await;
                        }
                        Ok(Err(e)) => sh.log(&format!(
                            "Error accepting a client connection: {e} (addr={peer})"
                        )),
                        Err(_) => sh.log(&format!(
                            "Error accepting a client connection: TLS handshake timed out (addr={peer})"
                        )),
                    }
                }
            }
        });
    }
}

/// How long a TLS client may take to complete its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

async fn accept_one<R, W>(
    shared: Arc<Shared>,
    rd: R,
    mut sock: W,
    peer: SocketAddr,
    laddr: Option<SocketAddr>,
) where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    use tokio::io::AsyncWriteExt;
    let dynamic = shared.dynamic();
    // redis-server: maxclients first, then protected mode.
    if shared.connected.load(Ordering::SeqCst) >= dynamic.maxclients {
        let _ = sock.write_all(errors::MAX_CLIENTS_LINE).await;
        let _ = sock.shutdown().await;
        shared
            .stats
            .rejected_connections
            .fetch_add(1, Ordering::Relaxed);
        return;
    }
    if dynamic.protected_mode && dynamic.requirepass.is_none() && !peer.ip().is_loopback() {
        let _ = sock.write_all(PROTECTED_MODE_ERROR.as_bytes()).await;
        let _ = sock.shutdown().await;
        shared
            .stats
            .rejected_connections
            .fetch_add(1, Ordering::Relaxed);
        return;
    }
    let id = shared.next_client_id.fetch_add(1, Ordering::Relaxed);
    let handle = Arc::new(ClientHandle {
        id,
        addr: peer,
        laddr: laddr.unwrap_or(peer),
        created: Instant::now(),
        fields: Mutex::new(ClientFields {
            resp: 2,
            multi: -1,
            last_cmd: "NULL".into(),
            ..Default::default()
        }),
        blocked: AtomicBool::new(false),
        unblock: UnblockCell::default(),
        killed: AtomicBool::new(false),
        kill: Notify::new(),
        commands: AtomicU64::new(0),
        net_in: AtomicU64::new(0),
        net_out: AtomicU64::new(0),
        last_interaction_ms: AtomicU64::new(shared.started.elapsed().as_millis() as u64),
    });
    shared.connected.fetch_add(1, Ordering::SeqCst);
    shared.clients.lock().unwrap().insert(id, handle.clone());
    conn::run(shared.clone(), handle, rd, sock).await;
    shared.clients.lock().unwrap().remove(&id);
    shared.connected.fetch_sub(1, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_binds() {
        assert!(is_loopback_bind("127.0.0.1"));
        assert!(is_loopback_bind("::1"));
        assert!(is_loopback_bind("-::1"));
        assert!(is_loopback_bind("localhost"));
        assert!(!is_loopback_bind("0.0.0.0"));
        assert!(!is_loopback_bind("*"));
        assert!(!is_loopback_bind("10.1.2.3"));
    }

    #[test]
    fn protected_mode_refuses_public_bind() {
        let cfg = ServerConfig {
            bind: vec!["0.0.0.0".into()],
            ..Default::default()
        };
        assert!(check_protected(&cfg).is_err());
        let cfg = ServerConfig {
            bind: vec!["0.0.0.0".into()],
            requirepass: Some("pw".into()),
            ..Default::default()
        };
        assert!(check_protected(&cfg).is_ok());
        let cfg = ServerConfig {
            bind: vec!["0.0.0.0".into()],
            protected_mode: false,
            ..Default::default()
        };
        assert!(check_protected(&cfg).is_ok());
    }
}
