//! Limits as redis-server names them: maxmemory (noeviction), client-output-buffer-limit,
//! timeout, maxclients, proto-max-bulk-len, client-query-buffer-limit.

mod support;

use std::io::Write;
use std::time::{Duration, Instant};

use support::*;
use xstreams_server::ServerConfig;

const OOM: &str = "-OOM command not allowed when used memory > 'maxmemory'.";

fn field(text: &str, name: &str) -> String {
    text.split("\r\n")
        .find_map(|l| l.strip_prefix(&format!("{name}:")).map(str::to_string))
        .unwrap_or_else(|| panic!("{name} missing"))
}

#[test]
fn maxmemory_refuses_growing_writes_and_lets_reads_and_deletes_go_on() {
    let srv = server(ServerConfig {
        store_config: vec![("maxmemory".into(), "2mb".into())],
        ..ServerConfig::default()
    });
    let mut c = Client::connect(srv.local_addrs()[0]);
    let value = "v".repeat(1000);
    let mut added = 0;
    let refused = loop {
        let r = c.call(&["XADD", "s", "*", "f", &value]);
        if r.starts_with('-') {
            break r;
        }
        added += 1;
        assert!(added < 5000, "never refused");
    };
    assert_eq!(refused, OOM);
    assert!(added > 100, "refused too early: {added}");
    let mem = c.call(&["INFO", "memory"]);
    assert_eq!(field(&mem, "maxmemory"), "2097152");
    assert_eq!(field(&mem, "maxmemory_policy"), "noeviction");
    let used: u64 = field(&mem, "used_memory").parse().unwrap();
    assert!(used > 2097152, "used_memory {used}");
    // Other denyoom commands are refused; reads and deletes go on.
    assert_eq!(c.call(&["SET", "k", "v"]), OOM);
    assert_eq!(c.call(&["XGROUP", "CREATE", "s", "g", "0"]), OOM);
    assert_eq!(c.call(&["XLEN", "s"]), format!(":{added}"));
    assert_eq!(
        c.call(&["XTRIM", "s", "MAXLEN", "10"]),
        format!(":{}", added - 10)
    );
    // Below the limit again: writes go on.
    assert!(c.call(&["XADD", "s", "*", "f", "v"]).len() > 3);
    // In a transaction the refused command discards it (as redis-server does).
    assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", "1"]), "+OK");
    assert_eq!(c.call(&["MULTI"]), "+OK");
    assert_eq!(c.call(&["XADD", "s", "*", "f", "v"]), OOM);
    assert_eq!(c.call(&["XLEN", "s"]), "+QUEUED");
    assert_eq!(
        c.call(&["EXEC"]),
        "-EXECABORT Transaction discarded because of previous errors."
    );
    let stats = c.call(&["INFO", "commandstats"]);
    let xadd = field(&stats, "cmdstat_xadd");
    assert!(xadd.contains("rejected_calls=2,"), "{xadd}");
    assert_eq!(c.call(&["CONFIG", "GET", "maxmemory"]), "[maxmemory,1]");
    assert_eq!(
        c.call(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]),
        "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - \
         argument must be 'noeviction' (xstreams never evicts keys)"
    );
    assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", "0"]), "+OK");
    assert!(c.call(&["SET", "k", "v"]) == "+OK");
}

/// A client that sends a command whose reply passes the hard limit is disconnected
/// without the reply; others are served.
#[test]
fn output_buffer_hard_limit_disconnects() {
    let srv = server(ServerConfig {
        dynamic_config: vec![(
            "client-output-buffer-limit".into(),
            "normal 256kb 0 0".into(),
        )],
        ..ServerConfig::default()
    });
    let addr = srv.local_addrs()[0];
    let mut c = Client::connect(addr);
    assert_eq!(
        c.call(&["CONFIG", "GET", "client-output-buffer-limit"]),
        "[client-output-buffer-limit,normal 262144 0 0 slave 268435456 67108864 60 \
         pubsub 33554432 8388608 60]"
    );
    let value = "v".repeat(1000);
    for _ in 0..1000 {
        c.send(&["XADD", "s", "*", "f", &value]);
    }
    for _ in 0..1000 {
        assert!(!c.read().starts_with('-'));
    }
    // A small reply is fine.
    assert!(c
        .call(&["XRANGE", "s", "-", "+", "COUNT", "10"])
        .starts_with('['));
    let mut big = Client::connect(addr);
    big.send(&["XRANGE", "s", "-", "+"]);
    assert!(big.closed(), "the client over the limit is closed");
    let stats = c.call(&["INFO", "stats"]);
    assert_eq!(
        field(&stats, "client_output_buffer_limit_disconnections"),
        "1"
    );
    assert_eq!(c.call(&["PING"]), "+PONG");
}

