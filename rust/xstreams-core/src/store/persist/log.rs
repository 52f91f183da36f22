//! The command log: RESP-encoded commands, as in a Redis AOF, plus annotation lines
//! (`#...\r\n`, which redis-server's AOF loader skips) carrying what only xstreams needs to
//! replay to the exact same state:
//!
//! - `#XS:T <ms>`: the command time of the commands that follow (replay pins the clock);
//! - `#XS:CFG <name> <value>`: a setting in force from here on (node sizes decide where
//!   nodes split, so replay must use the settings the commands ran with);
//! - `#XS:CT <key-hex> <group-hex> <consumer-hex> <seen> <active>`: a consumer's exact
//!   seen and active times (no Redis command sets them).
//!
//! Database changes are written as `SELECT <db>` commands, as in a Redis AOF.

pub use crate::command::encode_command;
use crate::command::LogRecord;

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2 + 1);
    if b.is_empty() {
        s.push('-');
    }
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s == "-" {
        return Some(Vec::new());
    }
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Tracks what the log has announced so far (time, database) so annotations and SELECTs
/// are written only when they change.
#[derive(Clone, Debug, Default)]
pub struct LogCursor {
    pub time: Option<i64>,
    pub db: usize,
}

/// Encode the records of one command run at `now` on `db`. A command whose effects take
/// several commands is wrapped in MULTI/EXEC (as redis-server does in its AOF), so a
/// crash can never leave half of it in the log.
pub fn encode_records(
    out: &mut Vec<u8>,
    cur: &mut LogCursor,
    db: usize,
    now: i64,
    records: &[LogRecord],
) {
    encode_records_in(out, cur, db, now, records, true)
}

/// [`encode_records`], wrapping several records in MULTI/EXEC only with `wrap` (not
/// inside a block that is itself wrapped: MULTI blocks do not nest).
pub fn encode_records_in(
    out: &mut Vec<u8>,
    cur: &mut LogCursor,
    db: usize,
    now: i64,
    records: &[LogRecord],
    wrap: bool,
) {
    if records.is_empty() {
        return;
    }
    if cur.time != Some(now) {
        out.extend_from_slice(format!("#XS:T {now}\r\n").as_bytes());
        cur.time = Some(now);
    }
    if cur.db != db {
        encode_command(out, &[b"SELECT".to_vec(), db.to_string().into_bytes()]);
        cur.db = db;
    }
    let wrap = wrap && records.len() > 1;
    if wrap {
        encode_command(out, &[b"MULTI".to_vec()]);
    }
    for r in records {
        match r {
            LogRecord::Cmd(argv) => encode_command(out, argv),
            LogRecord::Resp(bytes) => out.extend_from_slice(bytes),
            LogRecord::ConsumerTimes {
                key,
                group,
                consumer,
                seen,
                active,
            } => {
                out.extend_from_slice(
                    format!(
                        "#XS:CT {} {} {} {seen} {active}\r\n",
                        hex(key),
                        hex(group),
                        hex(consumer)
                    )
                    .as_bytes(),
                );
            }
            LogRecord::EntriesRead { key, group, value } => {
                out.extend_from_slice(
                    format!("#XS:ER {} {} {value}\r\n", hex(key), hex(group)).as_bytes(),
                );
            }
            LogRecord::PelToTail { key, group, id } => {
                out.extend_from_slice(
                    format!("#XS:PT {} {} {id}\r\n", hex(key), hex(group)).as_bytes(),
                );
            }
            LogRecord::Config { name, value } => encode_config(out, name, value),
        }
    }
    if wrap {
        encode_command(out, &[b"EXEC".to_vec()]);
    }
}

/// Encode a settings annotation.
pub fn encode_config(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(format!("#XS:CFG {name} {value}\r\n").as_bytes());
}

