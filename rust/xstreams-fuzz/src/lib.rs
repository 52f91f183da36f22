//! Fuzz harnesses: each takes arbitrary bytes and drives one input surface of xstreams,
//! panicking only when the code under test misbehaves (a panic inside it, a parser
//! claiming bytes it was not given, a store whose `validate()` fails). They hold no
//! fuzzer dependency, so the same functions serve
//!
//! * the coverage-guided targets of `fuzz/` (cargo-fuzz, libFuzzer, nightly), and
//! * this crate's tests, which replay the committed corpus (`fuzz/corpus/<target>/`) and
//!   the crashes kept as regressions (`fuzz/regressions/<target>/`) on stable Rust, and
//!   run a seeded random mutation loop (`XS_FUZZ_ITERS`, `XS_FUZZ_SEED`).
//!
//! Targets: [`resp`] (the server's request parser), [`commands`] (argv sequences on a
//! store, `validate()` after each), [`log`] (the command-log loader), [`snapshot`] (the
//! snapshot loader, section checksums fixed up so the decoders behind them are reached),
//! [`restore`] (the DUMP payload decoder RESTORE uses).

mod commands;
mod input;
mod loaders;
pub mod sim;

pub use commands::commands;
pub use loaders::{log, restore, snapshot};

use xstreams_server::resp::{Limits, Parsed, Parser};

/// The names of the targets, as `fuzz/fuzz_targets/<name>.rs` and the corpus folders.
pub const TARGETS: &[&str] = &["resp", "commands", "log", "snapshot", "restore"];

/// Run the harness called `name` on `data`.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "resp" => resp(data),
        "commands" => commands(data),
        "log" => log(data),
        "snapshot" => snapshot(data),
        "restore" => restore(data),
        other => panic!("unknown fuzz target {other}"),
    }
}

/// The RESP request parser: `data[0]` chooses how the rest is split into reads (as a
/// socket would deliver it) and whether AUTH is pending. The parser must never consume
/// more than it was given, never return an empty command, and after an error its reply
/// line must be a protocol error.
pub fn resp(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(mode & 0x3f) + 1;
    let auth = mode & 0x40 != 0;
    let limits = Limits {
        max_bulk_len: if mode & 0x80 != 0 {
            64
        } else {
            Limits::default().max_bulk_len
        },
    };
    let mut parser = Parser::new();
    let mut buf: Vec<u8> = Vec::new();
    for piece in rest.chunks(chunk) {
        buf.extend_from_slice(piece);
        loop {
            let (n, r) = parser.parse(&buf, &limits, auth);
            assert!(n <= buf.len(), "parser consumed {n} of {} bytes", buf.len());
            buf.drain(..n);
            match r {
                Ok(Parsed::Incomplete) => break,
                Ok(Parsed::Empty) => assert!(n > 0, "an empty request consumed nothing"),
                Ok(Parsed::Command(args)) => {
                    assert!(n > 0, "a command consumed nothing");
                    assert!(!args.is_empty(), "empty command");
                }
                Err(e) => {
                    let line = e.reply();
                    let prefix =
                        xstreams_core::error::server::PROTOCOL_ERROR.trim_end_matches(": ");
                    assert!(
                        line.strip_prefix(b"-")
                            .is_some_and(|l| l.starts_with(prefix.as_bytes()))
                            && line.ends_with(b"\r\n"),
                        "bad protocol error reply {:?}",
                        String::from_utf8_lossy(&line)
                    );
                    return;
                }
            }
        }
    }
}
