//! Store-wide settings, under the configuration names redis-server uses.

use crate::base::num::string2ll;
use crate::error::{CmdError, ConfigError, CONFIG_DUPLICATE, CONFIG_IMMUTABLE};

/// Limits of `stream-idmp-duration` (seconds) and `stream-idmp-maxsize` (entries).
pub const IDMP_MIN_DURATION: i64 = 1;
pub const IDMP_MAX_DURATION: i64 = 86_400;
pub const IDMP_MIN_MAXSIZE: i64 = 1;
pub const IDMP_MAX_MAXSIZE: i64 = 10_000;

/// Settings of a store. Defaults are redis-server's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `stream-node-max-entries`: entries (live and deleted) per node; 0 = unlimited.
    pub stream_node_max_entries: i64,
    /// `stream-node-max-bytes`: listpack bytes per node; 0 = unlimited (capped at 1 GiB).
    pub stream_node_max_bytes: u64,
    /// `stream-idmp-duration`: default IDMP duration of new streams, in seconds.
    pub stream_idmp_duration: i64,
    /// `stream-idmp-maxsize`: default IDMP map size per producer of new streams.
    pub stream_idmp_maxsize: i64,
    /// `maxmemory`: bytes of used memory (see [`crate::keyspace::memory`]) above which commands
    /// flagged `denyoom` are refused with the OOM error; 0 = no limit.
    pub maxmemory: u64,
    /// `maxmemory-policy`: only `noeviction` (the store never evicts keys).
    pub maxmemory_policy: MaxmemoryPolicy,
}

/// What happens at `maxmemory`: xstreams never evicts, so only redis-server's
/// `noeviction` exists (writes that may grow memory are refused; reads and deletes go on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MaxmemoryPolicy {
    #[default]
    NoEviction,
}

impl MaxmemoryPolicy {
    pub fn name(self) -> &'static str {
        match self {
            MaxmemoryPolicy::NoEviction => "noeviction",
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            stream_node_max_entries: 100,
            stream_node_max_bytes: 4096,
            stream_idmp_duration: 100,
            stream_idmp_maxsize: 100,
            maxmemory: 0,
            maxmemory_policy: MaxmemoryPolicy::NoEviction,
        }
    }
}

/// Names accepted by [`Config::get`] and [`Config::set`].
pub const CONFIG_NAMES: &[&str] = &[
    "stream-node-max-entries",
    "stream-node-max-bytes",
    "stream-idmp-duration",
    "stream-idmp-maxsize",
    "maxmemory",
    "maxmemory-policy",
];

/// Settings that limit a running store but are not part of its data: a durable store
/// does not log them (they come from whoever opens it).
pub const LIMIT_NAMES: &[&str] = &["maxmemory", "maxmemory-policy"];

/// The settings a durable store keeps with its data ([`CONFIG_NAMES`] but the limits).
pub fn data_names() -> impl Iterator<Item = &'static str> {
    CONFIG_NAMES
        .iter()
        .copied()
        .filter(|n| !LIMIT_NAMES.contains(n))
}

