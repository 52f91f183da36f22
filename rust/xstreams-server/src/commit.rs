//! Group commit for `appendfsync always`: no reply leaves before the writes logged
//! before it are durable. The store is opened with `Options::group_commit` (its writes
//! are not fsynced one by one under the store lock); one thread runs the fsyncs
//! (`Store::sync_logged`), each for every connection that asked while the one before
//! ran, and tells the waiting connections how far the log is durable. redis-server does
//! the same once per event-loop turn, before it writes the replies of that turn.

use std::sync::{Arc, Condvar, Mutex};

use tokio::sync::watch;
use xstreams_core::store::persist::PersistError;
use xstreams_core::store::LogWrites;
use xstreams_core::Store;

use crate::errors;

/// How far the log is durable, as the commit thread last found it.
#[derive(Clone, Debug)]
enum Synced {
    /// Writes up to this count are durable.
    Through(u64),
    /// An fsync failed: nothing later becomes durable.
    Failed(String),
}

struct Wanted {
    /// A connection waits for writes not yet durable.
    asked: bool,
    /// The server is stopping: the thread ends.
    stop: bool,
}

struct Inner {
    store: Store,
    wanted: Mutex<Wanted>,
    wake: Condvar,
    synced: watch::Sender<Synced>,
}

impl Inner {
    /// What an fsync's result says of the log (a closed store fsynced it on closing).
    fn outcome(&self, res: Result<(), PersistError>) -> Synced {
        match res {
            Ok(()) => Synced::Through(self.store.log_writes().map_or(u64::MAX, |w| w.durable)),
            Err(e) => Synced::Failed(e.message().to_owned()),
        }
    }

    /// Tell the waiting connections (never moving the durable count back; a failure
    /// stays); `Err(why)` for a failure.
    fn publish(&self, synced: Synced) -> Result<(), String> {
        let out = match &synced {
            Synced::Through(_) => Ok(()),
            Synced::Failed(why) => Err(why.clone()),
        };
        self.synced.send_if_modified(|cur| match (&*cur, &synced) {
            (Synced::Failed(_), _) => false,
            (Synced::Through(a), Synced::Through(b)) if b <= a => false,
            _ => {
                *cur = synced;
                true
            }
        });
        out
    }
}

/// The commit thread of a server whose replies wait for durability.
pub struct Committer {
    inner: Arc<Inner>,
}

impl Committer {
    /// Start the commit thread for `store`.
    pub fn start(store: Store) -> std::io::Result<Committer> {
        let durable = store.log_writes().map_or(0, |w| w.durable);
        let inner = Arc::new(Inner {
            store,
            wanted: Mutex::new(Wanted {
                asked: false,
                stop: false,
            }),
            wake: Condvar::new(),
            synced: watch::Sender::new(Synced::Through(durable)),
        });
        let runs = inner.clone();
        std::thread::Builder::new()
            .name("xstreams-commit".into())
            .spawn(move || run(&runs))?;
        Ok(Committer { inner })
    }

    /// Return once every write logged so far is durable; `Err(why)` when the log failed:
    /// an fsync, or a write (its command's effect is in memory only, and writes after it
    /// are refused). The replies must not be sent then.
    pub async fn durable(&self) -> Result<(), String> {
        let need = match self.inner.store.log_writes() {
            Some(LogWrites {
                failed: Some(why), ..
            }) => return Err(why),
            Some(w) if w.unsynced() => w.written,
            _ => return Ok(()),
        };
        // No fsync running: run it here (blocking this worker thread for one fsync,
        // as redis-server's event loop blocks) rather than hand it to the commit
        // thread and be woken: a lone client saves two thread switches per write.
        if let Some(res) = self.inner.store.try_sync_logged() {
            return self.inner.publish(self.inner.outcome(res));
        }
        let mut rx = self.inner.synced.subscribe();
        {
            let mut w = self.inner.wanted.lock().unwrap_or_else(|e| e.into_inner());
            w.asked = true;
        }
        self.inner.wake.notify_one();
        loop {
            match &*rx.borrow_and_update() {
                Synced::Through(d) if *d >= need => return Ok(()),
                Synced::Failed(why) => return Err(why.clone()),
                Synced::Through(_) => {}
            }
            if rx.changed().await.is_err() {
                return Err(errors::COMMIT_THREAD_ENDED.into());
            }
        }
    }

    /// End the commit thread (once no connection waits any more).
    pub fn stop(&self) {
        let mut w = self.inner.wanted.lock().unwrap_or_else(|e| e.into_inner());
        w.stop = true;
        drop(w);
        self.inner.wake.notify_one();
    }
}

/// The commit thread: wait to be asked, fsync everything logged by then, publish.
fn run(inner: &Inner) {
    loop {
        {
            let mut w = inner.wanted.lock().unwrap_or_else(|e| e.into_inner());
            while !w.asked && !w.stop {
                w = inner.wake.wait(w).unwrap_or_else(|e| e.into_inner());
            }
            if w.stop {
                return;
            }
            w.asked = false;
        }
        if inner
            .publish(inner.outcome(inner.store.sync_logged()))
            .is_err()
        {
            return;
        }
    }
}
