//! One client connection: read, parse, dispatch in order, write; blocking reads wait on
//! a blocking thread while the connection watches its socket; MULTI/EXEC.
//!
//! Dispatch follows redis-server's `processCommand` order: unknown command / arity
//! errors, then `DEBUG` protection, then authentication (`NOAUTH`), then transaction
//! rules (`no-multi` commands, queueing), then execution. Stream and keyspace commands
//! run in the core (`Store::start` / `Store::execute_batch`); only connection-level
//! commands are implemented here (see `admin.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use xstreams_core::store::{BlockedCall, Step, EXECABORT};
use xstreams_core::Reply;

use crate::out::Out;
use crate::resp::{Limits, Parsed, Parser};
use crate::server::{ClientHandle, CmdStat, Shared, UNBLOCK_ERROR, UNBLOCK_NONE, UNBLOCK_TIMEOUT};
use xstreams_core::command::table::{self, CommandSpec, Flags, Scope, ServerCmd as Srv};

/// How long a blocked call waits between checks of its connection.
const WAIT_SLICE: Duration = Duration::from_millis(100);
/// Flush replies once this many bytes are pending, even in the middle of a pipeline.
const FLUSH_AT: usize = 64 * 1024;

/// A command queued by MULTI.
pub struct Queued {
    pub args: Vec<Vec<u8>>,
    /// The connection-level command, if it is one.
    pub srv: Option<(&'static CommandSpec, Srv)>,
    /// Statistics slot.
    pub slot: usize,
}

pub struct Multi {
    pub cmds: Vec<Queued>,
    pub dirty: bool,
}

/// What the connection does after a command.
pub enum Flow {
    Next,
    /// Send what was written, then close.
    Close,
    /// Wait for a blocked call.
    Block(Blocked),
}

pub struct Blocked {
    pub call: BlockedCall,
    pub keys: Vec<Vec<u8>>,
    /// XREADGROUP: unblocked when the key is deleted (INFO total_blocking_keys_on_nokey).
    pub nokey: bool,
    pub slot: usize,
    pub started: Instant,
}

/// Per-connection state.
pub struct Conn {
    pub sh: Arc<Shared>,
    pub me: Arc<ClientHandle>,
    pub db: usize,
    pub proto: u8,
    pub authed: bool,
    pub multi: Option<Multi>,
    /// Commands processed since the counters were last published.
    pub processed: u64,
    pub limits: Limits,
    /// Command statistics not yet published to the server's.
    pub cmdstats: Vec<CmdStat>,
    pub stats_dirty: bool,
}

impl Conn {
    pub fn new(sh: Arc<Shared>, me: Arc<ClientHandle>) -> Self {
        let authed = !sh.auth_configured();
        let limits = Limits {
            max_bulk_len: sh.proto_max_bulk_len.load(Ordering::Relaxed),
        };
        Conn {
            sh,
            me,
            db: 0,
            proto: 2,
            authed,
            multi: None,
            processed: 0,
            limits,
            cmdstats: vec![CmdStat::default(); table::slot_count()],
            stats_dirty: false,
        }
    }

    /// Must this client authenticate before running commands?
    pub fn auth_required(&self) -> bool {
        !self.authed && self.sh.auth_configured()
    }

    /// Write an error reply (counted in INFO errorstats).
    pub fn error(&self, out: &mut Vec<u8>, line: &str) {
        self.sh.stats.error(line.as_bytes());
        Out::new(out, self.proto).error(line);
    }

    /// A command rejected before running: an error, and a transaction in progress is
    /// discarded at EXEC (redis-server's `flagTransaction`).
    fn reject(&mut self, out: &mut Vec<u8>, line: &str) {
        if let Some(m) = &mut self.multi {
            m.dirty = true;
        }
        self.error(out, line);
    }

    fn encode_core(&self, out: &mut Vec<u8>, r: &Reply) {
        if let Reply::Error(e) = r {
            self.sh.stats.error(e.as_bytes());
        }
        r.encode(out, self.proto);
    }

    /// Count a command in INFO commandstats (published with the next reply).
    pub fn count(&mut self, slot: usize, started: Instant, failed: bool) {
        let st = &mut self.cmdstats[slot];
        st.calls += 1;
        st.usec += started.elapsed().as_micros() as u64;
        if failed {
            st.failed += 1;
        }
        self.stats_dirty = true;
    }

    fn count_rejected(&mut self, slot: Option<usize>) {
        if let Some(slot) = slot {
            self.cmdstats[slot].rejected += 1;
            self.stats_dirty = true;
        }
    }

