//! End-to-end tests of the server over loopback sockets (std only, no client library).

mod support;

use std::time::{Duration, Instant};

use support::*;
use xstreams_server::{start, ServerConfig};

#[test]
fn commands_pipelines_and_errors() {
    let h = server(ServerConfig::default());
    let mut c = Client::connect(h.local_addrs()[0]);
    assert_eq!(c.call(&["PING"]), "+PONG");
    c.send(&["XADD", "s", "1-1", "f", "v"]);
    c.send(&["XADD", "s", "1-2", "f", "w"]);
    c.send(&["XLEN", "s"]);
    assert_eq!(c.read(), "1-1");
    assert_eq!(c.read(), "1-2");
    assert_eq!(c.read(), ":2");
    assert_eq!(
        c.call(&["NOSUCH", "a"]),
        "-ERR unknown command 'NOSUCH', with args beginning with: 'a' "
    );
    assert_eq!(
        c.call(&["XLEN"]),
        "-ERR wrong number of arguments for 'xlen' command"
    );
    assert_eq!(
        c.call(&["CLIENT", "NOPE"]),
        "-ERR unknown subcommand 'NOPE'. Try CLIENT HELP."
    );
    assert_eq!(
        c.call(&["CLIENT", "SETNAME"]),
        "-ERR wrong number of arguments for 'client|setname' command"
    );
    // Inline commands.
    c.raw(b"PING\r\nECHO \"a b\"\n");
    assert_eq!(c.read(), "+PONG");
    assert_eq!(c.read(), "a b");
    assert_eq!(c.call(&["SELECT", "16"]), "-ERR DB index is out of range");
    assert_eq!(
        c.call(&["SELECT", "x"]),
        "-ERR value is not an integer or out of range"
    );
    assert_eq!(c.call(&["SELECT", "1"]), "+OK");
    assert_eq!(c.call(&["XLEN", "s"]), ":0");
    assert_eq!(
        c.call(&["HELLO", "3"]),
        "[server,redis,version,8.8.0,proto,:3,id,:1,mode,standalone,role,master,modules,[]]"
    );
    assert_eq!(
        c.call(&["HELLO", "4"]),
        "-NOPROTO unsupported protocol version"
    );
    assert_eq!(
        c.call(&["DEBUG", "SET-CLOCK", "1"]).split(' ').next(),
        Some("-ERR")
    );
    drop(c);
    h.shutdown();
    assert!(h.wait_timeout(Duration::from_secs(10)));
}

#[test]
fn multi_exec() {
    let h = server(ServerConfig::default());
    let mut c = Client::connect(h.local_addrs()[0]);
    assert_eq!(c.call(&["MULTI"]), "+OK");
    assert_eq!(c.call(&["XADD", "s", "1-1", "a", "1"]), "+QUEUED");
    assert_eq!(c.call(&["SELECT", "2"]), "+QUEUED");
    assert_eq!(c.call(&["XADD", "s", "2-1", "a", "1"]), "+QUEUED");
    assert_eq!(c.call(&["EXEC"]), "[1-1,+OK,2-1]");
    assert_eq!(c.call(&["XLEN", "s"]), ":1");
    assert_eq!(c.call(&["MULTI"]), "+OK");
    assert_eq!(c.call(&["MULTI"]), "-ERR MULTI calls can not be nested");
    assert_eq!(c.call(&["XADD", "s", "3-1", "a", "1"]), "+QUEUED");
    assert_eq!(
        c.call(&["XADD", "s"]),
        "-ERR wrong number of arguments for 'xadd' command"
    );
    assert_eq!(
        c.call(&["EXEC"]),
        "-EXECABORT Transaction discarded because of previous errors."
    );
    assert_eq!(c.call(&["XLEN", "s"]), ":1");
    assert_eq!(c.call(&["EXEC"]), "-ERR EXEC without MULTI");
    assert_eq!(c.call(&["DISCARD"]), "-ERR DISCARD without MULTI");
    assert_eq!(c.call(&["MULTI"]), "+OK");
    assert_eq!(
        c.call(&["SHUTDOWN"]),
        "-ERR Command not allowed inside a transaction"
    );
    assert_eq!(c.call(&["DISCARD"]), "+OK");
    // A blocking read inside MULTI does not block.
    assert_eq!(c.call(&["MULTI"]), "+OK");
    assert_eq!(
        c.call(&["XREAD", "BLOCK", "0", "STREAMS", "nope", "$"]),
        "+QUEUED"
    );
    assert_eq!(c.call(&["EXEC"]), "[nil]");
}

