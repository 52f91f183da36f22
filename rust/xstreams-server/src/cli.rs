//! Command-line options of `xstreams serve` (shared by the `xstreams-server` binary and
//! the Python entry point), in redis-server's `--name value` style.

use std::path::PathBuf;

use xstreams_core::store::persist::Fsync;

use crate::conffile::{self, Directive};
use crate::config::{DebugAccess, ServerConfig, TlsAuthClients, TlsConfig, DYNAMIC_OPTIONS};

/// Usage text.
pub const USAGE: &str = "\
Usage: xstreams serve [CONFIG_FILE] [options]

Serve an xstreams store over the Redis protocol (RESP2/RESP3).

CONFIG_FILE is in redis.conf's format: one `name value` directive a line, with the
option names below (without `--`); options given after it override it.

Options (redis-server's names; `--name value` or `--name=value`):
  --port PORT                 TCP port (default 6379)
  --bind ADDR [ADDR ...]      addresses to listen on (default 127.0.0.1)
  --tls-port PORT             also (or, with --port 0, only) serve TLS on PORT
  --tls-cert-file PATH, --tls-key-file PATH
                              the server's certificate chain and key (PEM)
  --tls-ca-cert-file PATH     CAs of client certificates (PEM)
  --tls-auth-clients yes|no|optional
                              require client certificates (default yes)
  --dir PATH                  durable store directory (the directory Store(path) uses);
                              without it the data lives in memory only
  --appendfsync always|everysec|no
                              when the log is flushed to disk (default everysec)
  --requirepass PASSWORD      require AUTH (the default user's password)
  --protected-mode yes|no     refuse non-loopback addresses without a password
                              (default yes)
  --databases N               number of databases SELECT accepts, 1-16 (default 16)
  --maxclients N              maximum connected clients (default 10000)
  --maxmemory BYTES           refuse commands that may grow memory (XADD, SET, ...)
                              once the data passes BYTES (20mb, 1gb; 0 = no limit)
  --maxmemory-policy noeviction
                              the only policy (xstreams never evicts keys)
  --timeout SECONDS           close clients idle that long (default 0 = never)
  --client-output-buffer-limit normal HARD SOFT SECONDS
                              disconnect clients whose unsent replies pass HARD bytes,
                              or stay above SOFT bytes for SECONDS (default 0 0 0:
                              none; the server then stops reading from a client that
                              does not read its replies)
  --client-query-buffer-limit BYTES
                              disconnect clients whose unparsed requests pass BYTES
                              (default 1gb)
  --proto-max-bulk-len BYTES  largest bulk string a request may carry (default 512mb)
  --enable-debug-command no|yes|local
                              allow DEBUG (default no)
  --stream-node-max-entries N, --stream-node-max-bytes N,
  --stream-idmp-duration N, --stream-idmp-maxsize N
                              store settings
  --threads N                 event-loop worker threads (default: one per CPU)
  --loglevel notice|warning   warning: print nothing but errors
  -h, --help                  show this help
  -v, --version               show the version
";

/// What the command line asks for.
#[derive(Debug)]
pub enum Action {
    Serve(Box<ServerConfig>),
    Help,
    Version,
}

fn yes_no(name: &str, v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(format!("--{name}: argument must be 'yes' or 'no'")),
    }
}

fn number<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, String> {
    v.parse::<T>()
        .map_err(|_| format!("--{name}: '{v}' is not a valid number"))
}

/// Split the command line into directives (`--name value ...`, `--name=value`); help
/// and version requests come back as the action.
fn cli_directives(args: &[String]) -> Result<Result<Vec<Directive>, Action>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-h" || a == "--help" {
            return Ok(Err(Action::Help));
        }
        if a == "-v" || a == "--version" {
            return Ok(Err(Action::Version));
        }
        let Some(opt) = a.strip_prefix("--") else {
            return Err(format!(
                "unexpected argument '{a}' (a configuration file comes first: \
                 xstreams serve FILE [--name value ...])"
            ));
        };
        let (name, inline) = match opt.split_once('=') {
            Some((n, v)) => (n.to_ascii_lowercase(), Some(v.to_string())),
            None => (opt.to_ascii_lowercase(), None),
        };
        i += 1;
        // Every option takes one value, except --bind (several) and flag-like ones.
        let mut values: Vec<String> = Vec::new();
        if let Some(v) = inline {
            values.push(v);
        } else if name != "quiet" {
            while i < args.len() && !(args[i].starts_with("--") && args[i].len() > 2) {
                values.push(args[i].clone());
                i += 1;
                if name != "bind" && name != "client-output-buffer-limit" {
                    break;
                }
            }
        }
        out.push(Directive {
            name,
            values,
            origin: None,
        });
    }
    Ok(Ok(out))
}

