//! Unit tests of command behaviour (the differential suite compares with redis-server).

use crate::command::reply::Reply;
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
        run(&s, "XADD s 1-1 a 1").error_line(),
        Some("ERR The ID specified in XADD is equal or smaller than the target stream top item")
    );
    assert_eq!(
        run(&s, "FOO").error_line(),
        Some("ERR unknown command 'FOO'")
    );
    assert_eq!(
        run(&s, "XGROUP").error_line(),
        Some("ERR wrong number of arguments for 'xgroup' command")
    );
    s.validate().unwrap();
}

#[test]
fn rename_copy_move_swapdb() {
    let s = Store::default();
    run(&s, "XADD s 1-1 a 1");
    run(&s, "XGROUP CREATE s g 0");
    assert_eq!(
        run(&s, "RENAME nokey x").error_line(),
        Some("ERR no such key")
    );
    assert_eq!(run(&s, "RENAME s s"), Reply::ok());
    assert_eq!(run(&s, "RENAME s t"), Reply::ok());
    assert_eq!(run(&s, "EXISTS s"), Reply::Int(0));
    assert!(!run(&s, "XINFO GROUPS t").is_error());
    assert_eq!(
        run(&s, "COPY t t").error_line(),
        Some("ERR source and destination objects are the same")
    );
    assert_eq!(run(&s, "COPY t u"), Reply::Int(1));
    assert_eq!(run(&s, "COPY t u"), Reply::Int(0));
    assert_eq!(run(&s, "COPY t u REPLACE DB 2"), Reply::Int(1));
    assert_eq!(
        run(&s, "COPY t u DB 16").error_line(),
        Some("ERR DB index is out of range")
    );
    assert_eq!(
        run(&s, "MOVE t 0").error_line(),
        Some("ERR source and destination objects are the same")
    );
    assert_eq!(run(&s, "MOVE t 2"), Reply::Int(1));
    assert_eq!(run(&s, "MOVE u 2"), Reply::Int(0));
    assert_eq!(
        run(&s, "MOVE u 99999999999").error_line(),
        Some("ERR value is out of range, value must between -2147483648 and 2147483647")
    );
    assert_eq!(run(&s, "SWAPDB 0 2"), Reply::ok());
    assert_eq!(run(&s, "XLEN t"), Reply::Int(1));
    assert_eq!(
        run(&s, "SWAPDB x 2").error_line(),
        Some("ERR invalid first DB index")
    );
    assert_eq!(
        run(&s, "SWAPDB 0 16").error_line(),
        Some("ERR DB index is out of range")
    );
    s.validate().unwrap();
}