    /// Run one command, writing its reply (if any) to `out`.
    pub fn dispatch(&mut self, args: Vec<Vec<u8>>, out: &mut Vec<u8>) -> Flow {
        self.processed += 1;
        let resolved = match table::resolve(&args, Scope::Server) {
            Ok(r) => r,
            Err(table::Unresolved { slot, error: e }) => {
                let name = &args[0];
                if name.eq_ignore_ascii_case(b"host:") || name.eq_ignore_ascii_case(b"post") {
                    self.sh.log(
                        "Possible SECURITY ATTACK detected. It looks like somebody is sending \
                         POST or Host: commands to Redis. Connection aborted.",
                    );
                    return Flow::Close;
                }
                self.count_rejected(slot);
                self.reject(out, &e.0);
                return Flow::Next;
            }
        };
        let spec = resolved.spec;
        let srv = spec.server_cmd().map(|s| (spec, s));
        if let Some((_, Srv::Debug)) = srv {
            if !self.debug_allowed() {
                self.count_rejected(Some(resolved.slot));
                self.reject(
                    out,
                    "ERR DEBUG command not allowed. If the enable-debug-command option is set \
                     to \"local\", you can run it from a local connection, otherwise you need \
                     to set this option in the configuration file, and then restart the server.",
                );
                return Flow::Next;
            }
        }
        if self.auth_required() && !spec.flags.has(Flags::NO_AUTH) {
            self.count_rejected(Some(resolved.slot));
            self.reject(out, "NOAUTH Authentication required.");
            return Flow::Next;
        }
        if self.multi.is_some() {
            if spec.flags.has(Flags::NO_MULTI) {
                self.count_rejected(Some(resolved.slot));
                self.reject(out, "ERR Command not allowed inside a transaction");
                return Flow::Next;
            }
            let immediate = matches!(
                srv,
                Some((
                    _,
                    Srv::Exec | Srv::Discard | Srv::Multi | Srv::Quit | Srv::Reset
                ))
            );
            if !immediate {
                let m = self.multi.as_mut().expect("in multi");
                m.cmds.push(Queued {
                    args,
                    srv,
                    slot: resolved.slot,
                });
                self.set_multi_count();
                out.extend_from_slice(b"+QUEUED\r\n");
                return Flow::Next;
            }
        }
        let started = Instant::now();
        match srv {
            Some((spec, s)) => {
                let at = out.len();
                let flow = self.run_srv(spec, s, &args, out);
                let failed = out.get(at) == Some(&b'-');
                self.count(resolved.slot, started, failed);
                flow
            }
            None => self.run_core(args, resolved.slot, started, out),
        }
    }

    fn run_core(
        &mut self,
        args: Vec<Vec<u8>>,
        slot: usize,
        started: Instant,
        out: &mut Vec<u8>,
    ) -> Flow {
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        match self.sh.store.start(self.db, self.proto, &refs) {
            Step::Done(r) => {
                self.count(slot, started, r.is_error());
                self.encode_core(out, &r);
                Flow::Next
            }
            Step::Blocked(call) => {
                let nokey = args[0].eq_ignore_ascii_case(b"xreadgroup");
                let keys = table::lookup(&args[0])
                    .map(|m| m.keys_of(&args).into_iter().map(|k| k.to_vec()).collect())
                    .unwrap_or_default();
                Flow::Block(Blocked {
                    call,
                    keys,
                    nokey,
                    slot,
                    started,
                })
            }
        }
    }

    pub fn set_multi_count(&self) {
        let n = self.multi.as_ref().map_or(-1, |m| m.cmds.len() as i64);
        self.me.fields.lock().unwrap().multi = n;
    }

    /// EXEC: run the queued commands. Runs of core commands execute atomically through
    /// `Store::execute_batch`; connection-level commands (SELECT, CLIENT SETNAME, ...)
    /// run in between, in order.
    pub fn exec(&mut self, out: &mut Vec<u8>) -> Flow {
        let Some(m) = self.multi.take() else {
            self.error(out, "ERR EXEC without MULTI");
            return Flow::Next;
        };
        self.set_multi_count();
        if m.dirty {
            self.error(out, EXECABORT);
            return Flow::Next;
        }
        Out::new(out, self.proto).array(m.cmds.len());
        let mut cmds = m.cmds.into_iter().peekable();
        let mut close = false;
        while let Some(q) = cmds.next() {
            let started = Instant::now();
            match q.srv {
                Some((spec, s)) => {
                    let at = out.len();
                    if let Flow::Close = self.run_srv(spec, s, &q.args, out) {
                        close = true;
                    }
                    let failed = out.get(at) == Some(&b'-');
                    self.count(q.slot, started, failed);
                }
                None => {
                    let mut slots = vec![q.slot];
                    let mut batch = vec![q.args];
                    while cmds.peek().is_some_and(|n| n.srv.is_none()) {
                        let n = cmds.next().expect("peeked");
                        slots.push(n.slot);
                        batch.push(n.args);
                    }
                    let replies = self
                        .sh
                        .store
                        .execute_batch(self.db, self.proto, &batch, true);
                    for (r, slot) in replies.iter().zip(slots) {
                        self.count(slot, started, r.is_error());
                        self.encode_core(out, r);
                    }
                }
            }
        }
        if close {
            Flow::Close
        } else {
            Flow::Next
        }
    }

