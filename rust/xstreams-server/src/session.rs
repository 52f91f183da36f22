//! One connection's state ([`Session`]: selected database, protocol, authentication,
//! transaction, per-connection statistics) and what a command does to the connection
//! afterwards ([`Flow`]). Commands of the admin modules and the dispatcher in
//! [`crate::conn`] act on it; it depends only on [`crate::state`] and the reply writer.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use xstreams_core::command::table::{self, CommandSpec, ServerCmd};
use xstreams_core::store::BlockedCall;
use xstreams_core::Reply;
use xstreams_core::Watch;

use crate::config::DebugAccess;
use crate::out::Out;
use crate::resp::Limits;
use crate::state::{ClientHandle, CmdStat, Shared};

/// A command queued by MULTI.
pub struct Queued {
    pub args: Vec<Vec<u8>>,
    /// The connection-level command, if it is one.
    pub srv: Option<(&'static CommandSpec, ServerCmd)>,
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
pub struct Session {
    pub sh: Arc<Shared>,
    pub me: Arc<ClientHandle>,
    pub db: usize,
    pub proto: u8,
    pub authed: bool,
    pub multi: Option<Multi>,
    /// The keys this connection WATCHes (until EXEC, DISCARD, UNWATCH, RESET or the
    /// connection closes).
    pub watch: Option<Watch>,
    /// Commands processed since the counters were last published.
    pub processed: u64,
    pub limits: Limits,
    /// Command statistics not yet published to the server's.
    pub cmdstats: Vec<CmdStat>,
    pub stats_dirty: bool,
}

impl Session {
    pub fn new(sh: Arc<Shared>, me: Arc<ClientHandle>) -> Self {
        let authed = !sh.auth_configured();
        let limits = Limits {
            max_bulk_len: sh.proto_max_bulk_len.load(Ordering::Relaxed),
        };
        Session {
            sh,
            me,
            db: 0,
            proto: 2,
            authed,
            multi: None,
            watch: None,
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
    pub fn reject(&mut self, out: &mut Vec<u8>, line: &str) {
        if let Some(m) = &mut self.multi {
            m.dirty = true;
        }
        self.error(out, line);
    }

    pub fn encode_core(&self, out: &mut Vec<u8>, r: &Reply) {
        if let Reply::Error(e) = r {
            self.sh.stats.error_code(e.code());
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

    pub fn count_rejected(&mut self, slot: Option<usize>) {
        if let Some(slot) = slot {
            self.cmdstats[slot].rejected += 1;
            self.stats_dirty = true;
        }
    }

    /// Run one command, writing its reply (if any) to `out`.
    pub fn set_multi_count(&self) {
        let n = self.multi.as_ref().map_or(-1, |m| m.cmds.len() as i64);
        self.me.fields.lock().unwrap().multi = n;
    }

    /// Set or clear the connection's watched keys, published for CLIENT LIST.
    pub fn set_watch(&mut self, w: Option<Watch>) {
        self.me.fields.lock().unwrap().watched =
            w.as_ref().map(|w| (w.keys().len(), w.dirty_flag()));
        self.watch = w;
    }

    /// EXEC: run the queued commands. Runs of core commands execute atomically through
    /// `Store::execute_batch`; connection-level commands (SELECT, CLIENT SETNAME, ...)
    /// run in between, in order.
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

    /// Record the command for CLIENT LIST's `cmd=`.
    pub fn set_last_cmd(&self, spec: &CommandSpec, args: &[Vec<u8>]) {
        let base = table::lookup(&args[0]).map_or(spec.name, |b| b.name);
        let full = if base == spec.name {
            base.to_string()
        } else {
            format!("{base}|{}", spec.name)
        };
        self.me.fields.lock().unwrap().last_cmd = full;
    }

    /// May this connection run DEBUG (`enable-debug-command`)?
    pub fn debug_allowed(&self) -> bool {
        match self.sh.cfg.enable_debug_command {
            DebugAccess::Yes => true,
            DebugAccess::No => false,
            DebugAccess::Local => self.me.addr.ip().is_loopback(),
        }
    }
}
