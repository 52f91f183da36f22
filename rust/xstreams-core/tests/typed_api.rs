//! The typed API (`Store::xadd`, the typed reads): the same outcomes, errors and log as
//! the commands sent as arguments.

use xstreams_core::command::XaddArgs;
use xstreams_core::store::persist::Options;
use xstreams_core::structures::stream::{RefPolicy, TrimArgs, TrimStrategy};
use xstreams_core::{CmdError, Config, Reply, Store, StreamId};

const NOW: i64 = 1_700_000_000_000;

fn cfg() -> Config {
    Config {
        stream_node_max_entries: 4,
        ..Config::default()
    }
}

fn open(dir: &std::path::Path) -> Store {
    let (s, _) = Store::open(dir, cfg(), Options::default()).unwrap();
    s.set_clock(Some(NOW));
    s
}

fn dump(s: &Store) -> (Reply, Reply) {
    (
        s.execute(&[b"XRANGE", b"s", b"-", b"+"]),
        s.execute(&[b"XINFO", b"STREAM", b"s", b"FULL"]),
    )
}

#[test]
fn typed_xadd_matches_argv_xadd_and_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let (da, db) = (tmp.path().join("a"), tmp.path().join("b"));
    let (a, b) = (open(&da), open(&db));
    let approx = TrimArgs {
        strategy: TrimStrategy::MaxLen(5),
        approx: true,
        limit: 400,
        policy: RefPolicy::KeepRef,
    };
    for i in 0..40u64 {
        let v = (i % 7).to_string();
        let pairs: [&[u8]; 2] = [b"v", v.as_bytes()];
        let mut args = XaddArgs::new(b"s", &pairs);
        args.idmp = Some((b"p", None));
        if i % 3 == 0 {
            args.trim = Some(approx);
        }
        let got = a.xadd(0, &args).unwrap().unwrap();
        let mut argv: Vec<&[u8]> = vec![b"XADD", b"s", b"IDMPAUTO", b"p"];
        if i % 3 == 0 {
            argv.extend_from_slice(&[b"MAXLEN", b"~", b"5"]);
        }
        argv.extend_from_slice(&[b"*", b"v", v.as_bytes()]);
        let want = b.execute(&argv);
        assert_eq!(Reply::id(&got.id), want, "row {i}");
        assert_eq!(got.duplicate, i >= 7, "row {i}");
        a.advance_clock(1);
        b.advance_clock(1);
    }
    assert_eq!(dump(&a), dump(&b));
    let before = dump(&a);
    a.close();
    b.close();
    // The log replays to the same state.
    let (a, b) = (open(&da), open(&db));
    assert_eq!(dump(&a), before);
    assert_eq!(dump(&b), before);
}

#[test]
fn typed_xadd_nomkstream_and_errors() {
    let s = Store::default();
    s.set_clock(Some(NOW));
    let pairs: [&[u8]; 2] = [b"f", b"v"];
    let mut args = XaddArgs::new(b"s", &pairs);
    args.no_mkstream = true;
    assert_eq!(s.xadd(0, &args), Ok(None));
    args.no_mkstream = false;
    args.id = Some((StreamId::new(0, 0), true));
    let zero = s.execute(&[b"XADD", b"s", b"0-0", b"f", b"v"]);
    assert_eq!(s.xadd(0, &args).map_err(Reply::from), Err(zero));
    args.id = Some((StreamId::new(5, 0), true));
    args.idmp = Some((b"p", Some(b"i")));
    let explicit = s.execute(&[b"XADD", b"s", b"IDMP", b"p", b"i", b"5-0", b"f", b"v"]);
    assert_eq!(s.xadd(0, &args).map_err(Reply::from), Err(explicit));
    args.idmp = Some((b"", Some(b"i")));
    args.id = None;
    let empty = s.execute(&[b"XADD", b"s", b"IDMP", b"", b"i", b"*", b"f", b"v"]);
    assert_eq!(s.xadd(0, &args).map_err(Reply::from), Err(empty));
    let odd: [&[u8]; 1] = [b"f"];
    let args = XaddArgs::new(b"s", &odd);
    assert_eq!(s.xadd(0, &args), Err(CmdError::arity("xadd")));
    s.execute(&[b"SET", b"str", b"x"]);
    let args = XaddArgs::new(b"str", &pairs);
    let wrong = s.execute(&[b"XADD", b"str", b"*", b"f", b"v"]);
    assert_eq!(s.xadd(0, &args).map_err(Reply::from), Err(wrong));
    assert_eq!(s.xadd(99, &args), Err(CmdError::db_index_out_of_range()));
}