    /// Publish per-connection counters.
    pub fn publish_counters(&mut self, net_in: u64, net_out: u64) {
        let n = std::mem::take(&mut self.processed);
        if n > 0 {
            self.sh
                .stats
                .commands_processed
                .fetch_add(n, Ordering::Relaxed);
        }
        if net_in > 0 {
            self.sh
                .stats
                .net_input_bytes
                .fetch_add(net_in, Ordering::Relaxed);
        }
        if net_out > 0 {
            self.sh
                .stats
                .net_output_bytes
                .fetch_add(net_out, Ordering::Relaxed);
        }
        if self.stats_dirty {
            self.stats_dirty = false;
            let mut g = self.sh.stats.cmdstats.lock().unwrap();
            for (acc, mine) in g.iter_mut().zip(self.cmdstats.iter_mut()) {
                if mine.calls | mine.rejected | mine.failed != 0 {
                    acc.add(mine);
                    *mine = CmdStat::default();
                }
            }
        }
        let me = &self.me;
        if n > 0 {
            me.commands.fetch_add(n, Ordering::Relaxed);
            me.last_interaction_ms.store(
                self.sh.started.elapsed().as_millis() as u64,
                Ordering::Relaxed,
            );
        }
        if net_in > 0 {
            me.net_in.fetch_add(net_in, Ordering::Relaxed);
        }
        if net_out > 0 {
            me.net_out.fetch_add(net_out, Ordering::Relaxed);
        }
    }
}

/// Outcome of a blocked wait.
enum Waited {
    Reply(Reply),
    /// The connection went away (or the server is stopping): no reply.
    Gone,
}

async fn write_out(wr: &mut OwnedWriteHalf, out: &mut Vec<u8>, conn: &mut Conn) -> bool {
    if out.is_empty() {
        return true;
    }
    let ok = wr.write_all(out).await.is_ok();
    conn.publish_counters(0, out.len() as u64);
    out.clear();
    if out.capacity() > 4 * 1024 * 1024 {
        out.shrink_to(64 * 1024);
    }
    ok
}

/// Serve one connection until it closes.
pub async fn run(sh: Arc<Shared>, me: Arc<ClientHandle>, sock: TcpStream) {
    let (mut rd, mut wr) = sock.into_split();
    let mut conn = Conn::new(sh.clone(), me.clone());
    let mut rbuf = BytesMut::with_capacity(16 * 1024);
    let mut out: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut parser = Parser::new();
    let mut shutdown = sh.shutdown.subscribe();
    'conn: loop {
        let mut close = false;
        loop {
            let stopping = *shutdown.borrow();
            if stopping || me.killed.load(Ordering::Relaxed) {
                close = true;
                break;
            }
            let auth_required = conn.auth_required();
            let (n, r) = parser.parse(&rbuf, &conn.limits, auth_required);
            rbuf.advance(n);
            match r {
                Ok(Parsed::Incomplete) => break,
                Ok(Parsed::Empty) => continue,
                Ok(Parsed::Command(args)) => match conn.dispatch(args, &mut out) {
                    Flow::Next => {}
                    Flow::Close => {
                        close = true;
                        break;
                    }
                    Flow::Block(b) => {
                        if !write_out(&mut wr, &mut out, &mut conn).await {
                            break 'conn;
                        }
                        let (slot, started) = (b.slot, b.started);
                        match wait_blocked(&mut conn, b, &mut rd, &mut rbuf, &mut shutdown).await {
                            Waited::Reply(r) => {
                                conn.count(slot, started, r.is_error());
                                conn.encode_core(&mut out, &r);
                            }
                            Waited::Gone => break 'conn,
                        }
                    }
                },
                Err(e) => {
                    let line = e.reply_line();
                    sh.stats.error(&line);
                    out.push(b'-');
                    out.extend_from_slice(&line);
                    out.extend_from_slice(b"\r\n");
                    close = true;
                    break;
                }
            }
            if out.len() >= FLUSH_AT && !write_out(&mut wr, &mut out, &mut conn).await {
                break 'conn;
            }
        }
        if !write_out(&mut wr, &mut out, &mut conn).await || close {
            break;
        }
        conn.publish_counters(0, 0);
        let limit = sh.query_buffer_limit.load(Ordering::Relaxed) as usize;
        conn.limits.max_bulk_len = sh.proto_max_bulk_len.load(Ordering::Relaxed);
        if rbuf.len() + parser.pending_bytes() > limit {
            sh.stats
                .query_buffer_limit_disconnections
                .fetch_add(1, Ordering::Relaxed);
            sh.log(&format!(
                "Closing client that reached max query buffer length: id={} addr={}",
                me.id, me.addr
            ));
            break;
        }
        match parser.wanted() {
            // Room for a large argument, at most 1 MiB at a time (the buffer grows as
            // bytes arrive, so a declared length reserves nothing by itself).
            Some(w) if w > rbuf.len() => rbuf.reserve((w - rbuf.len()).min(1 << 20)),
            _ => rbuf.reserve(16 * 1024),
        }
        tokio::select! {
            r = rd.read_buf(&mut rbuf) => match r {
                Ok(0) | Err(_) => break,
                Ok(n) => conn.publish_counters(n as u64, 0),
            },
            _ = crate::server::stopped(&mut shutdown) => break,
            _ = me.kill.notified() => break,
        }
    }
    let _ = wr.shutdown().await;
}