/// Parse the arguments after `serve` (without the program name): an optional
/// configuration file in redis.conf's format first (see [`crate::conffile`]), then
/// `--name value` options, which override the file's directives.
pub fn parse(args: &[String]) -> Result<Action, String> {
    let mut directives = Vec::new();
    let mut config_file = None;
    let mut rest = args;
    if let Some(first) = args.first().filter(|a| !a.starts_with('-')) {
        let path = PathBuf::from(first);
        directives = conffile::read(&path)?;
        config_file = Some(path);
        rest = &args[1..];
    }
    match cli_directives(rest)? {
        Ok(d) => directives.extend(d),
        Err(action) => return Ok(action),
    }
    let mut cfg = apply(&directives)?;
    cfg.config_file = config_file;
    Ok(Action::Serve(Box::new(cfg)))
}

/// The configuration the directives describe, in order (a later one wins).
fn apply(directives: &[Directive]) -> Result<ServerConfig, String> {
    let mut cfg = ServerConfig::default();
    let mut bind: Option<Vec<String>> = None;
    let mut tls_port: Option<u16> = None;
    let (mut tls_cert, mut tls_key, mut tls_ca) = (None, None, None);
    let mut tls_auth = TlsAuthClients::Yes;
    for d in directives {
        let at = |e: String| match &d.origin {
            Some(o) => format!("{o}: {e}"),
            None => e,
        };
        apply_one(
            &mut cfg,
            d,
            &mut bind,
            &mut tls_port,
            (&mut tls_cert, &mut tls_key, &mut tls_ca),
            &mut tls_auth,
        )
        .map_err(at)?;
    }
    if let Some(b) = bind {
        cfg.bind = b;
    }
    // As redis-server: `--port 0` beside `--tls-port` listens on no plain TCP port
    // (without TLS it keeps meaning "any free port", as it always did here).
    cfg.tcp = !(cfg.port == 0 && tls_port.is_some_and(|p| p != 0));
    if let Some(port) = tls_port.filter(|p| *p != 0) {
        let (Some(cert_file), Some(key_file)) = (tls_cert, tls_key) else {
            return Err("--tls-port needs --tls-cert-file and --tls-key-file".into());
        };
        cfg.tls = Some(TlsConfig {
            port,
            cert_file,
            key_file,
            ca_cert_file: tls_ca,
            auth_clients: tls_auth,
        });
    }
    Ok(cfg)
}

type TlsFiles<'a> = (
    &'a mut Option<PathBuf>,
    &'a mut Option<PathBuf>,
    &'a mut Option<PathBuf>,
);