fn entries_of(r: &Reply) -> Vec<(Vec<u8>, usize)> {
    let Reply::Array(streams) = r else {
        return Vec::new();
    };
    streams
        .iter()
        .map(|kv| match kv {
            Reply::Array(kv) => match (&kv[0], &kv[1]) {
                (Reply::Bulk(k), Reply::Array(e)) => (k.clone(), e.len()),
                _ => panic!("bad pair {kv:?}"),
            },
            _ => panic!("bad stream {kv:?}"),
        })
        .collect()
}

#[test]
fn maxcount_caps_entries_across_streams_in_order() {
    let s = Store::default();
    for k in [&b"s1"[..], b"s2", b"s3"] {
        for i in 1..=3u64 {
            s.execute(&[b"XADD", k, format!("{i}-0").as_bytes(), b"f", b"v"]);
        }
    }
    // COUNT 2 MAXCOUNT 3: two from s1, one from s2, s3 skipped.
    let r = s.execute(&[
        b"XREAD",
        b"COUNT",
        b"2",
        b"MAXCOUNT",
        b"3",
        b"STREAMS",
        b"s1",
        b"s2",
        b"s3",
        b"0",
        b"0",
        b"0",
    ]);
    assert_eq!(
        entries_of(&r),
        vec![(b"s1".to_vec(), 2), (b"s2".to_vec(), 1)]
    );
    // The caller's order decides, not the key names.
    let r = s.execute(&[
        b"XREAD",
        b"MAXCOUNT",
        b"4",
        b"STREAMS",
        b"s3",
        b"s1",
        b"0",
        b"0",
    ]);
    assert_eq!(
        entries_of(&r),
        vec![(b"s3".to_vec(), 3), (b"s1".to_vec(), 1)]
    );
    // XREADGROUP: entries past the cap are not delivered (not pending, still new).
    s.execute(&[b"XGROUP", b"CREATE", b"s1", b"g", b"0"]);
    s.execute(&[b"XGROUP", b"CREATE", b"s2", b"g", b"0"]);
    let r = s.execute(&[
        b"XREADGROUP",
        b"GROUP",
        b"g",
        b"c",
        b"MAXCOUNT",
        b"4",
        b"STREAMS",
        b"s1",
        b"s2",
        b">",
        b">",
    ]);
    assert_eq!(
        entries_of(&r),
        vec![(b"s1".to_vec(), 3), (b"s2".to_vec(), 1)]
    );
    let p = s.execute(&[b"XPENDING", b"s2", b"g"]);
    let Reply::Array(p) = p else { panic!() };
    assert_eq!(p[0], Reply::Int(1));
    let r = s.execute(&[
        b"XREADGROUP",
        b"GROUP",
        b"g",
        b"c",
        b"STREAMS",
        b"s1",
        b"s2",
        b">",
        b">",
    ]);
    assert_eq!(entries_of(&r), vec![(b"s2".to_vec(), 2)]);
}

#[test]
fn maxsize_is_soft_and_serves_an_oversized_first_entry() {
    let s = Store::default();
    let big = vec![b'x'; 1000];
    s.execute(&[b"XADD", b"a", b"1-0", b"f", &big]);
    s.execute(&[b"XADD", b"a", b"2-0", b"f", b"small"]);
    s.execute(&[b"XADD", b"b", b"1-0", b"f", b"small"]);
    // The first entry exceeds the cap and is served alone.
    let r = s.execute(&[
        b"XREAD", b"MAXSIZE", b"10", b"STREAMS", b"a", b"b", b"0", b"0",
    ]);
    assert_eq!(entries_of(&r), vec![(b"a".to_vec(), 1)]);
    // A cap that fits everything serves everything.
    let r = s.execute(&[
        b"XREAD", b"MAXSIZE", b"100000", b"STREAMS", b"a", b"b", b"0", b"0",
    ]);
    assert_eq!(entries_of(&r), vec![(b"a".to_vec(), 2), (b"b".to_vec(), 1)]);
    // Nothing to read stays a null reply.
    let r = s.execute(&[b"XREAD", b"MAXSIZE", b"10", b"STREAMS", b"a", b"$"]);
    assert_eq!(r, Reply::NilArray);
}

