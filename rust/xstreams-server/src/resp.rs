//! Incremental parser of client requests, reproducing redis-server's
//! `processMultibulkBuffer` / `processInlineBuffer` (networking.c): the same limits, the
//! same quirks and the same `Protocol error: ...` replies.
//!
//! The parser never panics and never allocates more than the bytes it was given (a
//! declared multibulk count or bulk length reserves nothing up front), so it can be fed
//! arbitrary bytes. It keeps the state of a partly received command between calls, so
//! a large argument arriving in many reads is scanned once.
//!
//! Quirks kept on purpose because a client can observe them:
//! - a request starting with `*` is RESP, anything else is an inline command;
//! - the count and length lines are found by searching `\r` and the byte after it is
//!   skipped without being checked (so `*1\rX$4\r\nPING\r\n` is a valid request), and
//!   the two bytes after a bulk payload are skipped without being checked either;
//! - the `*` line (and inline requests) are searched like C strings: a NUL byte before
//!   the line end hides the end of the line until the 64 KiB inline limit is exceeded;
//! - before authentication, a multibulk count above 10 or a bulk length above 16384 is
//!   a protocol error;
//! - a multibulk count `<= 0` is an empty request (skipped without a reply).

use xstreams_core::base::num::string2ll;

/// Longest inline request, and longest unterminated count or length line
/// (`PROTO_INLINE_MAX_SIZE`).
pub const PROTO_INLINE_MAX_SIZE: usize = 64 * 1024;
/// Default `proto-max-bulk-len` (512 MB).
pub const DEFAULT_MAX_BULK_LEN: i64 = 512 * 1024 * 1024;
/// Largest multibulk count (`INT_MAX`).
pub const MAX_MULTIBULK_LEN: i64 = i32::MAX as i64;
/// Largest multibulk count accepted before authentication.
pub const UNAUTH_MAX_MULTIBULK_LEN: i64 = 10;
/// Largest bulk length accepted before authentication.
pub const UNAUTH_MAX_BULK_LEN: i64 = 16384;

/// A protocol violation. The connection replies with [`ProtocolError::reply_line`] and
/// is closed; commands parsed before it have run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    TooBigInlineRequest,
    UnbalancedQuotes,
    TooBigMultibulkCount,
    TooBigBulkCount,
    /// The byte found where `$` was expected.
    ExpectedDollar(u8),
    InvalidBulkLength,
    UnauthenticatedBulkLength,
    InvalidMultibulkLength,
    UnauthenticatedMultibulkLength,
}

impl ProtocolError {
    /// The error line redis-server replies with (without the leading `-` and CRLF).
    pub fn reply_line(&self) -> Vec<u8> {
        let msg: &[u8] = match self {
            ProtocolError::TooBigInlineRequest => b"too big inline request",
            ProtocolError::UnbalancedQuotes => b"unbalanced quotes in request",
            ProtocolError::TooBigMultibulkCount => b"too big mbulk count string",
            ProtocolError::TooBigBulkCount => b"too big bulk count string",
            ProtocolError::InvalidBulkLength => b"invalid bulk length",
            ProtocolError::UnauthenticatedBulkLength => b"unauthenticated bulk length",
            ProtocolError::InvalidMultibulkLength => b"invalid multibulk length",
            ProtocolError::UnauthenticatedMultibulkLength => b"unauthenticated multibulk length",
            ProtocolError::ExpectedDollar(c) => {
                // addReplyErrorFormat("... got '%c'"): a NUL ends the C string there, and
                // CR / LF are replaced by spaces.
                let mut v = crate::errors::PROTOCOL_EXPECTED_DOLLAR.as_bytes().to_vec();
                match *c {
                    0 => return v,
                    b'\r' | b'\n' => v.push(b' '),
                    c => v.push(c),
                }
                v.push(b'\'');
                return v;
            }
        };
        let mut v = crate::errors::PROTOCOL_ERROR.as_bytes().to_vec();
        v.extend_from_slice(msg);
        v
    }

    /// The full RESP error reply.
    pub fn reply(&self) -> Vec<u8> {
        let mut v = vec![b'-'];
        v.extend_from_slice(&self.reply_line());
        v.extend_from_slice(b"\r\n");
        v
    }
}

