//! One client connection: read, parse, dispatch in order, write; blocking reads wait on
//! a blocking thread while the connection watches its socket; MULTI/EXEC.
//!
//! Dispatch follows redis-server's `processCommand` order: unknown command / arity
//! errors, then `DEBUG` protection, then authentication (`NOAUTH`), then transaction
//! rules (`no-multi` commands, queueing), then execution. Stream and keyspace commands
//! run in the core (`Store::start` / `Store::execute_batch`); only connection-level
//! commands are implemented in [`crate::admin`].
//!
//! Dependencies go one way: `conn` uses `admin`, `session`, `state`, `resp`, `out`;
//! none of them uses `conn`. Only the accept loop (`server`) uses `conn`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;
use xstreams_core::error::CmdError;
use xstreams_core::store::{Step, EXECABORT};
use xstreams_core::Reply;

use xstreams_core::command::table::{self, Flags, Scope, ServerCmd as Srv};
use xstreams_core::keyspace::memory;

use crate::admin;
use crate::errors;
use crate::out::Out;
use crate::resp::{Parsed, Parser};
use crate::session::{Blocked, Flow, Queued, Session};
use crate::state::{stopped, ClientHandle, Shared, Unblock};

/// How long a blocked call waits between checks of its connection.
const WAIT_SLICE: Duration = Duration::from_millis(100);
/// Flush replies once this many bytes are pending, even in the middle of a pipeline.
const FLUSH_AT: usize = 64 * 1024;

