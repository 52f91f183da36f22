//! A hint to the CPU to start loading bytes an XADD will copy.
//!
//! A benchmark's (or an application's) values are Python objects spread over more memory
//! than the cache holds: at 512 bytes the copy into the stream's node waits for eight
//! cache lines from memory. Asking for them as soon as the value is known lets those
//! loads overlap the work before the copy (the key's lookup, the stream's bookkeeping;
//! what it saves: docs/spark-speed.md, "Why the code is as it is"). A hint only: it
//! never changes what is read, and it costs a few instructions for a small value.

/// Values up to this many bytes are asked for; a larger copy streams well by itself.
const MAX_BYTES: usize = 2048;
const LINE: usize = 64;

/// Ask the CPU to bring the first [`MAX_BYTES`] of `bytes` into its cache. Values of at
/// most one cache line are left alone: they lie beside the object's header, which the
/// interpreter has just touched.
#[inline]
pub fn bytes(bytes: &[u8]) {
    if bytes.len() <= LINE {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let n = bytes.len().min(MAX_BYTES);
        let mut off = 0;
        while off < n {
            // SAFETY: a prefetch is a hint that never faults and reads nothing the
            // program sees; the address is inside `bytes` (SSE is part of x86_64).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(off).cast::<i8>()) };
            off += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}
