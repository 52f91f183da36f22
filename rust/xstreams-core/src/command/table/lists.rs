//! What the rest of the project reads from a row beyond Redis's own metadata: the lists
//! that were once kept in step with the table by hand. The fuzz crate's command generator
//! ([`fuzz_commands`]), the replay reader's classification of logged commands
//! ([`log_effect`]) and the Python client's natively served commands
//! ([`native_client_commands`]) all come from here, so a new command is one row; a stream
//! command's row that leaves one undeclared fails `tests.rs`.

use super::{commands, lookup, CommandSpec};

/// How a logged command changes the keys of the database it runs in, as the replay reader
/// (`interop::batch::replay::scan_logs`) judges a store's logs without loading them.
/// Judging toward [`Log::Data`] only costs a full load; judging a change as smaller than
/// it is would read wrong data, so every row that writes declares what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Log {
    /// A read: never logged.
    NotLogged,
    /// Appends entries to its (first) key and changes nothing else there, unless one of
    /// the words appears among its arguments (then [`Log::Data`]: XADD with a trim).
    Appends { unless: &'static [&'static str] },
    /// Changes only the consumer-group state of the keys it names (PELs, consumers,
    /// cursors), unless one of the words appears among its arguments (then
    /// [`Log::Data`]: XGROUP CREATE ... MKSTREAM).
    GroupState { unless: &'static [&'static str] },
    /// Changes the keys it names (any argument equal to a key counts).
    Data,
    /// Changes the keys it names in its own database and in another one (MOVE, COPY
    /// ... DB).
    OtherDb,
    /// Changes every key of the database it runs in (FLUSHDB).
    Database,
    /// Changes every key of every database (FLUSHALL, SWAPDB).
    AllDatabases,
    /// Sets the database the next logged commands run in (its argument): the log's
    /// SELECT.
    Select,
}

/// What redis-py value the Python client's native layer builds from a command's reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeReply {
    /// The reply as redis-py's parser gives it (an ID, a type name).
    Raw,
    /// An integer.
    Int,
    /// A list of entries, `[(id, {field: value}), ...]` (XRANGE).
    Entries,
    /// Streams and their entries (XREAD / XREADGROUP).
    Read,
}

/// How the Python client (`xstreams.Redis`) serves a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    /// Its Python method (or `execute_command`) runs it through the engine's arguments.
    Python,
    /// Its native method builds redis-py's value in Rust, from a reply of this shape.
    Native(NativeReply),
}

/// The row's entries in the derived lists; `None` is a list the row has not declared
/// (the table's tests require every one on the stream commands' rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lists {
    /// How often the fuzz crate's generator draws the command among the others (0:
    /// never). Containers are drawn by their own name.
    pub fuzz: Option<u8>,
    /// What the command's log record changes (subcommands: each its own).
    pub log: Option<Log>,
    /// How the Python client serves it.
    pub client: Option<Client>,
}

impl Lists {
    pub const UNDECLARED: Lists = Lists {
        fuzz: None,
        log: None,
        client: None,
    };
}

impl CommandSpec {
    /// What the command's log record changes: as declared, else [`Log::Data`] for a
    /// write and [`Log::NotLogged`] for anything else.
    pub fn log(&self) -> Log {
        self.lists
            .log
            .unwrap_or(if self.flags.has(super::Flags::WRITE) {
                Log::Data
            } else {
                Log::NotLogged
            })
    }
}

/// The row's lists: fuzz weight, log effect, client path (a command row).
pub(crate) const fn lists(mut c: CommandSpec, fuzz: u8, log: Log, client: Client) -> CommandSpec {
    c.lists = Lists {
        fuzz: Some(fuzz),
        log: Some(log),
        client: Some(client),
    };
    c
}

/// The row's fuzz weight.
pub(crate) const fn fuzzed(mut c: CommandSpec, weight: u8) -> CommandSpec {
    c.lists.fuzz = Some(weight);
    c
}

/// The row's log effect.
pub(crate) const fn logs(mut c: CommandSpec, log: Log) -> CommandSpec {
    c.lists.log = Some(log);
    c
}

/// How the Python client serves the row's command.
pub(crate) const fn served(mut c: CommandSpec, client: Client) -> CommandSpec {
    c.lists.client = Some(client);
    c
}

/// The commands the fuzz crate draws, in table order, each as often as its weight says.
pub fn fuzz_commands() -> impl Iterator<Item = &'static str> {
    commands().iter().flat_map(|c| {
        let n = usize::from(c.lists.fuzz.unwrap_or(0));
        std::iter::repeat_n(c.name, n)
    })
}

/// The commands the Python client serves natively, with the redis-py value its native
/// method builds (the client takes its Python path for all of them when a response
/// callback of one is not redis-py's).
pub fn native_client_commands() -> impl Iterator<Item = (&'static str, NativeReply)> {
    commands().iter().filter_map(|c| match c.lists.client {
        Some(Client::Native(r)) => Some((c.name, r)),
        _ => None,
    })
}

/// The log effect of a logged command (`argv` as the log holds it: name, subcommand,
/// arguments): its row's, the subcommand's for a container; a command the table does not
/// know changes what it names ([`Log::Data`]).
pub fn log_effect<A: AsRef<[u8]>>(argv: &[A]) -> Log {
    let Some(spec) = argv.first().and_then(|n| lookup(n.as_ref())) else {
        return Log::Data;
    };
    if spec.subcommands.is_empty() {
        return spec.log();
    }
    match argv.get(1).and_then(|s| spec.sub(s.as_ref())) {
        Some(sub) => sub.log(),
        None => Log::Data,
    }
}
