//! Writing a large atomic block ahead ([`WriteAhead`]): while the commands of a big batch
//! are still running, the part of its block already encoded goes to the log on a helper
//! thread, so the write (on a busy disk the larger part of a durable batch's cost: the
//! kernel throttles writers once enough data waits for the disk) overlaps the work of
//! the rest of the batch instead of following it.
//!
//! Nothing changes on disk: the same bytes in the same order, the block still ending with
//! its EXEC. A crash or a failed write before the last chunk leaves a MULTI without its
//! EXEC at the end of the log, which replay drops as a cut tail, exactly as a single
//! write cut short. After a failed chunk nothing more is written (a gap inside a block
//! would corrupt the log); the error is returned when the block ends, with the bytes not
//! written (the failed chunk's rest and every later chunk), which the journal keeps to
//! write when the log takes writes again.

use std::io;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::disk::LogFile;

/// The size from which a block's encoded part is handed to the writer thread.
pub const AHEAD_CHUNK: usize = 4 << 20;

/// Chunks in flight (queued or being written) before the encoding side waits.
const IN_FLIGHT: usize = 2;

/// The helper thread writing one block's chunks in order (see the module doc).
pub struct WriteAhead {
    chunks: SyncSender<Vec<u8>>,
    /// Empty buffers to encode the next chunks in: the journal's from earlier blocks,
    /// then written chunks coming back (their pages are mapped already: a fresh buffer
    /// per chunk would fault in and zero new pages).
    spares: Vec<Vec<u8>>,
    back: Receiver<Vec<u8>>,
    thread: JoinHandle<Written>,
}

/// What the writer thread did with a block.
#[derive(Debug, Default)]
pub struct Written {
    /// Bytes that reached the log.
    pub written: u64,
    /// The write that failed, if one did...
    pub failed: Option<io::Error>,
    /// ...and the block's bytes after what was written.
    pub rest: Vec<u8>,
    /// The thread panicked: what it wrote is unknown, so nothing can follow it.
    pub lost: bool,
}

impl WriteAhead {
    /// Start the writer on `file` (a second handle on the log), with `spares` to encode
    /// in; if no thread can be started, `spares` come back and the block is written
    /// whole at its end, as a small one.
    pub fn start(file: LogFile, spares: Vec<Vec<u8>>) -> Result<WriteAhead, Vec<Vec<u8>>> {
        let (chunks, todo) = mpsc::sync_channel::<Vec<u8>>(IN_FLIGHT);
        let (written, back) = mpsc::channel();
        let Ok(thread) = std::thread::Builder::new()
            .name("xstreams-log".into())
            .spawn(move || write_chunks(file, todo, written))
        else {
            return Err(spares);
        };
        Ok(WriteAhead {
            chunks,
            spares,
            back,
            thread,
        })
    }

    /// Queue `chunk` (waits while [`IN_FLIGHT`] chunks are ahead of it) and return an
    /// empty buffer to go on encoding in: a written chunk when one is back.
    pub fn send(&mut self, chunk: Vec<u8>) -> Vec<u8> {
        let capacity = chunk.capacity();
        // A send fails only if the thread is gone (it panicked): `finish` reports it.
        let _ = self.chunks.send(chunk);
        self.spares.extend(self.back.try_iter());
        self.spares
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(capacity))
    }

    /// Write `last` (the block's end), wait for every chunk, and return what was written
    /// (see [`Written`]), with the written buffers to keep for the next block.
    pub fn finish(self, last: Vec<u8>) -> (Written, Vec<Vec<u8>>) {
        let _ = self.chunks.send(last);
        drop(self.chunks);
        let res = self.thread.join().unwrap_or_else(|_| Written {
            failed: Some(io::Error::other("the log writer thread panicked")),
            lost: true,
            ..Written::default()
        });
        let mut bufs = self.spares;
        bufs.extend(self.back.try_iter());
        (res, bufs)
    }
}

/// The writer thread: each chunk in order, stopping at the first failure (the rest of
/// that chunk and the later ones are kept in [`Written::rest`]).
fn write_chunks(
    mut file: LogFile,
    todo: Receiver<Vec<u8>>,
    back: mpsc::Sender<Vec<u8>>,
) -> Written {
    let mut out = Written::default();
    for mut chunk in todo {
        if out.failed.is_none() {
            let mut done = 0;
            let res = file.append(&chunk, &mut done);
            out.written += done as u64;
            if let Err(e) = res {
                out.failed = Some(e);
                out.rest.extend_from_slice(&chunk[done..]);
            }
        } else {
            out.rest.extend_from_slice(&chunk);
        }
        chunk.clear();
        let _ = back.send(chunk);
    }
    out
}
