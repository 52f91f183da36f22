//! What a command records for the durable log ([`LogRecord`], gathered in a
//! [`Propagation`] while it runs) and the RESP form commands are logged in.

/// One record of the durable log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogRecord {
    /// A command, in the form redis-server propagates (any Redis can replay it).
    Cmd(Vec<Vec<u8>>),
    /// A command already in its RESP form (see [`encode_header`]):
    /// the hot XADD path writes its record in one buffer, without an argument vector.
    Resp(Vec<u8>),
    /// The exact seen/active times of a consumer (creating it if missing). Redis has no
    /// command for this; the log writes it as an annotation line, which Redis skips.
    ConsumerTimes {
        key: Vec<u8>,
        group: Vec<u8>,
        consumer: Vec<u8>,
        seen: i64,
        active: i64,
    },
    /// A group's exact entries-read counter (XGROUP SETID clamps the value it is given).
    EntriesRead {
        key: Vec<u8>,
        group: Vec<u8>,
        value: i64,
    },
    /// A delivery appended at the tail of the pending list while the clock was behind
    /// it: the XCLAIM replaying it inserts by time, so the record moves it back.
    PelToTail {
        key: Vec<u8>,
        group: Vec<u8>,
        id: crate::structures::id::StreamId,
    },
    /// A setting changed by CONFIG SET, in force for the commands that follow.
    Config { name: String, value: String },
}

/// Commands recorded for the durable log while a command runs.
#[derive(Clone, Debug, Default)]
pub struct Propagation {
    /// Records emitted by the handler (`alsoPropagate`), in order.
    pub also: Vec<LogRecord>,
    /// The handler replaced its own propagation with `also`.
    pub prevented: bool,
    /// The command's arguments as rewritten by the handler (e.g. `*` replaced by the ID).
    pub rewritten: Option<Vec<Vec<u8>>>,
}

/// Append the RESP encoding of a command.
pub fn encode_command<A: AsRef<[u8]>>(out: &mut Vec<u8>, argv: &[A]) {
    encode_header(out, argv.len());
    for a in argv {
        encode_arg(out, a.as_ref());
    }
}

/// Append the header of a command of `n` arguments (then [`encode_arg`] each of them):
/// for a handler that writes its record without building an argument vector.
pub fn encode_header(out: &mut Vec<u8>, n: usize) {
    // Lengths through itoa: no String per argument (a sink's commit logs ~10 per row).
    out.push(b'*');
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Append one argument of a command (see [`encode_header`]).
pub fn encode_arg(out: &mut Vec<u8>, a: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(itoa::Buffer::new().format(a.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(a);
    out.extend_from_slice(b"\r\n");
}
