//! What the server is started with ([`ServerConfig`]) and the settings `CONFIG SET` may
//! change while it runs ([`Dynamic`]). The bottom of the crate: it depends on nothing
//! else here.

use std::path::PathBuf;

use xstreams_core::store::persist::{Disk, Fsync};

/// Who may run `DEBUG` (redis-server's `enable-debug-command`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebugAccess {
    No,
    Yes,
    Local,
}

impl DebugAccess {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "no" => Some(DebugAccess::No),
            "yes" => Some(DebugAccess::Yes),
            "local" => Some(DebugAccess::Local),
            _ => None,
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            DebugAccess::No => "no",
            DebugAccess::Yes => "yes",
            DebugAccess::Local => "local",
        }
    }
}

/// Everything `xstreams serve` can be started with.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Addresses to listen on (default `127.0.0.1`).
    pub bind: Vec<String>,
    pub port: u16,
    /// Directory of a durable store (the same directory an embedded `Store(path)` uses);
    /// `None` keeps everything in memory.
    pub dir: Option<PathBuf>,
    pub appendfsync: Fsync,
    pub requirepass: Option<String>,
    pub protected_mode: bool,
    /// Number of databases SELECT accepts (1 to 16).
    pub databases: usize,
    pub maxclients: usize,
    pub enable_debug_command: DebugAccess,
    /// Store settings (`stream-node-max-entries`, `maxmemory`, ...), applied after
    /// loading.
    pub store_config: Vec<(String, String)>,
    /// Server settings CONFIG SET can change (`timeout`, `client-output-buffer-limit`,
    /// `client-query-buffer-limit`, `proto-max-bulk-len`), applied at start as CONFIG SET
    /// would apply them.
    pub dynamic_config: Vec<(String, String)>,
    /// Handle SIGINT / SIGTERM itself (the binary); the Python entry point handles them
    /// in Python instead.
    pub handle_signals: bool,
    /// Listen for plain TCP on `port` (`--port 0` turns it off when TLS is on).
    pub tcp: bool,
    /// TLS listeners (`--tls-port` ...), on the same `bind` addresses.
    pub tls: Option<TlsConfig>,
    /// Worker threads of the event loop (0 = one per CPU).
    pub threads: usize,
    /// Print log lines on stderr.
    pub verbose: bool,
    /// The configuration file the server was started with (INFO's `config_file`).
    pub config_file: Option<PathBuf>,
    /// The file layer of a durable store: the real file system, or a simulated disk
    /// (fault-injection tests).
    pub disk: Disk,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: vec!["127.0.0.1".into()],
            port: 6379,
            dir: None,
            appendfsync: Fsync::EverySec,
            requirepass: None,
            protected_mode: true,
            databases: xstreams_core::keyspace::db::NUM_DBS,
            maxclients: 10000,
            enable_debug_command: DebugAccess::No,
            store_config: Vec::new(),
            dynamic_config: Vec::new(),
            handle_signals: false,
            tcp: true,
            tls: None,
            threads: 0,
            verbose: true,
            config_file: None,
            disk: Disk::default(),
        }
    }
}

/// redis-server's `tls-auth-clients`: must clients present a certificate signed by
/// `tls-ca-cert-file`?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsAuthClients {
    Yes,
    No,
    Optional,
}

impl TlsAuthClients {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "yes" => Some(TlsAuthClients::Yes),
            "no" => Some(TlsAuthClients::No),
            "optional" => Some(TlsAuthClients::Optional),
            _ => None,
        }
    }
}

/// TLS listeners, under redis-server's option names.
#[derive(Clone, Debug)]
pub struct TlsConfig {
    /// `tls-port` (0 in the library API: a free port, as for `port`).
    pub port: u16,
    /// `tls-cert-file`: the server's certificate chain (PEM).
    pub cert_file: PathBuf,
    /// `tls-key-file`: its private key (PEM).
    pub key_file: PathBuf,
    /// `tls-ca-cert-file`: CAs that sign client certificates (PEM).
    pub ca_cert_file: Option<PathBuf>,
    /// `tls-auth-clients` (default `yes`, as redis-server).
    pub auth_clients: TlsAuthClients,
}

/// Why the server could not start.
#[derive(Debug)]
pub struct ServerError(pub String);

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServerError {}

/// Settings that CONFIG SET may change while the server runs.
#[derive(Clone, Debug)]
pub struct Dynamic {
    pub requirepass: Option<String>,
    pub protected_mode: bool,
    pub maxclients: usize,
    pub proto_max_bulk_len: i64,
    pub client_query_buffer_limit: u64,
    /// Seconds of inactivity after which a client is closed; 0 = never.
    pub timeout: u64,
    /// `client-output-buffer-limit` of the normal class.
    pub output_limit: OutputLimit,
}

/// Names of the settings in [`Dynamic`] that `xstreams serve` also takes as options.
pub const DYNAMIC_OPTIONS: &[&str] = &[
    "timeout",
    "client-output-buffer-limit",
    "client-query-buffer-limit",
    "proto-max-bulk-len",
];

/// redis-server's `client-output-buffer-limit` for normal clients: a client whose
/// unsent replies exceed `hard` bytes, or stay above `soft` bytes for `soft_seconds`, is
/// disconnected. 0 disables a limit (redis-server's default for normal clients is
/// `0 0 0`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputLimit {
    pub hard: u64,
    pub soft: u64,
    pub soft_seconds: u64,
}

impl OutputLimit {
    /// Is any limit set?
    pub fn enabled(&self) -> bool {
        self.hard > 0 || self.soft > 0
    }
}