/// A client that keeps sending and never reads passes the soft limit for longer than
/// its seconds and is disconnected; the server's memory for it stays bounded by the
/// limit meanwhile.
#[test]
fn output_buffer_soft_limit_disconnects_a_client_that_does_not_read() {
    let srv = server(ServerConfig::default());
    let addr = srv.local_addrs()[0];
    let mut c = Client::connect(addr);
    assert_eq!(
        c.call(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 0 1mb 1"
        ]),
        "+OK"
    );
    let value = "v".repeat(1000);
    for _ in 0..100 {
        c.send(&["XADD", "s", "*", "f", &value]);
    }
    for _ in 0..100 {
        c.read();
    }
    let mut slow = Client::connect(addr);
    slow.w
        .set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let end = Instant::now() + Duration::from_secs(20);
    let mut cmd = Vec::new();
    for _ in 0..50 {
        cmd.extend_from_slice(b"*4\r\n$6\r\nXRANGE\r\n$1\r\ns\r\n$1\r\n-\r\n$1\r\n+\r\n");
    }
    loop {
        // Keep asking for ~100 KB replies without reading any.
        if slow.w.write_all(&cmd).is_err() {
            break;
        }
        let stats = c.call(&["INFO", "stats"]);
        if field(&stats, "client_output_buffer_limit_disconnections") == "1" {
            break;
        }
        assert!(Instant::now() < end, "never disconnected");
        std::thread::sleep(Duration::from_millis(50));
    }
    wait_for(|| info_field(&mut c, "connected_clients") == "1");
}

/// Without an output limit (the default) a client that does not read is not
/// disconnected: the server stops reading its requests instead, so what it holds for
/// the client stays bounded, and it goes on serving others.
#[test]
fn without_output_limit_a_client_that_does_not_read_is_throttled() {
    let srv = server(ServerConfig::default());
    let addr = srv.local_addrs()[0];
    let mut c = Client::connect(addr);
    let value = "v".repeat(1000);
    for _ in 0..100 {
        c.send(&["XADD", "s", "*", "f", &value]);
    }
    for _ in 0..100 {
        c.read();
    }
    let mut slow = Client::connect(addr);
    slow.w
        .set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut cmd = Vec::new();
    for _ in 0..50 {
        cmd.extend_from_slice(b"*4\r\n$6\r\nXRANGE\r\n$1\r\ns\r\n$1\r\n-\r\n$1\r\n+\r\n");
    }
    let mut sent = 0usize;
    let end = Instant::now() + Duration::from_secs(3);
    while Instant::now() < end && slow.w.write_all(&cmd).is_ok() {
        sent += cmd.len();
    }
    // The server stopped reading: the client's writes blocked long before 3 s of
    // 100 KB replies (hundreds of MB) were produced.
    assert!(sent < 64 * 1024 * 1024, "sent {sent} bytes");
    assert_eq!(c.call(&["PING"]), "+PONG");
    assert_eq!(info_field(&mut c, "connected_clients"), "2");
}

#[test]
fn timeout_closes_idle_clients_but_not_blocked_ones() {
    let srv = server(ServerConfig {
        dynamic_config: vec![("timeout".into(), "1".into())],
        ..ServerConfig::default()
    });
    let addr = srv.local_addrs()[0];
    let mut idle = Client::connect(addr);
    assert_eq!(idle.call(&["PING"]), "+PONG");
    let mut blocked = Client::connect(addr);
    blocked.send(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]);
    let t = Instant::now();
    assert!(idle.closed(), "idle client closed");
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
    let mut c = Client::connect(addr);
    assert_eq!(c.call(&["CONFIG", "GET", "timeout"]), "[timeout,1]");
    assert_eq!(c.call(&["XADD", "s", "1-1", "f", "v"]), "1-1");
    assert_eq!(blocked.read(), "[[s,[[1-1,[f,v]]]]]");
    assert_eq!(c.call(&["CONFIG", "SET", "timeout", "0"]), "+OK");
}

#[test]
fn maxclients_refuses_the_next_connection() {
    let srv = server(ServerConfig {
        maxclients: 2,
        ..ServerConfig::default()
    });
    let addr = srv.local_addrs()[0];
    let mut a = Client::connect(addr);
    let mut b = Client::connect(addr);
    // Both are served (so both are counted) before the third arrives.
    assert_eq!(a.call(&["PING"]), "+PONG");
    assert_eq!(b.call(&["PING"]), "+PONG");
    let mut third = Client::connect(addr);
    assert_eq!(third.read(), "-ERR max number of clients reached");
    assert!(third.closed());
}

#[test]
fn proto_max_bulk_len_and_query_buffer_limit() {
    let srv = server(ServerConfig {
        dynamic_config: vec![
            ("proto-max-bulk-len".into(), "1mb".into()),
            ("client-query-buffer-limit".into(), "2mb".into()),
        ],
        ..ServerConfig::default()
    });
    let addr = srv.local_addrs()[0];
    let mut c = Client::connect(addr);
    c.raw(b"*2\r\n$4\r\nECHO\r\n$1048577\r\n");
    assert_eq!(c.read(), "-ERR Protocol error: invalid bulk length");
    assert!(c.closed());
    // A bulk within the limit is fine.
    let mut c = Client::connect(addr);
    let v = "x".repeat(1 << 20);
    assert_eq!(c.call(&["ECHO", &v]).len(), 1 << 20);
    // Requests that pile up past the query buffer limit close the client.
    let mut q = Client::connect(addr);
    // Many complete arguments of an unfinished multibulk.
    let mut req = b"*100\r\n".to_vec();
    for _ in 0..3 {
        req.extend_from_slice(b"$1048576\r\n");
        req.extend(std::iter::repeat_n(b'x', 1 << 20));
        req.extend_from_slice(b"\r\n");
    }
    let _ = q.w.write_all(&req);
    assert!(q.closed());
    let stats = c.call(&["INFO", "stats"]);
    assert_eq!(
        field(&stats, "client_query_buffer_limit_disconnections"),
        "1"
    );
}