/// Result of one parse step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A complete command (at least one argument).
    Command(Vec<Vec<u8>>),
    /// A complete empty request (`*0`, `*-1`, a blank inline line): nothing to run.
    Empty,
    /// More bytes are needed.
    Incomplete,
}

/// Parser limits (`proto-max-bulk-len`).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_bulk_len: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: DEFAULT_MAX_BULK_LEN,
        }
    }
}

/// State of a partly parsed request.
#[derive(Debug, Default)]
pub struct Parser {
    /// Arguments still expected by the current multibulk request (0 = none started).
    multibulklen: i64,
    /// Length of the bulk being read, -1 when its `$` line is still to be read.
    bulklen: i64,
    args: Vec<Vec<u8>>,
    /// Bytes held in `args`.
    args_bytes: usize,
    /// Inline request: bytes already searched for `\n` without finding it.
    inline_scanned: usize,
}

/// Position of the first `needle` before any NUL byte (C `strchr` on the buffer).
fn c_strchr(buf: &[u8], needle: u8) -> Option<usize> {
    match memchr::memchr2(needle, 0, buf) {
        Some(i) if buf[i] == needle => Some(i),
        _ => None,
    }
}

impl Parser {
    pub fn new() -> Self {
        Parser {
            bulklen: -1,
            ..Default::default()
        }
    }

    /// Bytes of the current partial request held by the parser (arguments already
    /// taken from the buffer).
    pub fn pending_bytes(&self) -> usize {
        self.args_bytes + self.args.len() * 16
    }

    /// Bytes the next argument still needs in the buffer, when known (lets the caller
    /// reserve room for a large argument once).
    pub fn wanted(&self) -> Option<usize> {
        (self.multibulklen > 0 && self.bulklen >= 0).then(|| self.bulklen as usize + 2)
    }

    /// Is a request partly parsed?
    pub fn in_request(&self) -> bool {
        self.multibulklen > 0
    }

    /// Parse from the start of `buf`. Returns the number of bytes consumed (the caller
    /// drops them from its buffer, whatever the result) and what was found. After an
    /// error the parser must not be used again (the connection is closed).
    pub fn parse(
        &mut self,
        buf: &[u8],
        limits: &Limits,
        auth_required: bool,
    ) -> (usize, Result<Parsed, ProtocolError>) {
        if self.multibulklen == 0 {
            match buf.first() {
                None => return (0, Ok(Parsed::Incomplete)),
                Some(b'*') => {}
                Some(_) => return self.parse_inline(buf),
            }
        }
        self.parse_multibulk(buf, limits, auth_required)
    }

    fn parse_inline(&mut self, buf: &[u8]) -> (usize, Result<Parsed, ProtocolError>) {
        let from = self.inline_scanned.min(buf.len());
        let Some(rel) = c_strchr(&buf[from..], b'\n') else {
            // A NUL hides the rest of the buffer from strchr: nothing after it counts.
            self.inline_scanned = match memchr::memchr(0, &buf[from..]) {
                Some(_) => from,
                None => buf.len(),
            };
            if buf.len() > PROTO_INLINE_MAX_SIZE {
                return (0, Err(ProtocolError::TooBigInlineRequest));
            }
            return (0, Ok(Parsed::Incomplete));
        };
        self.inline_scanned = 0;
        let nl = from + rel;
        let (line_end, consumed) = if nl > 0 && buf[nl - 1] == b'\r' {
            (nl - 1, nl + 1)
        } else {
            (nl, nl + 1)
        };
        match split_args(&buf[..line_end]) {
            None => (consumed, Err(ProtocolError::UnbalancedQuotes)),
            Some(args) if args.is_empty() => (consumed, Ok(Parsed::Empty)),
            Some(args) => (consumed, Ok(Parsed::Command(args))),
        }
    }

