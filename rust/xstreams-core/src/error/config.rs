//! The errors of changing a setting through the API (`Store::config_set`, a durable
//! store's config overrides): which name, and why. CONFIG SET's reply lines are built
//! from the same values (`CmdError::config_set_unknown` / `config_set_failed`), so the
//! text exists once.

use std::fmt;

use super::persist::PersistError;
use super::CmdError;

/// A setting the store refused, or could not log.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// No setting of that name (as given).
    Unknown { name: String },
    /// The value is not one the setting takes: `reason` in redis-server's words
    /// ("argument must be between 1 and 10000 inclusive").
    Invalid { name: String, reason: String },
    /// The durable store could not log the change (the setting is unchanged in memory
    /// only if the log refused before it was applied; see `Store::config_set`).
    Persist(PersistError),
}

impl ConfigError {
    pub(crate) fn invalid(name: &str, reason: impl Into<String>) -> Self {
        ConfigError::Invalid {
            name: name.to_string(),
            reason: reason.into(),
        }
    }

    /// Why, without the name: an invalid value's reason in redis-server's words, the
    /// unknown-name line's text, or the log's failure.
    pub fn reason(&self) -> String {
        match self {
            ConfigError::Unknown { name } => super::config_set_unknown_text(name),
            ConfigError::Invalid { reason, .. } => reason.clone(),
            ConfigError::Persist(e) => e.message().to_string(),
        }
    }

    /// The CONFIG SET reply line for this refusal, naming the parameter as the client
    /// spelt it (`given`).
    pub fn to_cmd_error(&self, given: &str) -> CmdError {
        match self {
            ConfigError::Unknown { .. } => CmdError::config_set_unknown(given),
            ConfigError::Invalid { reason, .. } => CmdError::config_set_failed(given, reason),
            ConfigError::Persist(e) => CmdError::misconf(e.message()),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Unknown { name } => f.write_str(&super::config_set_unknown_text(name)),
            ConfigError::Invalid { name, reason } => write!(f, "{name}: {reason}"),
            ConfigError::Persist(e) => f.write_str(e.message()),
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<ConfigError> for PersistError {
    /// A config override a durable store refused at open: an I/O-kind store error with the
    /// refusal's text (as before this type existed).
    fn from(e: ConfigError) -> Self {
        match e {
            ConfigError::Persist(p) => p,
            other => PersistError::io_failure(other.to_string()),
        }
    }
}
