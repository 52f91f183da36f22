//! Writes the seed corpus of every fuzz target into `fuzz/corpus/<target>/` (run by hand
//! when a format changes: `cargo test -p xstreams-fuzz --test seed_corpus -- --ignored`).
//! Seeds are real files the project writes (logs, snapshots of a store with streams,
//! groups, pending entries, IDMP producers) and well-formed requests, so mutations start
//! from deep inside each decoder.

use std::fs;
use std::path::PathBuf;

use xstreams_core::store::persist::{log_name, snapshot_name, Fsync, Options};
use xstreams_core::{Config, Store};
use xstreams_server::resp::encode_command;

fn corpus(target: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    fs::create_dir_all(&d).expect("corpus dir");
    d
}

const SCRIPT: &[&str] = &[
    "XADD s0 1-1 a 1 b 2",
    "XADD s0 1-2 a 3",
    "XADD s0 * c 4",
    "XGROUP CREATE s0 g1 0",
    "XREADGROUP GROUP g1 c1 COUNT 2 STREAMS s0 >",
    "XADD s1 IDMP p1 iid1 5-1 f v",
    "XADD s1 IDMPAUTO p2 * f w",
    "XGROUP CREATE s1 g2 $ MKSTREAM",
    "XADD s1 * x y",
    "XREADGROUP GROUP g2 c2 STREAMS s1 >",
    "XACK s0 g1 1-1",
    "XCLAIM s0 g1 c2 0 1-2",
    "XNACK s0 g1 1-2",
    "XDEL s0 1-2",
    "XTRIM s0 MAXLEN 10",
    "SET k v",
];

fn words(line: &str) -> Vec<&[u8]> {
    line.split(' ').map(str::as_bytes).collect()
}

#[test]
#[ignore = "writes the seed corpus into the source tree"]
fn write_seed_corpus() {
    // resp: each script line as a RESP request and as an inline one, whole and in reads
    // of 3 bytes; one pipeline of all of them.
    let dir = corpus("resp");
    let mut pipeline = vec![0x3f];
    for (i, line) in SCRIPT.iter().enumerate() {
        let req = encode_command(&words(line));
        pipeline.extend_from_slice(&req);
        fs::write(
            dir.join(format!("multibulk-{i}")),
            [&[0x3f][..], &req].concat(),
        )
        .unwrap();
        let inline = format!("{line}\r\n");
        fs::write(
            dir.join(format!("inline-{i}")),
            [&[0x02][..], inline.as_bytes()].concat(),
        )
        .unwrap();
    }
    fs::write(dir.join("pipeline"), &pipeline).unwrap();

    // commands: short byte programs (any bytes are a program; these reach many commands).
    let dir = corpus("commands");
    for i in 0..16u8 {
        let prog: Vec<u8> = (0..96u32)
            .map(|j| (j.wrapping_mul(31).wrapping_add(u32::from(i) * 17) % 251) as u8)
            .collect();
        fs::write(dir.join(format!("program-{i}")), prog).unwrap();
    }

    // log and snapshot: a durable store's own files.
    let tmp = std::env::temp_dir().join(format!("xstreams-seed-corpus-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let opts = Options {
        fsync: Fsync::No,
        ..Options::default()
    };
    let (store, _) = Store::open(&tmp, Config::default(), opts).unwrap();
    store.set_clock(Some(1_700_000_000_000));
    for line in SCRIPT {
        store.execute(&words(line));
        store.advance_clock(7);
    }
    let (logs, snaps) = (corpus("log"), corpus("snapshot"));
    fs::write(
        logs.join("before-compaction"),
        fs::read(tmp.join(log_name(1))).unwrap(),
    )
    .unwrap();
    store.compact().unwrap();
    for line in &SCRIPT[..6] {
        store.execute(&words(line));
    }
    // restore: DUMP payloads of a stream with groups, one with IDMP, a string.
    let restore = corpus("restore");
    for key in ["s0", "s1", "k"] {
        if let xstreams_core::Reply::Bulk(p) = store.execute(&[b"DUMP", key.as_bytes()]) {
            fs::write(restore.join(format!("dump-{key}")), p).unwrap();
        }
    }
    store.close();
    for e in fs::read_dir(&tmp).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let data = fs::read(e.path()).unwrap();
        if (1..10).any(|s| name == log_name(s)) {
            fs::write(logs.join(&name), data).unwrap();
        } else if (1..10).any(|s| name == snapshot_name(s)) {
            fs::write(snaps.join(&name), data).unwrap();
        }
    }
    fs::remove_dir_all(&tmp).unwrap();
    assert!(fs::read_dir(logs).unwrap().count() > 0);
    assert!(fs::read_dir(snaps).unwrap().count() > 0);
}
