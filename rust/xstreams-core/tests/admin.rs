//! INFO and CONFIG on the embedded store: INFO's sections from the engine's own figures
//! (keyspace with expires and avg_ttl, memory, persistence), CONFIG GET with globs,
//! CONFIG SET all or nothing with redis-server 8.8's error lines, and a durable store
//! that keeps the settings its data depends on across a reopen (but not `maxmemory`).

use std::path::Path;

use xstreams_core::command::reply::Reply;
use xstreams_core::store::persist::{Fsync, Options};
use xstreams_core::{Config, Store};

fn run(s: &Store, cmd: &str) -> Reply {
    let parts: Vec<&[u8]> = cmd.split(' ').map(|p| p.as_bytes()).collect();
    s.execute(&parts)
}

fn text(r: Reply) -> String {
    match r {
        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("not a bulk string: {other:?}"),
    }
}

fn err(r: Reply) -> String {
    match r {
        Reply::Error(e) => e.into_line(),
        other => panic!("not an error: {other:?}"),
    }
}

/// CONFIG GET's map as (name, value) strings.
fn pairs(r: Reply) -> Vec<(String, String)> {
    let Reply::Map(m) = r else {
        panic!("not a map: {r:?}")
    };
    m.into_iter()
        .map(|(k, v)| match (k, v) {
            (Reply::Bulk(k), Reply::Bulk(v)) => {
                (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap())
            }
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn info_keyspace_counts_keys_expires_and_average_ttl() {
    let s = Store::new(Config::default());
    s.set_clock(Some(1_000_000));
    run(&s, "XADD s 1-1 f v");
    run(&s, "SET a 1 PX 10000");
    run(&s, "SET b 1 PX 30000");
    assert_eq!(
        run(&s, "INFO keyspace"),
        Reply::Bulk(b"# Keyspace\r\ndb0:keys=3,expires=2,avg_ttl=20000,subexpiry=0\r\n".to_vec())
    );
    let all = text(run(&s, "INFO"));
    for section in [
        "# Server\r\n",
        "# Clients\r\nconnected_clients:0\r\n",
        "# Memory\r\nused_memory:",
        "# Persistence\r\n",
        "# Keyspace\r\n",
    ] {
        assert!(all.contains(section), "{section:?} missing from {all}");
    }
    assert!(all.contains("redis_version:8.8.0\r\n"));
    assert!(all.contains("aof_enabled:0\r\n"));
    assert!(all.contains("maxmemory_policy:noeviction\r\n"));
    // Unknown sections are left out; known ones in any case.
    assert_eq!(text(run(&s, "INFO nosuch")), "");
    assert!(text(run(&s, "INFO MEMORY CPU")).starts_with("# Memory\r\n"));
}

#[test]
fn config_get_globs_and_set_checks_like_redis() {
    let s = Store::new(Config::default());
    assert_eq!(
        pairs(run(&s, "CONFIG GET stream-node-max-entries")),
        [("stream-node-max-entries".into(), "100".into())]
    );
    let got = pairs(run(&s, "CONFIG GET stream-node-* MAXMEMORY"));
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "stream-node-max-entries",
            "stream-node-max-bytes",
            "maxmemory"
        ]
    );
    assert!(pairs(run(&s, "CONFIG GET nosuch")).is_empty());
    assert_eq!(
        pairs(run(&s, "CONFIG GET databases")),
        [("databases".into(), "16".into())]
    );

    assert_eq!(
        run(&s, "CONFIG SET stream-node-max-entries 50 maxmemory 10mb"),
        Reply::ok()
    );
    assert_eq!(
        pairs(run(&s, "CONFIG GET maxmemory")),
        [("maxmemory".into(), "10485760".into())]
    );
    // All or nothing: a bad value leaves every parameter as it was.
    assert_eq!(
        err(run(
            &s,
            "CONFIG SET stream-node-max-entries 7 stream-idmp-maxsize 0"
        )),
        "ERR CONFIG SET failed (possibly related to argument 'stream-idmp-maxsize') - \
         argument must be between 1 and 10000 inclusive"
    );
    assert_eq!(s.config_get("stream-node-max-entries").unwrap(), "50");
    assert_eq!(
        err(run(&s, "CONFIG SET no-such-setting 1")),
        "ERR Unknown option or number of arguments for CONFIG SET - 'no-such-setting'"
    );
    assert_eq!(
        err(run(&s, "CONFIG SET databases 3 nosuch 2")),
        "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set \
         immutable config"
    );
    assert_eq!(
        err(run(&s, "CONFIG SET maxmemory 1 maxmemory 2")),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - duplicate parameter"
    );
    assert_eq!(
        err(run(&s, "CONFIG SET maxmemory 1 stream-node-max-bytes")),
        "ERR wrong number of arguments for 'config|set' command"
    );
    assert_eq!(
        err(run(&s, "CONFIG SET maxmemory abc")),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be \
         a memory value"
    );
    assert_eq!(
        err(run(&s, "CONFIG REWRITE")),
        "ERR The server is running without a config file"
    );
    assert_eq!(run(&s, "CONFIG RESETSTAT"), Reply::ok());
    let Reply::Array(help) = run(&s, "CONFIG HELP") else {
        panic!("CONFIG HELP")
    };
    assert!(help.len() > 4);
}

fn open(dir: &Path) -> Store {
    let opts = Options {
        fsync: Fsync::Always,
        ..Options::default()
    };
    Store::open(dir, Config::default(), opts).expect("open").0
}

#[test]
fn durable_store_keeps_config_set_of_its_data_settings() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = open(dir.path());
        assert_eq!(
            run(
                &s,
                "CONFIG SET stream-node-max-entries 2 maxmemory 1gb stream-idmp-duration 50"
            ),
            Reply::ok()
        );
        for i in 1..=5 {
            run(&s, &format!("XADD s {i}-1 f v"));
        }
        assert!(text(run(&s, "INFO persistence")).contains("aof_enabled:1\r\n"));
    }
    let s = open(dir.path());
    assert_eq!(s.config_get("stream-node-max-entries").unwrap(), "2");
    assert_eq!(s.config_get("stream-idmp-duration").unwrap(), "50");
    // Nodes split as they did before the reopen (the setting was in force on replay).
    let Reply::Map(info) = run(&s, "XINFO STREAM s") else {
        panic!("XINFO")
    };
    let keys = info
        .iter()
        .find(|(k, _)| *k == Reply::bulk_str("radix-tree-keys"))
        .map(|(_, v)| v.clone());
    assert_eq!(keys, Some(Reply::Int(3)), "radix-tree-keys");
    // Limits come from whoever opens the store, not from its log.
    assert_eq!(s.config_get("maxmemory").unwrap(), "0");
    s.validate().unwrap();
}

#[test]
fn config_set_through_the_api_says_which_setting_and_why_and_changes_nothing_when_refused() {
    use xstreams_core::error::ConfigError;
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    s.config_set("stream-idmp-maxsize", "7").unwrap();
    match s.config_set("stream-idmp-maxsize", "0") {
        Err(ConfigError::Invalid { name, reason }) => {
            assert_eq!(name, "stream-idmp-maxsize");
            assert_eq!(reason, "argument must be between 1 and 10000 inclusive");
        }
        other => panic!("not an invalid value: {other:?}"),
    }
    assert_eq!(s.config_get("stream-idmp-maxsize").unwrap(), "7");
    match s.config_set("no-such-setting", "1") {
        Err(e @ ConfigError::Unknown { .. }) => assert_eq!(
            e.to_cmd_error("No-Such-Setting").into_line(),
            "ERR Unknown option or number of arguments for CONFIG SET - 'No-Such-Setting'"
        ),
        other => panic!("not an unknown name: {other:?}"),
    }
    // The refusal left nothing in the log: a reopen sees the last accepted value.
    drop(s);
    let s = open(dir.path());
    assert_eq!(s.config_get("stream-idmp-maxsize").unwrap(), "7");
}