/// A MULTI/EXEC whose queue SELECTs between databases is one transaction: no command of
/// another connection runs between its commands (the writer adds to `a` in db 1 and `b`
/// in db 0 in one EXEC; the reader, also across SELECTs, always sees equal lengths).
#[test]
fn exec_across_select_is_atomic() {
    let h = server(ServerConfig::default());
    let addr = h.local_addrs()[0];
    let writer = std::thread::spawn(move || {
        let mut w = Client::connect(addr);
        for _ in 0..2000 {
            for cmd in [
                &["MULTI"][..],
                &["SELECT", "1"],
                &["XADD", "a", "*", "f", "v"],
                &["SELECT", "0"],
                &["XADD", "b", "*", "f", "v"],
            ] {
                w.send(cmd);
            }
            for _ in 0..5 {
                w.read();
            }
            let reply = w.call(&["EXEC"]);
            assert!(reply.starts_with("[+OK,"), "{reply}");
        }
    });
    let mut r = Client::connect(addr);
    let mut checked = 0;
    while !writer.is_finished() {
        for cmd in [
            &["MULTI"][..],
            &["SELECT", "1"],
            &["XLEN", "a"],
            &["SELECT", "0"],
            &["XLEN", "b"],
        ] {
            r.send(cmd);
        }
        for _ in 0..5 {
            r.read();
        }
        let reply = r.call(&["EXEC"]);
        let parts: Vec<&str> = reply.trim_matches(['[', ']']).split(',').collect();
        assert_eq!(parts[1], parts[3], "EXEC interleaved with another: {reply}");
        checked += 1;
    }
    writer.join().unwrap();
    assert!(checked > 0);
    assert_eq!(r.call(&["SELECT", "1"]), "+OK");
    assert_eq!(r.call(&["XLEN", "a"]), ":2000");
}

/// INFO stats counts keys removed by expiry as redis-server 8.8 does: lazily on access,
/// by the active expiry, a SET whose absolute time has passed; not an EXPIRE with a
/// past time (that is a delete).
#[test]
fn info_counts_expired_keys() {
    let h = server(ServerConfig::default());
    let mut c = Client::connect(h.local_addrs()[0]);
    assert_eq!(info_field_in(&mut c, "stats", "expired_keys"), "0");
    assert_eq!(c.call(&["SET", "a", "1", "PX", "1"]), "+OK");
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(c.call(&["GET", "a"]), "nil");
    assert_eq!(info_field_in(&mut c, "stats", "expired_keys"), "1");
    // The server's 100 ms cron may have removed `a` in those 5 ms before the GET did.
    let active: u32 = info_field_in(&mut c, "stats", "expired_keys_active")
        .parse()
        .unwrap();
    assert!(active <= 1);
    assert_eq!(c.call(&["SET", "b", "1"]), "+OK");
    assert_eq!(c.call(&["EXPIRE", "b", "-1"]), ":1");
    assert_eq!(info_field_in(&mut c, "stats", "expired_keys"), "1");
    assert_eq!(c.call(&["SET", "c", "1", "EXAT", "1"]), "+OK");
    assert_eq!(info_field_in(&mut c, "stats", "expired_keys"), "2");
    let now_active = info_field_in(&mut c, "stats", "expired_keys_active");
    assert_eq!(now_active, active.to_string());
    assert_eq!(c.call(&["XADD", "s", "1-1", "f", "v"]), "1-1");
    assert_eq!(c.call(&["PEXPIRE", "s", "20"]), ":1");
    let want = (active + 1).to_string();
    wait_for(|| info_field_in(&mut c, "stats", "expired_keys_active") == want);
    assert_eq!(info_field_in(&mut c, "stats", "expired_keys"), "3");
}

#[test]
fn blocking_reads_wake_time_out_and_cancel() {
    let h = server(ServerConfig::default());
    let addr = h.local_addrs()[0];
    let mut a = Client::connect(addr);
    let mut b = Client::connect(addr);
    // Woken by a write from another client; replies stay in pipeline order.
    a.send(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]);
    a.send(&["PING"]);
    wait_for(|| info_field(&mut b, "blocked_clients") == "1");
    assert_eq!(info_field(&mut b, "total_blocking_keys"), "1");
    assert_eq!(b.call(&["XADD", "s", "5-1", "f", "v"]), "5-1");
    assert_eq!(a.read(), "[[s,[[5-1,[f,v]]]]]");
    assert_eq!(a.read(), "+PONG");
    // Timeout.
    let t = Instant::now();
    assert_eq!(
        a.call(&["XREAD", "BLOCK", "200", "STREAMS", "s", "$"]),
        "nil"
    );
    assert!(t.elapsed() >= Duration::from_millis(190));
    // Group destroyed while blocked: the reader gets the error.
    assert_eq!(b.call(&["XGROUP", "CREATE", "s", "g", "$"]), "+OK");
    a.send(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "BLOCK",
        "0",
        "STREAMS",
        "s",
        ">",
    ]);
    wait_for(|| info_field(&mut b, "blocked_clients") == "1");
    assert_eq!(info_field(&mut b, "total_blocking_keys_on_nokey"), "1");
    assert_eq!(b.call(&["DEL", "s"]), ":1");
    assert!(a.read().starts_with("-NOGROUP"));
    // A closed connection cancels its wait.
    let mut c = Client::connect(addr);
    c.send(&["XREAD", "BLOCK", "0", "STREAMS", "x", "$"]);
    wait_for(|| info_field(&mut b, "blocked_clients") == "1");
    drop(c);
    wait_for(|| info_field(&mut b, "blocked_clients") == "0");
    // CLIENT UNBLOCK.
    let id = a.call(&["CLIENT", "ID"]);
    a.send(&["XREAD", "BLOCK", "0", "STREAMS", "x", "$"]);
    wait_for(|| info_field(&mut b, "blocked_clients") == "1");
    assert_eq!(b.call(&["CLIENT", "UNBLOCK", &id[1..], "ERROR"]), ":1");
    assert_eq!(a.read(), "-UNBLOCKED client unblocked via CLIENT UNBLOCK");
}