    fn parse_multibulk(
        &mut self,
        buf: &[u8],
        limits: &Limits,
        auth_required: bool,
    ) -> (usize, Result<Parsed, ProtocolError>) {
        let mut pos = 0usize;
        if self.multibulklen == 0 {
            let Some(cr) = c_strchr(buf, b'\r') else {
                if buf.len() > PROTO_INLINE_MAX_SIZE {
                    return (0, Err(ProtocolError::TooBigMultibulkCount));
                }
                return (0, Ok(Parsed::Incomplete));
            };
            // The byte after '\r' must have arrived (it is not checked).
            if cr + 2 > buf.len() {
                return (0, Ok(Parsed::Incomplete));
            }
            let ll = match string2ll(&buf[1..cr]) {
                Some(ll) if ll <= MAX_MULTIBULK_LEN => ll,
                _ => return (0, Err(ProtocolError::InvalidMultibulkLength)),
            };
            if ll > UNAUTH_MAX_MULTIBULK_LEN && auth_required {
                return (0, Err(ProtocolError::UnauthenticatedMultibulkLength));
            }
            pos = cr + 2;
            if ll <= 0 {
                return (pos, Ok(Parsed::Empty));
            }
            self.multibulklen = ll;
            self.bulklen = -1;
        }
        while self.multibulklen > 0 {
            let rest = &buf[pos..];
            if self.bulklen == -1 {
                let Some(cr) = memchr::memchr(b'\r', rest) else {
                    if rest.len() > PROTO_INLINE_MAX_SIZE {
                        return (pos, Err(ProtocolError::TooBigBulkCount));
                    }
                    break;
                };
                if cr + 2 > rest.len() {
                    break;
                }
                if rest[0] != b'$' {
                    return (pos, Err(ProtocolError::ExpectedDollar(rest[0])));
                }
                let ll = match string2ll(&rest[1..cr]) {
                    Some(ll) if ll >= 0 && ll <= limits.max_bulk_len => ll,
                    _ => return (pos, Err(ProtocolError::InvalidBulkLength)),
                };
                if ll > UNAUTH_MAX_BULK_LEN && auth_required {
                    return (pos, Err(ProtocolError::UnauthenticatedBulkLength));
                }
                pos += cr + 2;
                self.bulklen = ll;
            }
            let rest = &buf[pos..];
            let need = self.bulklen as usize;
            if rest.len() < need + 2 {
                break;
            }
            self.args.push(rest[..need].to_vec());
            self.args_bytes += need;
            pos += need + 2;
            self.bulklen = -1;
            self.multibulklen -= 1;
        }
        if self.multibulklen == 0 {
            self.args_bytes = 0;
            let args = std::mem::take(&mut self.args);
            return (pos, Ok(Parsed::Command(args)));
        }
        (pos, Ok(Parsed::Incomplete))
    }
}