/// One item read back from a log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogItem {
    Command(Vec<Vec<u8>>),
    Time(i64),
    Config(String, String),
    ConsumerTimes {
        key: Vec<u8>,
        group: Vec<u8>,
        consumer: Vec<u8>,
        seen: i64,
        active: i64,
    },
    EntriesRead {
        key: Vec<u8>,
        group: Vec<u8>,
        value: i64,
    },
    /// An empty IDMP producer, written by earlier versions after a failed XADD; read
    /// and ignored (a failed XADD no longer leaves one: docs/differences.md).
    EmptyProducer {
        key: Vec<u8>,
        pid: Vec<u8>,
    },
    PelToTail {
        key: Vec<u8>,
        group: Vec<u8>,
        id: crate::structures::id::StreamId,
    },
    /// Another annotation (e.g. Redis's `#TS:`), ignored.
    Other,
}

/// Why parsing stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseStop {
    /// Clean end of data.
    End,
    /// The data ends inside an item (a crash cut the last write): `offset` is where the
    /// incomplete item starts.
    Truncated { offset: usize },
    /// The bytes at `offset` are not a valid log item.
    Corrupt { offset: usize, message: String },
}

fn find_crlf(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + 1 < buf.len() {
        if buf[i] == b'\r' && buf[i + 1] == b'\n' {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn parse_len(line: &[u8]) -> Option<usize> {
    if line.is_empty() || line.len() > 12 || !line.iter().all(|b| b.is_ascii_digit()) {
        return None;
    }
    std::str::from_utf8(line).ok()?.parse().ok()
}

/// Largest argument accepted in a log (Redis's default `proto-max-bulk-len`).
const MAX_BULK: usize = 512 * 1024 * 1024;

/// Is `partial` (an item cut by the end of the data, no CRLF yet) a plausible prefix of
/// a line of kind `kind`? A crash can only cut a well-formed item; anything else is not a
/// cut tail but damage (or a foreign file).
fn plausible_partial_line(partial: &[u8], kind: u8) -> bool {
    let body = match partial.last() {
        Some(b'\r') => &partial[..partial.len() - 1],
        _ => partial,
    };
    match kind {
        b'#' => body
            .iter()
            .all(|&b| b != b'\n' && b != b'\r' && (b == b'\t' || (0x20..0x7f).contains(&b))),
        _ => body.len() <= 13 && body.iter().all(|b| b.is_ascii_digit()),
    }
}

/// Parse the item starting at `off`. `Ok(None)` = the data ends inside the item.
fn parse_item(buf: &[u8], off: usize) -> Result<Option<(LogItem, usize)>, String> {
    let cut_line = |start: usize, kind: u8| -> Result<Option<(LogItem, usize)>, String> {
        if plausible_partial_line(&buf[start..], kind) {
            Ok(None)
        } else {
            Err("unterminated line that no write could have produced".into())
        }
    };
    match buf[off] {
        b'#' => {
            let Some(end) = find_crlf(buf, off) else {
                return cut_line(off + 1, b'#');
            };
            let line = std::str::from_utf8(&buf[off..end])
                .map_err(|_| "annotation is not UTF-8".to_string())?;
            if line.contains('\n') {
                return Err("annotation line contains a bare LF".into());
            }
            let next = end + 2;
            let mut parts = line.split(' ');
            let tag = parts.next().unwrap_or("");
            let mut f = || parts.next().ok_or_else(|| format!("bad {tag} annotation"));
            let item = match tag {
                "#XS:T" => LogItem::Time(f()?.parse().map_err(|_| "bad time annotation")?),
                "#XS:CFG" => {
                    let name = f()?.to_string();
                    let value = f()?.to_string();
                    LogItem::Config(name, value)
                }
                "#XS:CT" => {
                    let key = unhex(f()?).ok_or("bad hex in consumer annotation")?;
                    let group = unhex(f()?).ok_or("bad hex in consumer annotation")?;
                    let consumer = unhex(f()?).ok_or("bad hex in consumer annotation")?;
                    let seen = f()?
                        .parse()
                        .map_err(|_| "bad consumer annotation".to_string())?;
                    let active = f()?
                        .parse()
                        .map_err(|_| "bad consumer annotation".to_string())?;
                    LogItem::ConsumerTimes {
                        key,
                        group,
                        consumer,
                        seen,
                        active,
                    }
                }
                "#XS:ER" => {
                    let key = unhex(f()?).ok_or("bad hex in entries-read annotation")?;
                    let group = unhex(f()?).ok_or("bad hex in entries-read annotation")?;
                    let value = f()?
                        .parse()
                        .map_err(|_| "bad entries-read annotation".to_string())?;
                    LogItem::EntriesRead { key, group, value }
                }
                "#XS:EP" => {
                    let key = unhex(f()?).ok_or("bad hex in producer annotation")?;
                    let pid = unhex(f()?).ok_or("bad hex in producer annotation")?;
                    LogItem::EmptyProducer { key, pid }
                }
                "#XS:PT" => {
                    let key = unhex(f()?).ok_or("bad hex in pending annotation")?;
                    let group = unhex(f()?).ok_or("bad hex in pending annotation")?;
                    let id = crate::structures::id::parse_id(f()?.as_bytes(), 0, true, false)
                        .ok_or("bad id in pending annotation")?
                        .id;
                    LogItem::PelToTail { key, group, id }
                }
                t if t.starts_with("#XS:") => return Err(format!("unknown annotation {t}")),
                _ => LogItem::Other,
            };
            Ok(Some((item, next)))
        }
        b'*' => {
            let Some(end) = find_crlf(buf, off) else {
                return cut_line(off + 1, b'*');
            };
            let argc = parse_len(&buf[off + 1..end]).ok_or("bad multibulk length")?;
            if argc == 0 || argc > 1 << 20 {
                return Err("bad multibulk length".into());
            }
            let mut pos = end + 2;
            let mut argv = Vec::with_capacity(argc.min(64));
            for _ in 0..argc {
                if pos >= buf.len() {
                    return Ok(None);
                }
                if buf[pos] != b'$' {
                    return Err(format!("expected '$' at offset {pos}"));
                }
                let Some(e) = find_crlf(buf, pos) else {
                    return cut_line(pos + 1, b'$');
                };
                let len = parse_len(&buf[pos + 1..e]).ok_or("bad bulk length")?;
                if len > MAX_BULK {
                    return Err("bulk length out of range".into());
                }
                let start = e + 2;
                if start + len + 2 > buf.len() {
                    // Cut inside the payload or its CRLF: what is there must still fit.
                    let have = &buf[(start + len).min(buf.len())..];
                    if !b"\r\n".starts_with(have) {
                        return Err(format!("missing CRLF after bulk at offset {}", start + len));
                    }
                    return Ok(None);
                }
                if &buf[start + len..start + len + 2] != b"\r\n" {
                    return Err(format!("missing CRLF after bulk at offset {}", start + len));
                }
                argv.push(buf[start..start + len].to_vec());
                pos = start + len + 2;
            }
            Ok(Some((LogItem::Command(argv), pos)))
        }
        other => Err(format!("unexpected byte 0x{other:02x}")),
    }
}

/// Parse a whole log. Returns the items with their start offsets and why parsing stopped.
///
/// Zero bytes at the very end are a cut tail too: a power loss can leave the file's new
/// size on disk without the data written into it (a log never ends with a NUL: every
/// item ends with CRLF). The cut is then at the end of the last whole item.
pub fn parse(buf: &[u8]) -> (Vec<(usize, LogItem)>, ParseStop) {
    let data_end = buf.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    if data_end == buf.len() {
        return parse_bytes(buf);
    }
    let (items, stop) = parse_bytes(&buf[..data_end]);
    let stop = match stop {
        ParseStop::End => ParseStop::Truncated { offset: data_end },
        other => other,
    };
    (items, stop)
}

fn parse_bytes(buf: &[u8]) -> (Vec<(usize, LogItem)>, ParseStop) {
    let mut items = Vec::new();
    let mut off = 0;
    while off < buf.len() {
        match parse_item(buf, off) {
            Ok(Some((item, next))) => {
                items.push((off, item));
                off = next;
            }
            Ok(None) => return (items, ParseStop::Truncated { offset: off }),
            Err(message) => {
                return (
                    items,
                    ParseStop::Corrupt {
                        offset: off,
                        message,
                    },
                )
            }
        }
    }
    (items, ParseStop::End)
}

fn is_cmd(item: &LogItem, name: &[u8]) -> bool {
    matches!(item, LogItem::Command(a) if a.len() == 1 && a[0].eq_ignore_ascii_case(name))
}

/// Parse a whole log as replay reads it. The records of one command come wrapped in
/// MULTI/EXEC: the wrappers are checked and left out, and a MULTI whose EXEC is missing at
/// the end of the data is a cut tail (the crash happened while it was written), so the
/// stop is then `Truncated` at that MULTI and its records are left out too. Returns the
/// items replay applies, with their start offsets, and why parsing stopped.
pub fn parse_replayable(buf: &[u8]) -> (Vec<(usize, LogItem)>, ParseStop) {
    let (items, stop) = parse(buf);
    let mut out = Vec::with_capacity(items.len());
    // Start of the open MULTI block and of its records in `out`.
    let mut block: Option<(usize, usize)> = None;
    for (offset, item) in items {
        if is_cmd(&item, b"MULTI") {
            if block.is_some() {
                return drop_open(
                    out,
                    block,
                    ParseStop::Corrupt {
                        offset,
                        message: "nested MULTI".into(),
                    },
                );
            }
            block = Some((offset, out.len()));
        } else if is_cmd(&item, b"EXEC") {
            if block.take().is_none() {
                return (
                    out,
                    ParseStop::Corrupt {
                        offset,
                        message: "EXEC without MULTI".into(),
                    },
                );
            }
        } else {
            out.push((offset, item));
        }
    }
    let stop = match (stop, block) {
        (ParseStop::End | ParseStop::Truncated { .. }, Some((offset, _))) => {
            ParseStop::Truncated { offset }
        }
        (stop, _) => stop,
    };
    drop_open(out, block, stop)
}

/// Leave out the records of an open MULTI block.
fn drop_open(
    mut out: Vec<(usize, LogItem)>,
    block: Option<(usize, usize)>,
    stop: ParseStop,
) -> (Vec<(usize, LogItem)>, ParseStop) {
    if let Some((_, first)) = block {
        out.truncate(first);
    }
    (out, stop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_after_the_last_item_are_a_cut_tail() {
        let mut buf = b"*1\r\n$4\r\nPING\r\n".to_vec();
        let whole = buf.len();
        buf.extend_from_slice(&[0; 7]);
        let (items, stop) = parse(&buf);
        assert_eq!(items.len(), 1);
        assert_eq!(stop, ParseStop::Truncated { offset: whole });
        // A cut item followed by zeros: cut at the item's start.
        let mut cut = b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nXA".to_vec();
        cut.extend_from_slice(&[0; 3]);
        assert_eq!(parse(&cut).1, ParseStop::Truncated { offset: whole });
        // Zeros inside the data are damage, as before.
        let mut bad = b"*1\r\n$4\r\nPING\r\n".to_vec();
        bad.extend_from_slice(b"\0\0*1\r\n$4\r\nPING\r\n");
        assert!(matches!(parse(&bad).1, ParseStop::Corrupt { .. }));
    }

    #[test]
    fn roundtrip_and_truncation() {
        let mut out = Vec::new();
        let mut cur = LogCursor::default();
        encode_config(&mut out, "stream-node-max-entries", "100");
        encode_records(
            &mut out,
            &mut cur,
            2,
            1000,
            &[
                LogRecord::Cmd(vec![
                    b"XADD".to_vec(),
                    b"s".to_vec(),
                    b"1-1".to_vec(),
                    b"f".to_vec(),
                    b"v\r\n".to_vec(),
                ]),
                LogRecord::ConsumerTimes {
                    key: b"s".to_vec(),
                    group: b"".to_vec(),
                    consumer: b"c".to_vec(),
                    seen: 5,
                    active: -1,
                },
            ],
        );
        let (items, stop) = parse(&out);
        assert_eq!(stop, ParseStop::End);
        // CFG, T, SELECT, MULTI, XADD, CT, EXEC: two records of one command are wrapped.
        assert_eq!(items.len(), 7);
        assert_eq!(items[1].1, LogItem::Time(1000));
        assert_eq!(
            items[2].1,
            LogItem::Command(vec![b"SELECT".to_vec(), b"2".to_vec()])
        );
        assert_eq!(items[3].1, LogItem::Command(vec![b"MULTI".to_vec()]));
        assert_eq!(items[6].1, LogItem::Command(vec![b"EXEC".to_vec()]));
        assert_eq!(
            items[5].1,
            LogItem::ConsumerTimes {
                key: b"s".to_vec(),
                group: vec![],
                consumer: b"c".to_vec(),
                seen: 5,
                active: -1
            }
        );
        for cut in 1..out.len() {
            let (items2, stop) = parse(&out[..cut]);
            match stop {
                ParseStop::Truncated { offset } => assert!(offset <= cut && items2.len() < 7),
                ParseStop::End => assert!(items2.len() < 7),
                ParseStop::Corrupt { .. } => {
                    panic!("prefix of a valid log reported corrupt at {cut}")
                }
            }
        }
        let (_, stop) = parse(b"*1\r\n$3\r\nPING\r\nGARBAGE");
        assert!(matches!(stop, ParseStop::Corrupt { .. }));
        // A foreign text file is damage, not a cut tail.
        let (_, stop) = parse(b"#!/bin/sh\necho hello\n");
        assert!(matches!(stop, ParseStop::Corrupt { .. }), "{stop:?}");
        let (_, stop) = parse(b"*2x");
        assert!(matches!(stop, ParseStop::Corrupt { .. }), "{stop:?}");
    }

    #[test]
    fn replayable_drops_wrappers_and_open_blocks() {
        let xadd = |id: &str| LogRecord::Cmd(vec![b"XADD".to_vec(), b"s".to_vec(), id.into()]);
        let mut out = Vec::new();
        let mut cur = LogCursor::default();
        encode_records(&mut out, &mut cur, 0, 5, &[xadd("1-1")]);
        let multi = out.len();
        encode_records(&mut out, &mut cur, 0, 5, &[xadd("1-2"), xadd("1-3")]);
        let (items, stop) = parse_replayable(&out);
        assert_eq!(stop, ParseStop::End);
        // T, XADD, XADD, XADD: no MULTI/EXEC.
        assert_eq!(items.len(), 4);
        assert_eq!(items[2].0, multi + b"*1\r\n$5\r\nMULTI\r\n".len());
        for cut in multi + 1..out.len() {
            let (items, stop) = parse_replayable(&out[..cut]);
            assert_eq!(stop, ParseStop::Truncated { offset: multi }, "cut at {cut}");
            assert_eq!(items.len(), 2, "cut at {cut}");
        }
        let mut nested = out[..out.len() - 14].to_vec();
        nested.extend_from_slice(&out[multi..]);
        let (items, stop) = parse_replayable(&nested);
        assert_eq!(
            stop,
            ParseStop::Corrupt {
                offset: out.len() - 14,
                message: "nested MULTI".into()
            }
        );
        assert_eq!(items.len(), 2);
        let (_, stop) = parse_replayable(b"*1\r\n$4\r\nEXEC\r\n");
        assert!(
            matches!(stop, ParseStop::Corrupt { offset: 0, .. }),
            "{stop:?}"
        );
    }
}
