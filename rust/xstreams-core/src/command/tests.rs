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
