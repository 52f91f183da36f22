//! The command layer: a byte-driven sequence of argv run on one store (two databases,
//! RESP2/RESP3, a pinned clock advanced by the input), `validate()` after every command.
//! The commands come from the command table (each row's fuzz weight).
//! Blocking reads that would wait are cancelled at once (the server's timeout path).

use std::sync::OnceLock;

use xstreams_core::command::table;
use xstreams_core::store::Step;
use xstreams_core::{Config, Store};

use crate::input::Input;

/// The commands drawn: the command table's, each as often as its row's fuzz weight says.
fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| table::fuzz_commands().collect())
}

/// Tokens arguments are drawn from: keys, groups, consumers, IDs (valid and quirky),
/// numbers and every keyword the stream commands take.
const TOKENS: &[&str] = &[
    "s0",
    "s0",
    "s0",
    "s1",
    "s1",
    "k",
    "g1",
    "g1",
    "g2",
    "c1",
    "c1",
    "c2",
    "",
    "*",
    "*",
    "$",
    ">",
    "+",
    "-",
    "0",
    "0-0",
    "1",
    "1-1",
    "1-2",
    "2",
    "5-*",
    "18446744073709551615-18446744073709551615",
    "18446744073709551615",
    "-1",
    "1.5",
    "100",
    "1000",
    "1700000000000",
    "9223372036854775807",
    "-9223372036854775808",
    "CREATE",
    "DESTROY",
    "SETID",
    "CREATECONSUMER",
    "DELCONSUMER",
    "MKSTREAM",
    "ENTRIESREAD",
    "STREAMS",
    "GROUP",
    "COUNT",
    "BLOCK",
    "NOACK",
    "CLAIM",
    "IDLE",
    "TIME",
    "RETRYCOUNT",
    "FORCE",
    "JUSTID",
    "LASTID",
    "MAXLEN",
    "MINID",
    "LIMIT",
    "~",
    "=",
    "NOMKSTREAM",
    "KEEPREF",
    "DELREF",
    "ACKED",
    "IDS",
    "IDMP",
    "IDMPAUTO",
    "p1",
    "iid1",
    "STREAM",
    "GROUPS",
    "CONSUMERS",
    "FULL",
    "DURATION",
    "MAXSIZE",
    "MATCH",
    "TYPE",
    "stream",
    "string",
    "REPLACE",
    "DB",
    "NX",
    "XX",
    "GT",
    "LT",
    "SET",
    "GET",
    "stream-node-max-entries",
    "stream-node-max-bytes",
    "FAIL",
    "SILENT",
    "FATAL",
];

/// Run the byte program in `data`.
pub fn commands(data: &[u8]) {
    let mut input = Input::new(data);
    let store = Store::new(Config {
        stream_node_max_entries: [0, 1, 3, 100][usize::from(input.byte() % 4)],
        ..Config::default()
    });
    store.set_clock(Some(1_700_000_000_000));
    let mut trace: Vec<String> = Vec::new();
    let mut ids: Vec<Vec<u8>> = Vec::new();
    let mut db = 0usize;
    let mut proto = 2u8;
    let mut steps = 0;
    while !input.is_empty() && steps < 256 {
        steps += 1;
        match input.byte() % 16 {
            0 => {
                let d = *input.pick(&[0i64, 1, 10, 1000, 60_000, 10_000_000]);
                store.advance_clock(d);
                trace.push(format!("<advance {d}>"));
                continue;
            }
            1 => {
                let b = input.byte();
                db = usize::from(b & 1);
                proto = if b & 2 != 0 { 3 } else { 2 };
                continue;
            }
            2 => store.sweep(),
            _ => {}
        }
        let mut argv: Vec<Vec<u8>> = vec![input.pick(names()).as_bytes().to_vec()];
        let nargs = usize::from(input.byte() % 14);
        for _ in 0..nargs {
            let arg = match input.byte() % 8 {
                0 => input.bytes(24).to_vec(),
                1 if !ids.is_empty() => input.pick(&ids).clone(),
                _ => input.pick(TOKENS).as_bytes().to_vec(),
            };
            argv.push(arg);
        }
        trace.push(format!(
            "[db{db} resp{proto}] {:?}",
            argv.iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
        ));
        let refs: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
        let reply = match store.start(db, proto, &refs) {
            Step::Done(r) => r,
            Step::Blocked(call) => {
                store.cancel(call);
                continue;
            }
        };
        if argv[0].eq_ignore_ascii_case(b"XADD") {
            if let xstreams_core::Reply::Bulk(id) = reply {
                if ids.len() < 64 {
                    ids.push(id);
                }
            }
        }
        if let Err(e) = store.validate() {
            panic!("validate() failed: {e}\nafter:\n{}", trace.join("\n"));
        }
    }
}