/// C `isspace` in the C locale.
fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Split an inline request line as redis-server's `sdssplitargs` does: blanks separate
/// arguments; `"..."` understands `\xHH`, `\n`, `\r`, `\t`, `\b`, `\a` and `\<c>`;
/// `'...'` understands `\'`; a closing quote must be followed by a blank or the end.
/// `None` for unbalanced quotes. The line is read as a C string (up to a NUL byte).
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let at = |i: usize| -> u8 { line.get(i).copied().unwrap_or(0) };
    let mut p = 0usize;
    let mut out = Vec::new();
    loop {
        while at(p) != 0 && is_c_space(at(p)) {
            p += 1;
        }
        if at(p) == 0 {
            return Some(out);
        }
        let (mut inq, mut insq, mut done) = (false, false, false);
        let mut cur = Vec::new();
        while !done {
            let c = at(p);
            if inq {
                if c == b'\\' && at(p + 1) == b'x' {
                    if let (Some(h), Some(l)) = (hex_value(at(p + 2)), hex_value(at(p + 3))) {
                        cur.push(h * 16 + l);
                        p += 3;
                    } else {
                        // `\x` without two hex digits: the escaped character is `x`.
                        p += 1;
                        cur.push(b'x');
                    }
                } else if c == b'\\' && at(p + 1) != 0 {
                    p += 1;
                    cur.push(match at(p) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        o => o,
                    });
                } else if c == b'"' {
                    if at(p + 1) != 0 && !is_c_space(at(p + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    cur.push(c);
                }
            } else if insq {
                if c == b'\\' && at(p + 1) == b'\'' {
                    p += 1;
                    cur.push(b'\'');
                } else if c == b'\'' {
                    if at(p + 1) != 0 && !is_c_space(at(p + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    cur.push(c);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => done = true,
                    b'"' => inq = true,
                    b'\'' => insq = true,
                    _ => cur.push(c),
                }
            }
            if at(p) != 0 {
                p += 1;
            }
        }
        out.push(cur);
    }
}

/// Encode a command as a RESP multibulk request (what clients send).
pub fn encode_command(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    out.push(b'*');
    out.extend_from_slice(args.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    for a in args {
        out.push(b'$');
        out.extend_from_slice(a.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `input` in one piece; collect commands until incomplete or error.
    fn parse_all(input: &[u8], auth: bool) -> (Vec<Parsed>, Option<ProtocolError>, usize) {
        let mut p = Parser::new();
        let limits = Limits::default();
        let mut pos = 0;
        let mut out = Vec::new();
        loop {
            let (n, r) = p.parse(&input[pos..], &limits, auth);
            pos += n;
            match r {
                Ok(Parsed::Incomplete) => return (out, None, pos),
                Ok(x) => out.push(x),
                Err(e) => return (out, Some(e), pos),
            }
        }
    }

    fn cmd(args: &[&str]) -> Parsed {
        Parsed::Command(args.iter().map(|a| a.as_bytes().to_vec()).collect())
    }

    #[test]
    fn multibulk_and_pipeline() {
        let (out, err, pos) =
            parse_all(b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", false);
        assert_eq!(out, vec![cmd(&["PING"]), cmd(&["ECHO", ""])]);
        assert!(err.is_none());
        assert_eq!(pos, 34);
    }

    #[test]
    fn byte_by_byte() {
        let input = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\nPING\r\n";
        let mut p = Parser::new();
        let limits = Limits::default();
        let mut buf = Vec::new();
        let mut got = Vec::new();
        for &b in input.iter() {
            buf.push(b);
            loop {
                let (n, r) = p.parse(&buf, &limits, false);
                buf.drain(..n);
                match r.unwrap() {
                    Parsed::Incomplete => break,
                    x => got.push(x),
                }
            }
        }
        assert_eq!(got, vec![cmd(&["SET", "k", "value"]), cmd(&["PING"])]);
        assert!(buf.is_empty());
    }

    #[test]
    fn empty_requests() {
        let (out, err, _) = parse_all(b"*0\r\n*-1\r\n\r\n   \r\n*1\r\n$1\r\nx\r\n", false);
        assert_eq!(
            out,
            vec![
                Parsed::Empty,
                Parsed::Empty,
                Parsed::Empty,
                Parsed::Empty,
                cmd(&["x"])
            ]
        );
        assert!(err.is_none());
    }

    #[test]
    fn unchecked_terminators() {
        // The byte after '\r' and the two bytes after a payload are not checked.
        let (out, err, _) = parse_all(b"*1\rX$4\r\nPINGab", false);
        assert_eq!(out, vec![cmd(&["PING"])]);
        assert!(err.is_none());
    }

    #[test]
    fn protocol_errors() {
        let cases: Vec<(&[u8], ProtocolError)> = vec![
            (b"*x\r\n", ProtocolError::InvalidMultibulkLength),
            (b"*2147483648\r\n", ProtocolError::InvalidMultibulkLength),
            (b"*01\r\n", ProtocolError::InvalidMultibulkLength),
            (b"*1\r\n$-1\r\n", ProtocolError::InvalidBulkLength),
            (b"*1\r\n$536870913\r\n", ProtocolError::InvalidBulkLength),
            (b"*1\r\n$abc\r\n", ProtocolError::InvalidBulkLength),
            (b"*1\r\n:1\r\n", ProtocolError::ExpectedDollar(b':')),
            (b"SET \"a\r\n", ProtocolError::UnbalancedQuotes),
            (b"SET 'a'b\r\n", ProtocolError::UnbalancedQuotes),
        ];
        for (input, want) in cases {
            let (_, err, _) = parse_all(input, false);
            assert_eq!(err, Some(want), "{:?}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn bulk_limit_boundary() {
        let (_, err, _) = parse_all(b"*1\r\n$536870912\r\n", false);
        assert_eq!(err, None, "512 MB exactly is allowed");
    }

    #[test]
    fn unauthenticated_limits() {
        let (_, err, _) = parse_all(b"*11\r\n", true);
        assert_eq!(err, Some(ProtocolError::UnauthenticatedMultibulkLength));
        let (_, err, _) = parse_all(b"*11\r\n", false);
        assert_eq!(err, None);
        let (_, err, _) = parse_all(b"*1\r\n$16385\r\n", true);
        assert_eq!(err, Some(ProtocolError::UnauthenticatedBulkLength));
        let (_, err, _) = parse_all(b"*1\r\n$16384\r\n", true);
        assert_eq!(err, None);
    }

    #[test]
    fn too_big_lines() {
        let mut big = vec![b'*'];
        big.extend(std::iter::repeat_n(b'1', PROTO_INLINE_MAX_SIZE));
        let (_, err, _) = parse_all(&big, false);
        assert_eq!(err, Some(ProtocolError::TooBigMultibulkCount));
        let mut big = b"*1\r\n$".to_vec();
        big.extend(std::iter::repeat_n(b'1', PROTO_INLINE_MAX_SIZE));
        let (_, err, _) = parse_all(&big, false);
        assert_eq!(err, Some(ProtocolError::TooBigBulkCount));
        let big = vec![b'a'; PROTO_INLINE_MAX_SIZE + 1];
        let (_, err, _) = parse_all(&big, false);
        assert_eq!(err, Some(ProtocolError::TooBigInlineRequest));
        let big = vec![b'a'; PROTO_INLINE_MAX_SIZE];
        let (_, err, _) = parse_all(&big, false);
        assert_eq!(err, None);
    }

    #[test]
    fn nul_hides_line_end() {
        // strchr stops at NUL: the request stays incomplete.
        let (out, err, pos) = parse_all(b"PING\0\r\n", false);
        assert!(out.is_empty() && err.is_none() && pos == 0);
        let (out, err, pos) = parse_all(b"*1\0\r\n", false);
        assert!(out.is_empty() && err.is_none() && pos == 0);
    }

    #[test]
    fn inline_splitting() {
        assert_eq!(
            split_args(b"set \"a b\" 'c\\'d' \"\\x41\\n\\q\"").unwrap(),
            vec![
                b"set".to_vec(),
                b"a b".to_vec(),
                b"c'd".to_vec(),
                b"A\nq".to_vec()
            ]
        );
        assert_eq!(split_args(b"  \t ").unwrap(), Vec::<Vec<u8>>::new());
        assert_eq!(split_args(b"a\x0bb").unwrap(), vec![b"a\x0bb".to_vec()]);
        assert!(split_args(b"\"abc").is_none());
        assert!(split_args(b"'abc").is_none());
        assert_eq!(split_args(b"\"\"").unwrap(), vec![Vec::<u8>::new()]);
        assert_eq!(split_args(b"\"\\x4\"").unwrap(), vec![b"x4".to_vec()]);
        let (out, _, _) = parse_all(b"PING\nECHO hi\r\n", false);
        assert_eq!(out, vec![cmd(&["PING"]), cmd(&["ECHO", "hi"])]);
    }

    #[test]
    fn error_lines() {
        assert_eq!(
            ProtocolError::ExpectedDollar(b'x').reply(),
            b"-ERR Protocol error: expected '$', got 'x'\r\n".to_vec()
        );
        assert_eq!(
            ProtocolError::ExpectedDollar(b'\n').reply(),
            b"-ERR Protocol error: expected '$', got ' '\r\n".to_vec()
        );
        assert_eq!(
            ProtocolError::ExpectedDollar(0).reply(),
            b"-ERR Protocol error: expected '$', got '\r\n".to_vec()
        );
        assert_eq!(
            ProtocolError::InvalidMultibulkLength.reply(),
            b"-ERR Protocol error: invalid multibulk length\r\n".to_vec()
        );
    }

    #[test]
    fn wanted_reports_big_argument() {
        let mut p = Parser::new();
        let (n, r) = p.parse(b"*1\r\n$100000\r\nabc", &Limits::default(), false);
        assert_eq!(r, Ok(Parsed::Incomplete));
        assert_eq!(n, 13);
        assert_eq!(p.wanted(), Some(100002));
    }
}