#[test]
fn expiry_commands_answer_as_redis() {
    let s = Store::default();
    s.set_clock(Some(1_000_000));
    let int = Reply::Int;
    assert_eq!(run(&s, "TTL k"), int(-2));
    assert_eq!(run(&s, "EXPIRE k 10"), int(0));
    run(&s, "XADD k 1-1 f v");
    assert_eq!(run(&s, "TTL k"), int(-1));
    assert_eq!(run(&s, "EXPIRE k 10 XX"), int(0));
    assert_eq!(run(&s, "EXPIRE k 10 NX"), int(1));
    assert_eq!(run(&s, "PTTL k"), int(10_000));
    assert_eq!(run(&s, "EXPIRETIME k"), int(1_010));
    assert_eq!(run(&s, "PEXPIRETIME k"), int(1_010_000));
    assert_eq!(run(&s, "EXPIRE k 5 GT"), int(0));
    assert_eq!(run(&s, "EXPIRE k 5 LT"), int(1));
    assert_eq!(run(&s, "PEXPIRE k 20000 gt"), int(1));
    assert_eq!(run(&s, "PEXPIREAT k 1000500 LT"), int(1));
    assert_eq!(run(&s, "TTL k"), int(1), "0.5 s rounds up");
    assert_eq!(
        run(&s, "EXPIRE k 5 NX GT").error_line(),
        Some("ERR NX and XX, GT or LT options at the same time are not compatible")
    );
    assert_eq!(
        run(&s, "EXPIRE k 5 GT LT").error_line(),
        Some("ERR GT and LT options at the same time are not compatible")
    );
    assert_eq!(
        run(&s, "EXPIRE k 5 FOO").error_line(),
        Some("ERR Unsupported option FOO")
    );
    assert_eq!(
        run(&s, "EXPIRE k x").error_line(),
        Some("ERR value is not an integer or out of range")
    );
    assert_eq!(
        run(&s, "EXPIRE k 9223372036854776").error_line(),
        Some("ERR invalid expire time in 'expire' command")
    );
    assert_eq!(
        run(&s, "PEXPIRE k 9223372036854775807").error_line(),
        Some("ERR invalid expire time in 'pexpire' command")
    );
    assert_eq!(run(&s, "PERSIST k"), int(1));
    assert_eq!(run(&s, "PERSIST k"), int(0));
    assert_eq!(run(&s, "TTL k"), int(-1));
    // Expired keys vanish at once.
    assert_eq!(run(&s, "PEXPIRE k 100"), int(1));
    s.advance_clock(100);
    assert_eq!(run(&s, "EXISTS k"), int(0));
    assert_eq!(run(&s, "TTL k"), int(-2));
    // An expiry in the past deletes the key.
    run(&s, "SET a b");
    assert_eq!(run(&s, "EXPIREAT a 1"), int(1));
    assert_eq!(run(&s, "EXISTS a"), int(0));
    // The active expiry removes keys nobody reads.
    run(&s, "SET b c PX 50");
    s.advance_clock(200);
    run(&s, "PING");
    s.with_keyspace(|ks| assert_eq!(ks.dbs[0].len(), 0));
    s.validate().unwrap();
}

/// Each typed command is a whole command with one log builder: its argument-vector
/// handler (parse, then the same typed function) leaves exactly the record the typed call
/// leaves, and the arguments it was parsed from are not logged again.
#[test]
fn handlers_and_typed_commands_log_the_same_one_record() {
    use crate::command::{self, Ctx, LogRecord, Propagation, XaddArgs};
    use crate::structures::id::StreamId;
    use crate::structures::stream::{RefPolicy, TrimArgs, TrimStrategy};

    fn logged(s: &Store, f: impl FnOnce(&mut Ctx<'_>)) -> Vec<LogRecord> {
        let mut sess = s.session().unwrap();
        sess.run(0, |ctx| {
            ctx.prop = Some(Propagation::default());
            f(ctx);
            Ok(ctx.prop.take().unwrap().also)
        })
        .unwrap()
    }
    let stores = || {
        let s = Store::default();
        s.set_clock(Some(5));
        for cmd in [
            "XADD s 1-1 f v",
            "XADD s 2-1 f v",
            "XGROUP CREATE s g 0",
            "XREADGROUP GROUP g c STREAMS s >",
        ] {
            run(&s, cmd);
        }
        s
    };
    let (a, b) = (stores(), stores());
    let argv = |ctx: &mut Ctx<'_>, line: &str| {
        let parts: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        command::try_execute(ctx, &parts).unwrap();
    };
    let ids = [StreamId::new(1, 1)];
    let by_argv = logged(&a, |ctx| argv(ctx, "XACK s g 1-1"));
    let typed = logged(&b, |ctx| {
        command::xack_typed(ctx, b"s", b"g", &ids).unwrap();
    });
    assert_eq!(by_argv.len(), 1);
    assert_eq!(by_argv, typed);

    let by_argv = logged(&a, |ctx| argv(ctx, "xadd s maxlen ~ 1 * f v"));
    let pairs: [&[u8]; 2] = [b"f", b"v"];
    let mut x = XaddArgs::new(b"s", &pairs);
    x.trim = Some(TrimArgs {
        strategy: TrimStrategy::MaxLen(1),
        approx: true,
        limit: 10_000,
        policy: RefPolicy::KeepRef,
    });
    let typed = logged(&b, |ctx| {
        command::xadd_typed(ctx, &x).unwrap();
    });
    assert_eq!(by_argv.len(), 1);
    assert_eq!(by_argv, typed);
    assert_eq!(run(&a, "XRANGE s - +"), run(&b, "XRANGE s - +"));
}