impl Session {
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
                self.reject(out, e.line());
                return Flow::Next;
            }
        };
        let spec = resolved.spec;
        let srv = spec.server_cmd().map(|s| (spec, s));
        if let Some((_, Srv::Debug)) = srv {
            if !self.debug_allowed() {
                self.count_rejected(Some(resolved.slot));
                self.reject(out, errors::DEBUG_NOT_ALLOWED);
                return Flow::Next;
            }
        }
        if self.auth_required() && !spec.flags.has(Flags::NO_AUTH) {
            self.count_rejected(Some(resolved.slot));
            self.reject(out, errors::NOAUTH);
            return Flow::Next;
        }
        // maxmemory under noeviction: commands that may grow memory are refused before
        // they are queued or run (rejected, as redis-server counts them).
        if spec.flags.has(Flags::DENYOOM) && self.sh.store.with_keyspace(memory::over_maxmemory) {
            self.count_rejected(Some(resolved.slot));
            self.reject(out, xstreams_core::error::OOM);
            return Flow::Next;
        }
        if self.multi.is_some() {
            if spec.flags.has(Flags::NO_MULTI) {
                self.count_rejected(Some(resolved.slot));
                self.reject(out, errors::NOT_IN_MULTI);
                return Flow::Next;
            }
            let immediate = matches!(
                srv,
                Some((
                    _,
                    Srv::Exec | Srv::Discard | Srv::Multi | Srv::Watch | Srv::Quit | Srv::Reset
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
                let flow = if s == Srv::Exec {
                    self.set_last_cmd(spec, &args);
                    self.exec(out)
                } else {
                    admin::run(self, spec, s, &args, out)
                };
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

    pub fn exec(&mut self, out: &mut Vec<u8>) -> Flow {
        let Some(m) = self.multi.take() else {
            self.error(out, errors::EXEC_WITHOUT_MULTI);
            return Flow::Next;
        };
        // EXEC unwatches, whatever its outcome.
        let watch = self.watch.take();
        self.set_watch(None);
        self.set_multi_count();
        if m.dirty {
            self.error(out, EXECABORT);
            return Flow::Next;
        }
        // The queue runs as one store batch when it can; else in parts, with every other
        // client's commands (and the cron) held off until its last part has run.
        let sh = Arc::clone(&self.sh);
        if let Some(dbs) = self.transaction_dbs(&m.cmds) {
            let _step = sh.step();
            return self.exec_transaction(m.cmds, dbs, watch, out);
        }
        let _alone = sh.exclusive_step();
        // ... at one command time, the blocked readers it serves served after it, as one
        // store batch would.
        let _parts = sh.store.begin_parts();
        self.exec_in_parts(m.cmds, watch, out)
    }

    /// EXEC of a queue whose connection-level commands lock the store themselves: its
    /// consecutive engine commands as atomic store batches, those commands between them.
    fn exec_in_parts(
        &mut self,
        cmds: Vec<Queued>,
        watch: Option<xstreams_core::Watch>,
        out: &mut Vec<u8>,
    ) -> Flow {
        let n = cmds.len();
        let mut cmds = cmds.into_iter().peekable();
        // With WATCH, the check and the engine commands that come first run as one atomic
        // batch; a touched key aborts the EXEC with a null array before anything runs.
        let mut first: Option<(Vec<usize>, Vec<Reply>, Instant)> = None;
        if let Some(w) = &watch {
            let started = Instant::now();
            let (mut slots, mut batch) = (Vec::new(), Vec::new());
            while cmds.peek().is_some_and(|q| q.srv.is_none()) {
                let q = cmds.next().expect("peeked");
                slots.push(q.slot);
                batch.push(q.args);
            }
            let store = &self.sh.store;
            match store.execute_batch(self.db, self.proto, &batch, true, Some(w)) {
                None => {
                    out.extend_from_slice(if self.proto == 3 {
                        b"_\r\n"
                    } else {
                        b"*-1\r\n"
                    });
                    return Flow::Next;
                }
                Some(replies) => first = Some((slots, replies, started)),
            }
        }
        drop(watch);
        Out::new(out, self.proto).array(n);
        if let Some((slots, replies, started)) = first {
            for (r, slot) in replies.iter().zip(slots) {
                self.count(slot, started, r.is_error());
                self.encode_core(out, r);
            }
        }
        let mut close = false;
        while let Some(q) = cmds.next() {
            let started = Instant::now();
            match q.srv {
                Some((spec, s)) => {
                    let at = out.len();
                    if let Flow::Close = admin::run(self, spec, s, &q.args, out) {
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
                        .execute_batch(self.db, self.proto, &batch, true, None)
                        .expect("a batch without a watch always runs");
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
}

impl Session {
    /// The database each queued engine command runs in, when every connection-level
    /// command of the queue leaves the store alone (SELECT, CLIENT, COMMAND, LASTSAVE,
    /// ROLE): then the whole EXEC runs as one atomic store batch, as in redis-server.
    /// `None` when one may lock the store (INFO, CONFIG, DEBUG, SAVE…) or changes how
    /// replies are shaped or sent (HELLO, AUTH, RESET, QUIT).
    fn transaction_dbs(&self, cmds: &[Queued]) -> Option<Vec<usize>> {
        let mut db = self.db;
        let mut dbs = Vec::with_capacity(cmds.len());
        for q in cmds {
            match q.srv {
                None => dbs.push(db),
                Some((_, Srv::Select)) => {
                    if let Ok(d) = self.select_target(&q.args[1]) {
                        db = d;
                    }
                }
                Some((_, Srv::Client | Srv::Command | Srv::LastSave | Srv::Role)) => {}
                Some(_) => return None,
            }
        }
        Some(dbs)
    }

    /// EXEC as one atomic store batch: the WATCH check and every engine command (each in
    /// the database the queue's SELECTs put it in) under one lock; then the
    /// connection-level commands, which do not touch the store, give their replies in
    /// queue order (SELECT moving the connection to its database).
    fn exec_transaction(
        &mut self,
        mut queued: Vec<Queued>,
        dbs: Vec<usize>,
        watch: Option<xstreams_core::Watch>,
        out: &mut Vec<u8>,
    ) -> Flow {
        let started = Instant::now();
        let batch: Vec<(usize, Vec<Vec<u8>>)> = dbs
            .into_iter()
            .zip(
                queued
                    .iter_mut()
                    .filter(|q| q.srv.is_none())
                    .map(|q| std::mem::take(&mut q.args)),
            )
            .collect();
        let replies = {
            let watches: Vec<&xstreams_core::Watch> = watch.iter().collect();
            self.sh
                .store
                .execute_transaction(self.db, self.proto, &batch, &watches)
        };
        drop(watch);
        let Some(replies) = replies else {
            out.extend_from_slice(if self.proto == 3 {
                b"_\r\n"
            } else {
                b"*-1\r\n"
            });
            return Flow::Next;
        };
        Out::new(out, self.proto).array(queued.len());
        let mut replies = replies.into_iter();
        let mut flow = Flow::Next;
        for q in queued {
            match q.srv {
                None => {
                    let r = replies.next().expect("one reply per engine command");
                    self.count(q.slot, started, r.is_error());
                    self.encode_core(out, &r);
                }
                Some((spec, s)) => {
                    let (at, t) = (out.len(), Instant::now());
                    if let Flow::Close = admin::run(self, spec, s, &q.args, out) {
                        flow = Flow::Close;
                    }
                    let failed = out.get(at) == Some(&b'-');
                    self.count(q.slot, t, failed);
                }
            }
        }
        flow
    }
}

/// Outcome of a blocked wait.
enum Waited {
    Reply(Reply),
    /// The connection went away (or the server is stopping): no reply.
    Gone,
}

/// The connection's writer: replies are handed to a task that writes them, so the
/// connection knows how many bytes the client has not taken yet (its output buffer).
struct Writer {
    tx: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    task: tokio::task::JoinHandle<()>,
    /// Bytes handed over and not yet written to the socket.
    pending: Arc<AtomicUsize>,
    /// Signalled whenever the task wrote something (or failed).
    drained: Arc<Notify>,
    failed: Arc<AtomicBool>,
    /// Since when the output buffer is above the soft limit.
    soft_since: Option<Instant>,
}

impl Writer {
    fn new<W: AsyncWrite + Unpin + Send + 'static>(mut wr: W) -> Self {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let pending = Arc::new(AtomicUsize::new(0));
        let drained = Arc::new(Notify::new());
        let failed = Arc::new(AtomicBool::new(false));
        let task = {
            let (pending, drained, failed) = (pending.clone(), drained.clone(), failed.clone());
            tokio::spawn(async move {
                while let Some(buf) = rx.recv().await {
                    if wr.write_all(&buf).await.is_err() {
                        failed.store(true, Ordering::SeqCst);
                        drained.notify_one();
                        return;
                    }
                    pending.fetch_sub(buf.len(), Ordering::SeqCst);
                    drained.notify_one();
                }
                let _ = wr.shutdown().await;
            })
        };
        Writer {
            tx,
            task,
            pending,
            drained,
            failed,
            soft_since: None,
        }
    }

    /// Send what the client has been told, then close (at most a few seconds for a
    /// client that does not read).
    async fn close(self) {
        drop(self.tx);
        let mut task = self.task;
        if tokio::time::timeout(Duration::from_secs(5), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }

    /// Drop what is unsent and close now.
    fn abort(self) {
        self.task.abort();
    }
}

/// Why a connection must close after handing its replies over.
enum WriteErr {
    /// The socket failed, or the connection is being killed or the server stops.
    Gone,
    /// `client-output-buffer-limit` reached: close without sending the rest.
    OverLimit,
}

/// Hand `out` to the writer. Without an output limit the connection then waits until the
/// client has taken all but [`FLUSH_AT`] bytes (it stops reading commands from a client
/// that does not read its replies: its memory stays bounded). With a limit, it goes on
/// until the unsent bytes pass the limit, and the client is disconnected, as
/// redis-server does.
async fn write_out(
    w: &mut Writer,
    out: &mut Vec<u8>,
    conn: &mut Session,
    shutdown: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<(), WriteErr> {
    if out.is_empty() {
        return Ok(());
    }
    if let Some(commit) = &conn.sh.commit {
        // `appendfsync always`: no reply leaves before the writes logged so far are
        // durable (its own, and any other client's that a reply may show).
        if let Err(why) = commit.durable().await {
            // The log failed (an fsync or a write): the replies would acknowledge writes
            // that are not durable, so nobody gets them. As redis-server exits then, the
            // server stops.
            conn.sh.fail(errors::log_failed_under_always(&why));
            return Err(WriteErr::Gone);
        }
    }
    let n = out.len();
    conn.publish_counters(0, n as u64);
    let pending = w.pending.fetch_add(n, Ordering::SeqCst) + n;
    let buf = std::mem::replace(out, Vec::with_capacity(16 * 1024));
    if w.tx.send(buf).is_err() || w.failed.load(Ordering::SeqCst) {
        return Err(WriteErr::Gone);
    }
    let limit = conn.sh.limits.output();
    if limit.enabled() {
        let pending = pending as u64;
        if limit.hard > 0 && pending > limit.hard {
            return Err(WriteErr::OverLimit);
        }
        if limit.soft > 0 && pending > limit.soft {
            let since = *w.soft_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= Duration::from_secs(limit.soft_seconds) {
                return Err(WriteErr::OverLimit);
            }
        } else {
            w.soft_since = None;
        }
        return Ok(());
    }
    let me = conn.me.clone();
    while w.pending.load(Ordering::SeqCst) > FLUSH_AT {
        if w.failed.load(Ordering::SeqCst) {
            return Err(WriteErr::Gone);
        }
        tokio::select! {
            _ = w.drained.notified() => {}
            _ = stopped(shutdown) => return Err(WriteErr::Gone),
            _ = me.kill.notified() => return Err(WriteErr::Gone),
        }
    }
    Ok(())
}

/// Serve one connection (plain TCP or TLS: its read and write halves) until it closes.
pub async fn run<R, W>(sh: Arc<Shared>, me: Arc<ClientHandle>, mut rd: R, wr: W)
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let mut wr = Writer::new(wr);
    let mut conn = Session::new(sh.clone(), me.clone());
    let mut rbuf = BytesMut::with_capacity(16 * 1024);
    let mut out: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut parser = Parser::new();
    let mut shutdown = sh.shutdown.subscribe();
    let mut ended: Option<WriteErr> = None;
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
                Ok(Parsed::Command(args)) => match dispatch_in_step(&mut conn, &sh, args, &mut out)
                {
                    Flow::Next => {}
                    Flow::Close => {
                        close = true;
                        break;
                    }
                    Flow::Block(b) => {
                        if let Err(e) = write_out(&mut wr, &mut out, &mut conn, &mut shutdown).await
                        {
                            ended = Some(e);
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
            if out.len() >= FLUSH_AT {
                if let Err(e) = write_out(&mut wr, &mut out, &mut conn, &mut shutdown).await {
                    ended = Some(e);
                    break 'conn;
                }
            }
        }
        if let Err(e) = write_out(&mut wr, &mut out, &mut conn, &mut shutdown).await {
            ended = Some(e);
            break;
        }
        if close {
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
        let idle = sh.limits.timeout_secs();
        tokio::select! {
            r = rd.read_buf(&mut rbuf) => match r {
                Ok(0) | Err(_) => break,
                Ok(n) => conn.publish_counters(n as u64, 0),
            },
            _ = stopped(&mut shutdown) => break,
            _ = me.kill.notified() => break,
            // `timeout`: a client idle that long is closed (blocked clients wait in
            // `wait_blocked`, which has no such limit, as in redis-server).
            _ = idle_for(idle) => {
                sh.log(&format!("Closing idle client id={} addr={}", me.id, me.addr));
                break;
            }
        }
    }
    match ended {
        Some(WriteErr::OverLimit) => {
            sh.stats
                .output_buffer_limit_disconnections
                .fetch_add(1, Ordering::Relaxed);
            sh.log(&format!(
                "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
                me.id, me.addr
            ));
            wr.abort();
        }
        Some(WriteErr::Gone) => wr.abort(),
        None => wr.close().await,
    }
}

/// [`Session::dispatch`] holding a share of the server's step gate
/// ([`Shared::exec_gate`]), taken here rather than in `dispatch` (which would need its
/// own handle on `Shared` per command); EXEC takes the gate itself, alone when it runs
/// in parts.
fn dispatch_in_step(
    conn: &mut Session,
    sh: &Shared,
    args: Vec<Vec<u8>>,
    out: &mut Vec<u8>,
) -> Flow {
    if args
        .first()
        .is_some_and(|a| a.eq_ignore_ascii_case(b"exec"))
    {
        return conn.dispatch(args, out);
    }
    let _step = sh.step();
    conn.dispatch(args, out)
}

/// Resolves after `secs` seconds; never when `secs` is 0.
async fn idle_for(secs: u64) {
    if secs == 0 {
        std::future::pending::<()>().await
    } else {
        tokio::time::sleep(Duration::from_secs(secs)).await
    }
}

async fn wait_blocked<R: AsyncRead + Unpin>(
    conn: &mut Session,
    b: Blocked,
    rd: &mut R,
    rbuf: &mut BytesMut,
    shutdown: &mut tokio::sync::watch::Receiver<bool>,
) -> Waited {
    let sh = conn.sh.clone();
    let me = conn.me.clone();
    sh.register_block(conn.db, &b.keys, b.nokey, 1);
    me.unblock.set(Unblock::None);
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
            match me.unblock.take() {
                Unblock::Timeout => {
                    store.cancel(call);
                    return Some(Reply::NilArray);
                }
                Unblock::Error => {
                    store.cancel(call);
                    return Some(CmdError::unblocked().into());
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
            _ = stopped(shutdown) => {
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
    sh.register_block(conn.db, &b.keys, b.nokey, -1);
    result
}
