//! Sessions: the store locked for a sequence of typed commands.

use parking_lot::MutexGuard;

use crate::command::Ctx;
use crate::error::CmdError;
use crate::keyspace::db::Keyspace;

use super::{Signals, State, Store};

impl Store {
    /// Exclusive access to the store for a sequence of typed commands (see [`Session`]).
    /// Fails when the store is closed.
    pub fn session(&self) -> Result<Session<'_>, CmdError> {
        let st = self.shared.state.lock();
        if st.closed {
            return Err(CmdError::closed());
        }
        Ok(Session {
            store: self,
            st,
            sig: Signals::default(),
            frozen: false,
        })
    }

    /// [`Store::session`] without waiting: `None` while another thread holds the store.
    /// (The Python client runs a short command this way without releasing the GIL, and
    /// waits with the GIL released only when the store is busy.)
    pub fn try_session(&self) -> Option<Result<Session<'_>, CmdError>> {
        let st = self.shared.state.try_lock()?;
        if st.closed {
            return Some(Err(CmdError::closed()));
        }
        Some(Ok(Session {
            store: self,
            st,
            sig: Signals::default(),
            frozen: false,
        }))
    }
}

/// The store locked for a sequence of typed commands (the batch paths): no other command
/// runs until it is dropped. Each [`Session::run`] is one command, exactly as if it had
/// been sent alone (its own command time, write refusal, log record) unless the session
/// is [`Session::atomic`]; blocked readers are served when the session ends, as after an
/// atomic batch.
pub struct Session<'a> {
    store: &'a Store,
    st: MutexGuard<'a, State>,
    sig: Signals,
    /// [`Session::atomic`] froze the clock: thawed when the session ends.
    frozen: bool,
}

impl Session<'_> {
    /// Run `f` as one command on database `db` (RESP2 shapes, never blocking). The error
    /// of a failed log write replaces `f`'s result.
    pub fn run<R>(
        &mut self,
        db: usize,
        f: impl FnOnce(&mut Ctx<'_>) -> Result<R, CmdError>,
    ) -> Result<R, CmdError> {
        self.run_in(db, 2, f)
    }

    /// [`Session::run`] with RESP `protocol` (2 or 3) reply shapes, for a command given
    /// as arguments (`command::execute`) whose reply depends on the protocol.
    pub fn run_in<R>(
        &mut self,
        db: usize,
        protocol: u8,
        f: impl FnOnce(&mut Ctx<'_>) -> Result<R, CmdError>,
    ) -> Result<R, CmdError> {
        let (out, sig, failed) = Store::run_with(&mut self.st, db, protocol, true, f);
        self.sig.add(sig.keys, sig.flushed_dbs);
        match failed {
            Some(e) => Err(e),
            None => out,
        }
    }

    /// The keyspace (e.g. to pin the clock between commands).
    pub fn keyspace(&mut self) -> &mut Keyspace {
        &mut self.st.ks
    }

    /// Make the rest of this session atomic, as a MULTI/EXEC: the records of the
    /// commands it runs from now on are written as one block when it ends
    /// ([`Session::commit`] or drop), so after a crash the store holds all of them or
    /// none, as a transaction in Redis's AOF; and they all run at one command time, the
    /// clock frozen until the session ends (see `State::freeze_clock`). (No other
    /// command runs during a session in any case.)
    pub fn atomic(&mut self) {
        // A second call finds the clock pinned (by the first): it stays frozen.
        self.frozen |= self.st.begin_atomic();
    }

    /// Write the log records of the commands this session runs from now on together, when
    /// it ends (or ahead, in chunks, while it runs), not one write per command: as
    /// redis-server writes its AOF buffer once per event-loop turn, however many commands
    /// a pipeline ran in it. Each command keeps its own record (a crash keeps the whole
    /// commands written before it); a failed write under `always` fails
    /// [`Session::commit`] with the MISCONF error, not the command that was running. No
    /// effect after
    /// [`Session::atomic`].
    pub fn batch_log(&mut self) {
        self.st.begin_log_batch();
    }

    /// End the session, writing its atomic block or batch (if [`Session::atomic`] or
    /// [`Session::batch_log`] started one): the MISCONF error if that write failed under
    /// `always` (else its records wait for a retry and later writes are refused).
    pub fn commit(mut self) -> Result<(), CmdError> {
        match self.st.end_log_block() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Is the store durable (every command logged)?
    pub fn is_durable(&self) -> bool {
        self.st.journal.is_some()
    }

    /// Was the store opened read-only?
    pub fn is_read_only(&self) -> bool {
        self.st.read_only
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // Blocked readers are served at the time after the batch, as after an EXEC.
        self.st.thaw_clock(self.frozen);
        // Most sessions are one command on an in-memory store that nobody waits on:
        // checked here, before any call.
        if self.st.journal.is_some() {
            let _ = self.st.end_log_block();
        }
        if !self.sig.is_empty() && self.st.serve(std::mem::take(&mut self.sig)) {
            self.store.shared.cond.notify_all();
        }
        if self.st.journal.is_some() {
            self.store.maybe_compact(&mut self.st);
        }
    }
}