#[test]
fn protocol_errors_close_only_that_connection() {
    let h = server(ServerConfig::default());
    let addr = h.local_addrs()[0];
    let mut other = Client::connect(addr);
    assert_eq!(other.call(&["PING"]), "+PONG");
    let cases: Vec<(&[u8], &str)> = vec![
        (b"*x\r\n", "-ERR Protocol error: invalid multibulk length"),
        (b"*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length"),
        (
            b"*1\r\n$600000000\r\n",
            "-ERR Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\n:1\r\n",
            "-ERR Protocol error: expected '$', got ':'",
        ),
        (
            b"ECHO \"abc\r\n",
            "-ERR Protocol error: unbalanced quotes in request",
        ),
    ];
    for (bytes, want) in cases {
        let mut c = Client::connect(addr);
        // Commands before the bad frame run and reply first.
        c.raw(b"*1\r\n$4\r\nPING\r\n");
        c.raw(bytes);
        assert_eq!(c.read(), "+PONG");
        assert_eq!(c.read(), want);
        assert!(c.closed());
        assert_eq!(other.call(&["PING"]), "+PONG");
    }
    let mut c = Client::connect(addr);
    c.raw(&vec![b'a'; 70 * 1024]);
    assert_eq!(c.read(), "-ERR Protocol error: too big inline request");
    assert!(c.closed());
    let mut c = Client::connect(addr);
    c.raw(b"POST / HTTP/1.1\r\n");
    assert!(c.closed());
    assert_eq!(other.call(&["PING"]), "+PONG");
}

#[test]
fn auth_and_protected_mode() {
    let h = server(ServerConfig {
        requirepass: Some("secret".into()),
        ..Default::default()
    });
    let addr = h.local_addrs()[0];
    let mut c = Client::connect(addr);
    assert_eq!(c.call(&["XLEN", "s"]), "-NOAUTH Authentication required.");
    assert_eq!(c.call(&["NOSUCH"]), "-ERR unknown command 'NOSUCH'");
    assert_eq!(
        c.call(&["AUTH", "nope"]),
        "-WRONGPASS invalid username-password pair or user is disabled."
    );
    assert!(c
        .call(&["HELLO", "3"])
        .starts_with("-NOAUTH HELLO must be called"));
    assert_eq!(c.call(&["AUTH", "secret"]), "+OK");
    assert_eq!(c.call(&["XLEN", "s"]), ":0");
    // Unauthenticated clients may not send big requests.
    let mut d = Client::connect(addr);
    d.raw(b"*11\r\n");
    assert_eq!(
        d.read(),
        "-ERR Protocol error: unauthenticated multibulk length"
    );
    // No password configured: AUTH <pw> is an error.
    let h2 = server(ServerConfig::default());
    let mut e = Client::connect(h2.local_addrs()[0]);
    assert!(e
        .call(&["AUTH", "x"])
        .starts_with("-ERR AUTH <password> called without"));
    assert_eq!(e.call(&["AUTH", "default", "x"]), "+OK");
    // Protected mode refuses a public bind without a password.
    let err = start(ServerConfig {
        bind: vec!["0.0.0.0".into()],
        port: 0,
        verbose: false,
        ..Default::default()
    })
    .err()
    .expect("refused");
    assert!(err.to_string().contains("protected mode"));
}

#[test]
fn durable_directory_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let h = server(ServerConfig {
        dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    });
    let mut c = Client::connect(h.local_addrs()[0]);
    assert_eq!(c.call(&["XADD", "s", "1-1", "f", "v"]), "1-1");
    assert_eq!(c.call(&["XGROUP", "CREATE", "s", "g", "0"]), "+OK");
    c.send(&["SHUTDOWN"]);
    assert!(c.closed());
    assert!(h.wait_timeout(Duration::from_secs(10)));
    drop(h);
    let (store, _) = xstreams_core::Store::open(
        dir.path(),
        xstreams_core::Config::default(),
        Default::default(),
    )
    .unwrap();
    assert_eq!(
        store.execute(&[b"XLEN", b"s"]),
        xstreams_core::Reply::Int(1)
    );
    store.validate().unwrap();
}
