//! Unit tests of command behaviour (the differential suite compares with redis-server).

use crate::reply::Reply;
use crate::store::Store;

fn run(s: &Store, cmd: &str) -> Reply {
    let parts: Vec<&[u8]> = cmd.split(' ').map(|p| p.as_bytes()).collect();
    s.execute(&parts)
}

fn bulk(s: &str) -> Reply {
    Reply::bulk(s.as_bytes())
}

#[test]
fn xadd_xrange_roundtrip() {
    let s = Store::default();
    assert_eq!(run(&s, "XADD s 1-1 a 1"), bulk("1-1"));
    assert_eq!(run(&s, "XADD s 1-* b 2"), bulk("1-2"));
    assert_eq!(run(&s, "XLEN s"), Reply::Int(2));
    assert_eq!(
        run(&s, "XRANGE s - +"),
        Reply::Array(vec![
            Reply::Array(vec![bulk("1-1"), Reply::Array(vec![bulk("a"), bulk("1")])]),
            Reply::Array(vec![bulk("1-2"), Reply::Array(vec![bulk("b"), bulk("2")])]),
        ])
    );
    assert_eq!(
        run(&s, "XADD s 1-1 a 1"),
        Reply::Error(
            "ERR The ID specified in XADD is equal or smaller than the target stream top item"
                .into()
        )
    );
    assert_eq!(
        run(&s, "FOO"),
        Reply::Error("ERR unknown command 'FOO'".into())
    );
    assert_eq!(
        run(&s, "XGROUP"),
        Reply::Error("ERR wrong number of arguments for 'xgroup' command".into())
    );
    s.validate().unwrap();
}

#[test]
fn rename_copy_move_swapdb() {
    let s = Store::default();
    run(&s, "XADD s 1-1 a 1");
    run(&s, "XGROUP CREATE s g 0");
    assert_eq!(
        run(&s, "RENAME nokey x"),
        Reply::Error("ERR no such key".into())
    );
    assert_eq!(run(&s, "RENAME s s"), Reply::ok());
    assert_eq!(run(&s, "RENAME s t"), Reply::ok());
    assert_eq!(run(&s, "EXISTS s"), Reply::Int(0));
    assert!(!run(&s, "XINFO GROUPS t").is_error());
    assert_eq!(
        run(&s, "COPY t t"),
        Reply::Error("ERR source and destination objects are the same".into())
    );
    assert_eq!(run(&s, "COPY t u"), Reply::Int(1));
    assert_eq!(run(&s, "COPY t u"), Reply::Int(0));
    assert_eq!(run(&s, "COPY t u REPLACE DB 2"), Reply::Int(1));
    assert_eq!(
        run(&s, "COPY t u DB 16"),
        Reply::Error("ERR DB index is out of range".into())
    );
    assert_eq!(
        run(&s, "MOVE t 0"),
        Reply::Error("ERR source and destination objects are the same".into())
    );
    assert_eq!(run(&s, "MOVE t 2"), Reply::Int(1));
    assert_eq!(run(&s, "MOVE u 2"), Reply::Int(0));
    assert_eq!(
        run(&s, "MOVE u 99999999999"),
        Reply::Error(
            "ERR value is out of range, value must between -2147483648 and 2147483647".into()
        )
    );
    assert_eq!(run(&s, "SWAPDB 0 2"), Reply::ok());
    assert_eq!(run(&s, "XLEN t"), Reply::Int(1));
    assert_eq!(
        run(&s, "SWAPDB x 2"),
        Reply::Error("ERR invalid first DB index".into())
    );
    assert_eq!(
        run(&s, "SWAPDB 0 16"),
        Reply::Error("ERR DB index is out of range".into())
    );
    s.validate().unwrap();
}