fn apply_one(
    cfg: &mut ServerConfig,
    d: &Directive,
    bind: &mut Option<Vec<String>>,
    tls_port: &mut Option<u16>,
    (tls_cert, tls_key, tls_ca): TlsFiles<'_>,
    tls_auth: &mut TlsAuthClients,
) -> Result<(), String> {
    let name = &d.name;
    let values = &d.values;
    if name == "quiet" && values.is_empty() {
        cfg.verbose = false;
        return Ok(());
    }
    let one = |values: &[String]| -> Result<String, String> {
        match values {
            [v] => Ok(v.clone()),
            [] => Err(format!("--{name} needs a value")),
            _ => Err(format!("--{name} takes one value")),
        }
    };
    match name.as_str() {
        "port" => cfg.port = number("port", &one(values)?)?,
        "tls-port" => *tls_port = Some(number("tls-port", &one(values)?)?),
        "tls-cert-file" => *tls_cert = Some(PathBuf::from(one(values)?)),
        "tls-key-file" => *tls_key = Some(PathBuf::from(one(values)?)),
        "tls-ca-cert-file" => *tls_ca = Some(PathBuf::from(one(values)?)),
        "tls-auth-clients" => {
            *tls_auth = TlsAuthClients::parse(&one(values)?)
                .ok_or_else(|| "--tls-auth-clients must be yes, no or optional".to_string())?
        }
        "bind" => {
            let mut v: Vec<String> = Vec::new();
            for x in values.iter() {
                v.extend(x.split_whitespace().map(str::to_string));
            }
            if v.is_empty() {
                return Err("--bind needs at least one address".into());
            }
            bind.get_or_insert_with(Vec::new).extend(v);
        }
        "dir" => {
            let d = one(values)?;
            cfg.dir = if d.is_empty() {
                None
            } else {
                Some(PathBuf::from(d))
            };
        }
        "appendfsync" => {
            let v = one(values)?;
            cfg.appendfsync = Fsync::parse(&v)
                .ok_or_else(|| "--appendfsync must be always, everysec or no".to_string())?;
        }
        "requirepass" => {
            let v = one(values)?;
            cfg.requirepass = (!v.is_empty()).then_some(v);
        }
        "protected-mode" => cfg.protected_mode = yes_no(name, &one(values)?)?,
        "databases" => cfg.databases = number("databases", &one(values)?)?,
        "maxclients" => cfg.maxclients = number("maxclients", &one(values)?)?,
        "threads" | "io-threads" => cfg.threads = number(name, &one(values)?)?,
        "enable-debug-command" => {
            let v = one(values)?;
            cfg.enable_debug_command = DebugAccess::parse(&v)
                .ok_or_else(|| "--enable-debug-command must be no, yes or local".to_string())?;
        }
        "loglevel" => {
            let v = one(values)?.to_ascii_lowercase();
            cfg.verbose = !matches!(v.as_str(), "warning" | "nothing");
        }
        "appendonly" | "save" => {
            // Accepted for compatibility with redis-server command lines: a store
            // with --dir is always logged; there are no RDB snapshots to schedule.
        }
        n if DYNAMIC_OPTIONS.contains(&n) => {
            if values.is_empty() {
                return Err(format!("--{n} needs a value"));
            }
            cfg.dynamic_config.push((n.to_string(), values.join(" ")));
        }
        n if xstreams_core::base::config::CONFIG_NAMES.contains(&n) => {
            let v = one(values)?;
            xstreams_core::Config::default()
                .set(n, &v)
                .map_err(|e| format!("--{n}: {e}"))?;
            cfg.store_config.push((n.to_string(), v));
        }
        _ => return Err(format!("unknown option --{name} (see --help)")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<ServerConfig, String> {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&v)? {
            Action::Serve(c) => Ok(*c),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options() {
        let c = p(&[
            "--port",
            "7000",
            "--bind",
            "127.0.0.1",
            "::1",
            "--dir=/tmp/x",
            "--appendfsync",
            "always",
            "--requirepass",
            "pw",
            "--databases",
            "4",
            "--stream-node-max-entries",
            "5",
        ])
        .unwrap();
        assert_eq!(c.port, 7000);
        assert_eq!(c.bind, vec!["127.0.0.1", "::1"]);
        assert_eq!(c.dir, Some(PathBuf::from("/tmp/x")));
        assert_eq!(c.appendfsync, Fsync::Always);
        assert_eq!(c.requirepass.as_deref(), Some("pw"));
        assert_eq!(c.databases, 4);
        assert_eq!(
            c.store_config,
            vec![("stream-node-max-entries".into(), "5".into())]
        );
        assert!(p(&["--appendfsync", "sometimes"]).is_err());
        assert!(p(&["--stream-idmp-duration", "0"]).is_err());
        assert!(p(&["--nope", "1"]).is_err());
        assert!(p(&["/no/such/redis.conf"]).is_err());
        assert!(p(&["--port", "1", "redis.conf"]).is_err());
        assert_eq!(p(&["--bind", "127.0.0.1 ::1"]).unwrap().bind.len(), 2);
    }

    #[test]
    fn limits() {
        let c = p(&[
            "--maxmemory",
            "20mb",
            "--client-output-buffer-limit",
            "normal",
            "1mb",
            "512kb",
            "10",
            "--timeout",
            "30",
        ])
        .unwrap();
        assert_eq!(c.store_config, vec![("maxmemory".into(), "20mb".into())]);
        assert_eq!(
            c.dynamic_config,
            vec![
                (
                    "client-output-buffer-limit".into(),
                    "normal 1mb 512kb 10".into()
                ),
                ("timeout".into(), "30".into()),
            ]
        );
        assert!(p(&["--maxmemory", "lots"]).is_err());
        assert!(p(&["--maxmemory-policy", "allkeys-lru"]).is_err());
    }

    #[test]
    fn tls() {
        let c = p(&[
            "--port",
            "0",
            "--tls-port",
            "6380",
            "--tls-cert-file",
            "s.crt",
            "--tls-key-file",
            "s.key",
            "--tls-ca-cert-file",
            "ca.crt",
            "--tls-auth-clients",
            "optional",
        ])
        .unwrap();
        assert!(!c.tcp);
        let tls = c.tls.unwrap();
        assert_eq!(tls.port, 6380);
        assert_eq!(tls.auth_clients, TlsAuthClients::Optional);
        assert_eq!(tls.ca_cert_file, Some(PathBuf::from("ca.crt")));
        assert!(p(&["--port", "0"]).unwrap().tcp);
        assert!(p(&["--tls-port", "6380"]).is_err());
        assert!(p(&["--tls-port", "1", "--tls-auth-clients", "maybe"]).is_err());
        assert!(p(&[]).unwrap().tcp);
    }

    /// The `tls-*` settings and the rest from a file in redis.conf's format, options
    /// after it overriding it.
    #[test]
    fn config_file() {
        let dir = std::env::temp_dir().join(format!("xstreams-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("redis.conf");
        std::fs::write(
            &file,
            "port 0\ntls-port 6380\ntls-cert-file \"/certs/server.crt\"\n\
             tls-key-file /certs/server.key\ntls-ca-cert-file /certs/ca.crt\n\
             tls-auth-clients optional\nmaxmemory 20mb\nbind 127.0.0.1 ::1\n",
        )
        .unwrap();
        let f = file.display().to_string();
        let c = p(&[&f, "--tls-port", "6390"]).unwrap();
        assert!(!c.tcp);
        assert_eq!(c.config_file.as_deref(), Some(file.as_path()));
        let tls = c.tls.unwrap();
        assert_eq!(tls.port, 6390);
        assert_eq!(tls.cert_file, PathBuf::from("/certs/server.crt"));
        assert_eq!(tls.ca_cert_file, Some(PathBuf::from("/certs/ca.crt")));
        assert_eq!(tls.auth_clients, TlsAuthClients::Optional);
        assert_eq!(c.bind, vec!["127.0.0.1", "::1"]);
        assert_eq!(c.store_config, vec![("maxmemory".into(), "20mb".into())]);
        std::fs::write(&file, "port 1\ntls-auth-clients maybe\n").unwrap();
        let e = p(&[&f]).unwrap_err();
        assert!(
            e.contains("redis.conf:2") && e.contains("tls-auth-clients"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
