//! `xstreams serve --appendfsync always` on the simulated disk (`persist::disk::sim`):
//! the server commits in groups (one fsync for the writes of every connection waiting
//! then), and no reply leaves before the writes logged before it are durable; when that
//! fsync or a log write fails, the clients waiting get no reply and the server stops,
//! saying why (as redis-server exits when the AOF cannot be written or fsynced under
//! `appendfsync always`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use xstreams_core::store::persist::disk::sim::SimDisk;
use xstreams_core::store::persist::{Disk, Fsync};
use xstreams_fuzz::sim::fresh_dir;
use xstreams_server::resp::encode_command;
use xstreams_server::{start, ServerConfig, ServerHandle};

fn server(name: &str, disk: &Arc<SimDisk>) -> ServerHandle {
    start(ServerConfig {
        port: 0,
        verbose: false,
        threads: 2,
        dir: Some(fresh_dir(name)),
        appendfsync: Fsync::Always,
        disk: Disk {
            sim: Some(disk.clone()),
        },
        ..ServerConfig::default()
    })
    .expect("server starts")
}

struct Client {
    r: BufReader<TcpStream>,
    w: TcpStream,
}

impl Client {
    fn connect(srv: &ServerHandle) -> Client {
        let s = TcpStream::connect(srv.local_addrs()[0]).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Client {
            r: BufReader::new(s.try_clone().unwrap()),
            w: s,
        }
    }

    fn send(&mut self, cmds: &[&[&str]]) {
        let mut bytes = Vec::new();
        for args in cmds {
            let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            bytes.extend(encode_command(&refs));
        }
        self.w.write_all(&bytes).unwrap();
    }

    /// One reply line, a bulk string's value in place of its length; `None` at the end
    /// of the connection.
    fn read(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.r.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let line = line.trim_end().to_string();
        if let Some(n) = line.strip_prefix('$') {
            let mut b = vec![0; n.parse::<usize>().unwrap() + 2];
            self.r.read_exact(&mut b).unwrap();
            return Some(String::from_utf8_lossy(&b[..b.len() - 2]).into_owned());
        }
        Some(line)
    }
}

const XADD: &[&str] = &["XADD", "s", "*", "f", "v"];

#[test]
fn no_reply_leaves_before_its_write_is_durable() {
    let disk = SimDisk::new(None);
    let srv = server("serve-gc", &disk);
    let mut c = Client::connect(&srv);
    for _ in 0..20 {
        c.send(&[XADD]);
        let id = c.read().unwrap();
        assert!(id.contains('-'), "{id}");
        assert_eq!(
            disk.written_bytes(),
            disk.synced_bytes(),
            "a reply before its fsync"
        );
    }
    // A pipeline's replies wait for one fsync per batch the server reads, not per write.
    let before = disk.syncs();
    c.send(&[XADD; 100]);
    for _ in 0..100 {
        assert!(c.read().unwrap().contains('-'));
    }
    assert_eq!(disk.written_bytes(), disk.synced_bytes());
    let syncs = disk.syncs() - before;
    assert!(
        (1..100).contains(&syncs),
        "{syncs} fsyncs for a pipeline of 100 writes"
    );
    // Reads log nothing and wait for nothing.
    let before = disk.syncs();
    c.send(&[&["XLEN", "s"]]);
    assert_eq!(c.read().unwrap(), ":120");
    assert_eq!(disk.syncs(), before);
    srv.shutdown();
    srv.join();
}

/// One XADD acknowledged, then the disk fails from its `fail_at`-th operation on during
/// the next XADD: that XADD gets no reply and the server stops, giving a reason that
/// holds `expect` (as redis-server exits under `appendfsync always`).
fn stops_without_a_reply(name: &str, fail_at: u64, expect: &str) {
    let disk = SimDisk::new(None);
    let srv = server(name, &disk);
    let mut c = Client::connect(&srv);
    c.send(&[XADD]);
    assert!(c.read().unwrap().contains('-'));
    disk.freeze_after(fail_at);
    c.send(&[XADD]);
    assert_eq!(c.read(), None, "a reply for a write that is not durable");
    assert!(
        srv.wait_timeout(Duration::from_secs(20)),
        "the server kept running"
    );
    let why = srv.join().expect("the server says why it stopped");
    assert!(
        why.contains(expect) && why.contains("appendfsync always"),
        "{why}"
    );
}

#[test]
fn a_failed_fsync_stops_the_server_without_a_reply() {
    // The write reaches the log; the fsync after it fails.
    stops_without_a_reply("serve-gc-fail", 1, "fsync failed");
}

#[test]
fn a_failed_log_write_stops_the_server_without_a_reply() {
    // The write's log record cannot be written: redis-server exits on an AOF write error
    // under `appendfsync always`. (Without the stop, the command got MISCONF and the
    // server went on refusing writes.)
    stops_without_a_reply("serve-gc-write-fail", 0, "simulated power loss");
}

#[test]
fn a_shutdown_is_not_a_failure() {
    let disk = SimDisk::new(None);
    let srv = server("serve-gc-stop", &disk);
    let mut c = Client::connect(&srv);
    c.send(&[XADD]);
    assert!(c.read().unwrap().contains('-'));
    srv.shutdown();
    assert_eq!(srv.join(), None);
}
