//! Writing replies of connection-level commands in RESP2 or RESP3 (the core's replies
//! encode themselves with [`Reply::encode`]).

/// A reply writer for one protocol version.
pub struct Out<'a> {
    pub buf: &'a mut Vec<u8>,
    pub proto: u8,
}

impl<'a> Out<'a> {
    pub fn new(buf: &'a mut Vec<u8>, proto: u8) -> Self {
        Out { buf, proto }
    }

    fn len_line(&mut self, prefix: u8, n: usize) {
        self.buf.push(prefix);
        self.buf.extend_from_slice(n.to_string().as_bytes());
        self.buf.extend_from_slice(b"\r\n");
    }

    pub fn array(&mut self, n: usize) {
        self.len_line(b'*', n);
    }

    /// A map of `n` pairs (a flat array of 2n items in RESP2).
    pub fn map(&mut self, n: usize) {
        if self.proto >= 3 {
            self.len_line(b'%', n);
        } else {
            self.len_line(b'*', n * 2);
        }
    }

    /// A set (an array in RESP2).
    pub fn set(&mut self, n: usize) {
        if self.proto >= 3 {
            self.len_line(b'~', n);
        } else {
            self.len_line(b'*', n);
        }
    }

    pub fn bulk(&mut self, b: &[u8]) {
        self.len_line(b'$', b.len());
        self.buf.extend_from_slice(b);
        self.buf.extend_from_slice(b"\r\n");
    }

    pub fn bulk_str(&mut self, s: &str) {
        self.bulk(s.as_bytes());
    }

    /// Simple string; CR and LF are replaced by spaces.
    pub fn status(&mut self, s: &str) {
        self.buf.push(b'+');
        self.buf.extend(
            s.bytes()
                .map(|c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
        );
        self.buf.extend_from_slice(b"\r\n");
    }

    /// Error line (without the leading `-`); CR and LF are replaced by spaces.
    pub fn error(&mut self, line: &str) {
        self.error_bytes(line.as_bytes());
    }

    pub fn error_bytes(&mut self, line: &[u8]) {
        self.buf.push(b'-');
        self.buf.extend(
            line.iter()
                .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
        );
        self.buf.extend_from_slice(b"\r\n");
    }

    pub fn int(&mut self, v: i64) {
        self.buf.push(b':');
        self.buf.extend_from_slice(v.to_string().as_bytes());
        self.buf.extend_from_slice(b"\r\n");
    }

    /// Null bulk string (`$-1` / `_`).
    pub fn null(&mut self) {
        if self.proto >= 3 {
            self.buf.extend_from_slice(b"_\r\n");
        } else {
            self.buf.extend_from_slice(b"$-1\r\n");
        }
    }

    /// Verbatim text (`=N\r\ntxt:...` in RESP3, a bulk string in RESP2).
    pub fn verbatim(&mut self, text: &str) {
        if self.proto >= 3 {
            self.len_line(b'=', text.len() + 4);
            self.buf.extend_from_slice(b"txt:");
            self.buf.extend_from_slice(text.as_bytes());
            self.buf.extend_from_slice(b"\r\n");
        } else {
            self.bulk(text.as_bytes());
        }
    }

    /// A help reply: an array of status lines.
    pub fn help(&mut self, container: &str, lines: &[&str]) {
        let head = format!(
            "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            container
        );
        self.array(lines.len() + 3);
        self.status(&head);
        for l in lines {
            self.status(l);
        }
        self.status("HELP");
        self.status("    Print this help.");
    }
}