/// Parse a memory amount the way Redis's `memtoull` does (`4096`, `4kb`, `1mb`, `2gb`,
/// `1k` = 1000, case-insensitive).
pub fn parse_memory(v: &str) -> Option<u64> {
    let lower = v.to_ascii_lowercase();
    let (digits, mul): (&str, u64) = if let Some(d) = lower.strip_suffix("gb") {
        (d, 1024 * 1024 * 1024)
    } else if let Some(d) = lower.strip_suffix("mb") {
        (d, 1024 * 1024)
    } else if let Some(d) = lower.strip_suffix("kb") {
        (d, 1024)
    } else if let Some(d) = lower.strip_suffix('g') {
        (d, 1000 * 1000 * 1000)
    } else if let Some(d) = lower.strip_suffix('m') {
        (d, 1000 * 1000)
    } else if let Some(d) = lower.strip_suffix('k') {
        (d, 1000)
    } else if let Some(d) = lower.strip_suffix('b') {
        (d, 1)
    } else {
        (lower.as_str(), 1)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(mul)
}

/// CONFIG GET's answer: the parameters of `params` matching any of `patterns` (a glob
/// when it holds `*`, `?` or `[`, else the exact name; case-insensitive, as
/// redis-server), each once, in the order of `params`.
pub fn matching<'a, A: AsRef<[u8]>>(
    params: &'a [(String, String)],
    patterns: &[A],
) -> Vec<(&'a str, &'a str)> {
    let patterns: Vec<Vec<u8>> = patterns
        .iter()
        .map(|p| p.as_ref().to_ascii_lowercase())
        .collect();
    params
        .iter()
        .filter(|(name, _)| {
            patterns.iter().any(|p| {
                if p.iter().any(|b| matches!(b, b'*' | b'?' | b'[')) {
                    crate::base::glob::glob_match(p, name.as_bytes())
                } else {
                    p.as_slice() == name.as_bytes()
                }
            })
        })
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

/// CONFIG SET's checks of the names of `pairs` (name, value, ...), in redis-server's
/// order: the first unknown name fails the call unless an earlier parameter already
/// failed as immutable or repeated; then the first immutable or repeated parameter.
/// Returns the lower-case names.
pub fn check_set_names<A: AsRef<[u8]>>(
    pairs: &[A],
    known: impl Fn(&str) -> bool,
    immutable: impl Fn(&str) -> bool,
) -> Result<Vec<String>, CmdError> {
    let mut names: Vec<String> = Vec::new();
    let mut failed: Option<CmdError> = None;
    for p in pairs.chunks(2) {
        let given = String::from_utf8_lossy(p[0].as_ref());
        let name = given.to_ascii_lowercase();
        if failed.is_none() {
            if !known(&name) {
                failed = Some(CmdError::config_set_unknown(&given));
            } else if immutable(&name) {
                failed = Some(CmdError::config_set_failed(&given, CONFIG_IMMUTABLE));
            } else if names.contains(&name) {
                failed = Some(CmdError::config_set_failed(&given, CONFIG_DUPLICATE));
            }
        }
        names.push(name);
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(names),
    }
}

impl Config {
    /// Current value of a setting as text, or `None` for an unknown name.
    pub fn get(&self, name: &str) -> Option<String> {
        Some(match name.to_ascii_lowercase().as_str() {
            "stream-node-max-entries" => self.stream_node_max_entries.to_string(),
            "stream-node-max-bytes" => self.stream_node_max_bytes.to_string(),
            "stream-idmp-duration" => self.stream_idmp_duration.to_string(),
            "stream-idmp-maxsize" => self.stream_idmp_maxsize.to_string(),
            "maxmemory" => self.maxmemory.to_string(),
            "maxmemory-policy" => self.maxmemory_policy.name().to_string(),
            _ => return None,
        })
    }

    /// Change a setting: an unknown name or a value the setting does not take is a
    /// [`ConfigError`] saying which.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), ConfigError> {
        let bad = |reason: String| ConfigError::invalid(name, reason);
        let int_in = |value: &str, lo: i64, hi: i64| -> Result<i64, ConfigError> {
            let v = string2ll(value.as_bytes())
                .ok_or_else(|| bad("argument couldn't be parsed into an integer".to_string()))?;
            if v < lo || v > hi {
                return Err(bad(format!(
                    "argument must be between {lo} and {hi} inclusive"
                )));
            }
            Ok(v)
        };
        match name.to_ascii_lowercase().as_str() {
            "stream-node-max-entries" => self.stream_node_max_entries = int_in(value, 0, i64::MAX)?,
            "stream-node-max-bytes" => {
                let v = parse_memory(value)
                    .ok_or_else(|| bad("argument must be a memory value".to_string()))?;
                if v > i64::MAX as u64 {
                    return Err(bad(format!(
                        "argument must be between 0 and {} inclusive",
                        i64::MAX
                    )));
                }
                self.stream_node_max_bytes = v;
            }
            "stream-idmp-duration" => {
                self.stream_idmp_duration = int_in(value, IDMP_MIN_DURATION, IDMP_MAX_DURATION)?
            }
            "stream-idmp-maxsize" => {
                self.stream_idmp_maxsize = int_in(value, IDMP_MIN_MAXSIZE, IDMP_MAX_MAXSIZE)?
            }
            "maxmemory" => {
                self.maxmemory = parse_memory(value)
                    .ok_or_else(|| bad("argument must be a memory value".to_string()))?
            }
            "maxmemory-policy" => {
                if !value.eq_ignore_ascii_case("noeviction") {
                    return Err(bad(crate::error::MAXMEMORY_POLICY.to_string()));
                }
                self.maxmemory_policy = MaxmemoryPolicy::NoEviction;
            }
            _ => {
                return Err(ConfigError::Unknown {
                    name: name.to_string(),
                })
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_validation() {
        let mut c = Config::default();
        assert_eq!(c.get("stream-node-max-entries").as_deref(), Some("100"));
        c.set("stream-node-max-bytes", "4kb").unwrap();
        assert_eq!(c.stream_node_max_bytes, 4096);
        assert!(c.set("stream-idmp-duration", "0").is_err());
        assert!(c.set("stream-idmp-maxsize", "10001").is_err());
        assert!(c.set("nope", "1").is_err());
        c.set("STREAM-IDMP-MAXSIZE", "6").unwrap();
        c.set("STREAM-IDMP-MAXSIZE", "5").unwrap();
        assert_eq!(c.stream_idmp_maxsize, 5);
    }

    #[test]
    fn get_matches_globs_and_names_once() {
        let params: Vec<(String, String)> = ["stream-node-max-entries", "maxmemory", "databases"]
            .iter()
            .map(|n| (n.to_string(), "1".to_string()))
            .collect();
        let names = |pats: &[&str]| -> Vec<String> {
            matching(&params, pats)
                .into_iter()
                .map(|(n, _)| n.to_string())
                .collect()
        };
        assert_eq!(names(&["MAXMEMORY", "max*"]), ["maxmemory"]);
        assert_eq!(names(&["*"]).len(), 3);
        assert_eq!(
            names(&["stream-*", "d?tabases"]),
            ["stream-node-max-entries", "databases"]
        );
        assert!(names(&["nosuch"]).is_empty());
    }

    #[test]
    fn set_names_fail_in_redis_order() {
        let known = |n: &str| n == "a" || n == "imm";
        let imm = |n: &str| n == "imm";
        let err = |pairs: &[&str]| check_set_names(pairs, known, imm).unwrap_err().into_line();
        assert_eq!(
            err(&["x", "1"]),
            "ERR Unknown option or number of arguments for CONFIG SET - 'x'"
        );
        // An immutable parameter before an unknown one decides the error (redis-server).
        assert_eq!(
            err(&["IMM", "1", "x", "1"]),
            "ERR CONFIG SET failed (possibly related to argument 'IMM') - can't set immutable config"
        );
        assert_eq!(
            err(&["a", "1", "A", "2"]),
            "ERR CONFIG SET failed (possibly related to argument 'A') - duplicate parameter"
        );
        assert_eq!(check_set_names(&["A", "1"], known, imm).unwrap(), ["a"]);
    }
}
