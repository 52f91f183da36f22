//! Reply values, independent of any transport, and their RESP2 / RESP3 encodings.
//!
//! Commands build a [`Reply`] from their typed outcome (`outcomes`: `From<outcome> for
//! Reply`, the read sink, an entry); the embedded Python API converts it to Python objects
//! and the RESP server encodes it. Both see the same value, so a command is implemented
//! once.

use std::borrow::Cow;

use crate::error::CmdError;
use crate::structures::id::StreamId;

mod outcomes;

pub use outcomes::{entry_reply, ReplySink};

/// One reply value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Simple string (`+OK`).
    Status(Cow<'static, str>),
    /// An error: its kind and its line (`ERR syntax error`, sent after RESP's `-`); a
    /// receiver branches on the kind, never on the text.
    Error(CmdError),
    /// Integer.
    Int(i64),
    /// Bulk string.
    Bulk(Vec<u8>),
    /// Null bulk string (`$-1` in RESP2, `_` in RESP3).
    Nil,
    /// Null array (`*-1` in RESP2, `_` in RESP3).
    NilArray,
    /// Array.
    Array(Vec<Reply>),
    /// Map: a flat array of alternating keys and values in RESP2, a `%` map in RESP3.
    Map(Vec<(Reply, Reply)>),
}

impl Reply {
    pub const fn ok() -> Reply {
        Reply::Status(Cow::Borrowed("OK"))
    }
    pub fn status(s: &'static str) -> Reply {
        Reply::Status(Cow::Borrowed(s))
    }
    pub fn bulk(b: &[u8]) -> Reply {
        Reply::Bulk(b.to_vec())
    }
    pub fn bulk_str(s: &str) -> Reply {
        Reply::Bulk(s.as_bytes().to_vec())
    }
    pub fn id(id: &StreamId) -> Reply {
        Reply::Bulk(id.to_bytes())
    }
    pub fn empty_array() -> Reply {
        Reply::Array(Vec::new())
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }
    /// The error of an error reply.
    pub fn error(&self) -> Option<&CmdError> {
        match self {
            Reply::Error(e) => Some(e),
            _ => None,
        }
    }
    /// The line of an error reply (what RESP sends after `-`).
    pub fn error_line(&self) -> Option<&str> {
        self.error().map(CmdError::line)
    }

    /// Encode as RESP2 into `out`.
    pub fn encode_resp2(&self, out: &mut Vec<u8>) {
        self.encode(out, 2);
    }

    /// Encode as RESP3 into `out`.
    pub fn encode_resp3(&self, out: &mut Vec<u8>) {
        self.encode(out, 3);
    }

    /// Encode with the given protocol version (2 or 3).
    pub fn encode(&self, out: &mut Vec<u8>, protocol: u8) {
        match self {
            Reply::Status(s) => {
                out.push(b'+');
                out.extend_from_slice(s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Error(e) => {
                out.push(b'-');
                out.extend_from_slice(e.line().as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Int(i) => {
                out.push(b':');
                out.extend_from_slice(i.to_string().as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Bulk(b) => {
                out.push(b'$');
                out.extend_from_slice(b.len().to_string().as_bytes());
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            Reply::Nil => {
                if protocol >= 3 {
                    out.extend_from_slice(b"_\r\n");
                } else {
                    out.extend_from_slice(b"$-1\r\n");
                }
            }
            Reply::NilArray => {
                if protocol >= 3 {
                    out.extend_from_slice(b"_\r\n");
                } else {
                    out.extend_from_slice(b"*-1\r\n");
                }
            }
            Reply::Array(items) => {
                out.push(b'*');
                out.extend_from_slice(items.len().to_string().as_bytes());
                out.extend_from_slice(b"\r\n");
                for it in items {
                    it.encode(out, protocol);
                }
            }
            Reply::Map(pairs) => {
                if protocol >= 3 {
                    out.push(b'%');
                    out.extend_from_slice(pairs.len().to_string().as_bytes());
                } else {
                    out.push(b'*');
                    out.extend_from_slice((pairs.len() * 2).to_string().as_bytes());
                }
                out.extend_from_slice(b"\r\n");
                for (k, v) in pairs {
                    k.encode(out, protocol);
                    v.encode(out, protocol);
                }
            }
        }
    }

    /// RESP bytes of this reply.
    pub fn to_resp(&self, protocol: u8) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out, protocol);
        out
    }
}

impl From<CmdError> for Reply {
    fn from(e: CmdError) -> Self {
        Reply::Error(e)
    }
}

impl From<i64> for Reply {
    fn from(i: i64) -> Self {
        Reply::Int(i)
    }
}

/// Build a map reply from string keys.
pub fn map(pairs: Vec<(&'static str, Reply)>) -> Reply {
    Reply::Map(
        pairs
            .into_iter()
            .map(|(k, v)| (Reply::bulk_str(k), v))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resp2_and_resp3_encodings() {
        let r = Reply::Array(vec![
            Reply::ok(),
            Reply::Int(-3),
            Reply::bulk(b"ab"),
            Reply::Nil,
            Reply::NilArray,
            Reply::Error(CmdError::syntax()),
            map(vec![("k", Reply::Int(1))]),
        ]);
        assert_eq!(
            r.to_resp(2),
            b"*7\r\n+OK\r\n:-3\r\n$2\r\nab\r\n$-1\r\n*-1\r\n-ERR syntax error\r\n*2\r\n$1\r\nk\r\n:1\r\n"
                .to_vec()
        );
        assert_eq!(
            r.to_resp(3),
            b"*7\r\n+OK\r\n:-3\r\n$2\r\nab\r\n_\r\n_\r\n-ERR syntax error\r\n%1\r\n$1\r\nk\r\n:1\r\n".to_vec()
        );
    }
}