async fn wait_blocked(
    conn: &mut Conn,
    b: Blocked,
    rd: &mut OwnedReadHalf,
    rbuf: &mut BytesMut,
    shutdown: &mut tokio::sync::watch::Receiver<bool>,
) -> Waited {
    let sh = conn.sh.clone();
    let me = conn.me.clone();
    register_block(&sh, conn.db, &b.keys, b.nokey, 1);
    me.unblock.store(UNBLOCK_NONE, Ordering::SeqCst);
    me.blocked.store(true, Ordering::SeqCst);
    let cancel = Arc::new(AtomicBool::new(false));
    let task = {
        let cancel = cancel.clone();
        let store = sh.store.clone();
        let me = me.clone();
        let mut call = b.call;
        tokio::task::spawn_blocking(move || loop {
            if cancel.load(Ordering::SeqCst) {
                store.cancel(call);
                return None;
            }
            match me.unblock.swap(UNBLOCK_NONE, Ordering::SeqCst) {
                UNBLOCK_TIMEOUT => {
                    store.cancel(call);
                    return Some(Reply::NilArray);
                }
                UNBLOCK_ERROR => {
                    store.cancel(call);
                    return Some(Reply::Error(
                        "UNBLOCKED client unblocked via CLIENT UNBLOCK".into(),
                    ));
                }
                _ => {}
            }
            match store.wait(call, Some(WAIT_SLICE)) {
                Step::Done(r) => return Some(r),
                Step::Blocked(c) => call = c,
            }
        })
    };
    tokio::pin!(task);
    let limit = sh.query_buffer_limit.load(Ordering::Relaxed) as usize;
    let result = loop {
        if rbuf.capacity() - rbuf.len() < 1024 {
            rbuf.reserve(16 * 1024);
        }
        tokio::select! {
            r = &mut task => break match r {
                Ok(Some(reply)) => Waited::Reply(reply),
                _ => Waited::Gone,
            },
            r = rd.read_buf(rbuf) => match r {
                Ok(n) if n > 0 && rbuf.len() <= limit => {
                    conn.publish_counters(n as u64, 0);
                }
                _ => {
                    cancel.store(true, Ordering::SeqCst);
                    let _ = (&mut task).await;
                    break Waited::Gone;
                }
            },
            _ = crate::server::stopped(shutdown) => {
                cancel.store(true, Ordering::SeqCst);
                let _ = (&mut task).await;
                break Waited::Gone;
            }
            _ = me.kill.notified() => {
                cancel.store(true, Ordering::SeqCst);
                let _ = (&mut task).await;
                break Waited::Gone;
            }
        }
    };
    me.blocked.store(false, Ordering::SeqCst);
    register_block(&sh, conn.db, &b.keys, b.nokey, -1);
    result
}

fn register_block(sh: &Shared, db: usize, keys: &[Vec<u8>], nokey: bool, delta: isize) {
    if delta > 0 {
        sh.blocked_clients.fetch_add(1, Ordering::SeqCst);
    } else {
        sh.blocked_clients.fetch_sub(1, Ordering::SeqCst);
    }
    let mut bk = sh.blocking_keys.lock().unwrap();
    let mut seen: Vec<&Vec<u8>> = Vec::new();
    for k in keys {
        if seen.contains(&k) {
            continue;
        }
        seen.push(k);
        let e = bk.keys.entry((db, k.clone())).or_insert((0, 0));
        if delta > 0 {
            e.0 += 1;
            if nokey {
                e.1 += 1;
            }
        } else {
            e.0 = e.0.saturating_sub(1);
            if nokey {
                e.1 = e.1.saturating_sub(1);
            }
        }
        if e.0 == 0 {
            bk.keys.remove(&(db, k.clone()));
        }
    }
}