/// MAXSIZE as Redis 8.10 checks it (redis/redis#15282): against the reply bytes written
/// so far, before each stream and each entry. Under RESP2 the stream `a`'s header is 11
/// bytes (`*2\r\n$1\r\na\r\n`), each `[1-0, [f, v]]` entry 31, its entries' array length 4.
#[test]
fn maxsize_counts_the_reply_written_so_far() {
    let s = Store::default();
    for id in [b"1-0", b"2-0", b"3-0"] {
        s.execute(&[b"XADD", b"a", id, b"f", b"v"]);
    }
    s.execute(&[b"XADD", b"b", b"1-0", b"f", b"v"]);
    // 11 + 31 = 42 < 50 before the second entry: it is served, crossing the cap (73).
    let r = s.execute(&[b"XREAD", b"MAXSIZE", b"50", b"STREAMS", b"a", b"0"]);
    assert_eq!(entries_of(&r), vec![(b"a".to_vec(), 2)]);
    // One entry of `a` (42, then its length: 46); 46 >= 43 before `b`: `b` is left out.
    let r = s.execute(&[
        b"XREAD", b"COUNT", b"1", b"MAXSIZE", b"43", b"STREAMS", b"a", b"b", b"0", b"0",
    ]);
    assert_eq!(entries_of(&r), vec![(b"a".to_vec(), 1)]);
    // 46 < 47 before `b`: `b` is begun (57) and, the cap reached, stays with no entries.
    let r = s.execute(&[
        b"XREAD", b"COUNT", b"1", b"MAXSIZE", b"47", b"STREAMS", b"a", b"b", b"0", b"0",
    ]);
    assert_eq!(entries_of(&r), vec![(b"a".to_vec(), 1), (b"b".to_vec(), 0)]);
    // 57 < 58 before `b`'s entry: served.
    let r = s.execute(&[
        b"XREAD", b"COUNT", b"1", b"MAXSIZE", b"58", b"STREAMS", b"a", b"b", b"0", b"0",
    ]);
    assert_eq!(entries_of(&r), vec![(b"a".to_vec(), 1), (b"b".to_vec(), 1)]);
}

#[test]
fn maxcount_and_maxsize_argument_errors() {
    let s = Store::default();
    s.execute(&[b"XADD", b"a", b"1-0", b"f", b"v"]);
    let err = |r: Reply| match r {
        Reply::Error(e) => e.into_line(),
        other => panic!("not an error: {other:?}"),
    };
    let e = err(s.execute(&[b"XREAD", b"MAXCOUNT", b"0", b"STREAMS", b"a", b"0"]));
    assert_eq!(e, CmdError::maxcount_not_positive().into_line());
    let e = err(s.execute(&[b"XREAD", b"MAXCOUNT", b"x", b"STREAMS", b"a", b"0"]));
    assert_eq!(e, CmdError::not_integer().into_line());
    let e = err(s.execute(&[b"XREAD", b"MAXSIZE", b"-1", b"STREAMS", b"a", b"0"]));
    assert_eq!(e, CmdError::maxsize_not_positive().into_line());
    let e = err(s.execute(&[
        b"XREAD",
        b"COUNT",
        b"5",
        b"MAXCOUNT",
        b"2",
        b"STREAMS",
        b"a",
        b"0",
    ]));
    assert_eq!(e, CmdError::maxcount_below_count().into_line());
}

#[test]
fn typed_read_matches_the_command() {
    let s = Store::default();
    s.set_clock(Some(NOW));
    for i in 1..=5u64 {
        s.execute(&[b"XADD", b"a", format!("{i}-0").as_bytes(), b"f", b"v"]);
    }
    s.execute(&[b"XGROUP", b"CREATE", b"a", b"g", b"0"]);
    let keys: [&[u8]; 1] = [b"a"];
    let ids: [&[u8]; 1] = [b">"];
    let mut args = xstreams_core::command::ReadArgs::xreadgroup(b"g", b"c", &keys, &ids);
    args.count = 2;
    let got = s.read(0, &args).unwrap();
    assert_eq!(got.ids, vec![StreamId::new(1, 0), StreamId::new(2, 0)]);
    // Delivered: the next read continues after them, as the command would.
    let r = s.execute(&[b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"a", b">"]);
    assert_eq!(entries_of(&r), vec![(b"a".to_vec(), 3)]);
    let ids: [&[u8]; 1] = [b"$"];
    let args = xstreams_core::command::ReadArgs::xreadgroup(b"g", b"c", &keys, &ids);
    let e = s.read(0, &args).unwrap_err();
    assert_eq!(
        Reply::from(e),
        s.execute(&[b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"a", b"$"])
    );
}
