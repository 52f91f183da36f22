//! Iteration over the live entries of an ID range.

use crate::structures::id::StreamId;
use crate::structures::node::{EntryView, StreamNode};
use crate::structures::rax::Rax;

/// Iterator over live entries of a stream in an ID range.
pub struct RangeIter<'a> {
    rax: &'a Rax<Box<StreamNode>>,
    start: StreamId,
    end: StreamId,
    rev: bool,
    node_key: Option<[u8; 16]>,
    inner: Option<crate::structures::node::NodeIter<'a>>,
    done: bool,
}

impl<'a> RangeIter<'a> {
    /// Iterate the nodes of `rax` (a stream's tree) between `start` and `end`.
    pub fn new(rax: &'a Rax<Box<StreamNode>>, start: StreamId, end: StreamId, rev: bool) -> Self {
        let first = if !rev {
            if !start.is_zero() {
                rax.seek_le(&start.to_key()).or_else(|| rax.first())
            } else {
                rax.first()
            }
        } else if !end.is_zero() {
            rax.seek_le(&end.to_key()).or_else(|| rax.last())
        } else {
            rax.last()
        };
        let (node_key, inner) = match first {
            Some((k, n)) => (Some(k), Some(n.iter())),
            None => (None, None),
        };
        RangeIter {
            rax,
            start,
            end,
            rev,
            node_key,
            inner,
            done: start > end,
        }
    }

    fn advance_node(&mut self) -> bool {
        let Some(k) = self.node_key else {
            return false;
        };
        let next = if self.rev {
            self.rax.prev_before(&k)
        } else {
            self.rax.next_after(&k)
        };
        match next {
            Some((nk, n)) => {
                self.node_key = Some(nk);
                self.inner = Some(n.iter());
                true
            }
            None => {
                self.node_key = None;
                self.inner = None;
                false
            }
        }
    }
}

impl<'a> Iterator for RangeIter<'a> {
    type Item = EntryView<'a>;

    fn next(&mut self) -> Option<EntryView<'a>> {
        if self.done {
            return None;
        }
        loop {
            let inner = self.inner.as_mut()?;
            let e = if self.rev {
                inner.next_back()
            } else {
                inner.next()
            };
            match e {
                Some(e) => {
                    if !self.rev {
                        if e.id < self.start {
                            continue;
                        }
                        if e.id > self.end {
                            self.done = true;
                            return None;
                        }
                    } else {
                        if e.id > self.end {
                            continue;
                        }
                        if e.id < self.start {
                            self.done = true;
                            return None;
                        }
                    }
                    return Some(e);
                }
                None => {
                    if !self.advance_node() {
                        self.done = true;
                        return None;
                    }
                }
            }
        }
    }
}
