//! Compressed radix tree ("rax") holding a stream's nodes, keyed by 16-byte
//! big-endian stream IDs (`ms` then `seq`, both big-endian `u64`).
//!
//! # Shape
//!
//! The tree has the same node shapes as the radix tree Redis uses for streams,
//! so [`Rax::node_count`] equals the `radix-tree-nodes` field of
//! `XINFO STREAM` after the same sequence of inserts and removes:
//!
//! * a *chain* node holds a run of one or more bytes and exactly one child
//!   (Redis: a compressed node, or a plain node with a single child);
//! * a *branch* node holds two or more children, each reached through one
//!   byte, the bytes strictly ascending;
//! * a *leaf* is the node reached after the 16th byte of a key; it carries
//!   the value. Because every key has exactly 16 bytes, no key is a prefix of
//!   another, so only leaves carry values;
//! * the root of an empty tree is a childless, valueless node; it counts as
//!   one node, so an empty tree has `node_count() == 1`.
//!
//! Insertion splits a chain at the first mismatching byte into an optional
//! leading chain (the bytes before the mismatch, reusing the old node), a new
//! branch, and an optional trailing chain (the bytes after the mismatching
//! byte), then hangs the rest of the new key off the branch as one chain plus
//! a leaf. Removal frees the leaf and every single-child node above it up to
//! the first branch (never the root); a branch left with one child becomes a
//! chain and is merged with the single-child nodes directly above and below
//! it. These are the steps Redis takes, with the same node accounting.
//!
//! This is the rax of Redis (its node-shape logic has not changed since
//! Redis 5), checked operation by operation against a real redis-server by
//! `tests/rax_parity/check_rax_parity.py`. Redis 8.8 stores the values of
//! fixed-length keys (stream IDs among them) in the parent's child slot instead
//! of a leaf node of their own (redis/redis#15256, "leaf inlining"): its
//! `radix-tree-nodes` is [`Rax::inlined_node_count`], `node_count() - len()`,
//! since every key ends in exactly one leaf and nothing else changes shape.
//!
//! # Invariant
//!
//! A tree made by [`Rax::new`] (Redis up to 8.2) stays *canonical*: every maximal run of single-child nodes is one
//! chain node (a chain's child is never a chain), every branch has at least
//! two children, every leaf sits at depth 16, and `node_count()` equals the
//! number of nodes reachable from the root. [`Rax::validate`] checks all of
//! this plus the arena bookkeeping. A tree made by [`Rax::new_inlined`] (Redis 8.8, the
//! stream rax) differs only on removal: a branch of leaves keeps its last leaf without
//! merging, and a leaf parent never merges into the chain above it, so its shape depends
//! on history (chains may hang off chains); it is checked against recorded 8.8 counts.
//!
//! # Storage
//!
//! Nodes live in an arena (`Vec` plus a free list) and refer to each other by
//! `u32` index. The root always stays in slot 0: a node that Redis would
//! reallocate or replace keeps its slot here, so no parent link ever needs
//! patching. Every operation walks at most 17 nodes; lookups and seeks never
//! allocate, and nothing recurses.

use std::fmt;

mod lookup;
mod validate;

#[cfg(test)]
mod tests;

/// A stream ID as stored in the tree: big-endian milliseconds, then
/// big-endian sequence number.
pub type RaxKey = [u8; 16];

const KEY_LEN: usize = 16;
/// Arena slot of the root node; it never moves.
const ROOT: u32 = 0;
/// End of the free list.
const NIL: u32 = u32::MAX;

#[derive(Clone)]
enum Node<V> {
    /// Unused arena slot; holds the next slot of the free list (or `NIL`).
    Vacant(u32),
    /// Root of an empty tree: no children, no value.
    Empty,
    /// Node reached after the last byte of a key.
    Leaf(V),
    /// `len` (1..=16) bytes leading to exactly one child.
    Chain {
        len: u8,
        bytes: [u8; KEY_LEN],
        child: u32,
    },
    /// Two or more children, reached through strictly ascending bytes.
    Branch(Fan),
}

/// Radix tree keyed by [`RaxKey`]; see the module documentation.
#[derive(Clone)]
pub struct Rax<V> {
    nodes: Vec<Node<V>>,
    /// Head of the free list of vacant slots.
    free: u32,
    /// Number of keys.
    len: usize,
    /// Number of live nodes; mirrors Redis' `rax->numnodes`.
    count: usize,
    /// Redis 8.8's fixed-length-key mode (see [`Rax::new_inlined`]).
    inline: bool,
}

/// A run of bytes copied into a zero-padded chain buffer.
fn run(bytes: &[u8]) -> [u8; KEY_LEN] {
    let mut out = [0u8; KEY_LEN];
    out[..bytes.len()].copy_from_slice(bytes);
    out
}

/// Index of the first position where `a` and `b` differ (same lengths).
fn first_diff(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// Children of a branch in one allocation: `n` edge bytes, strictly
/// ascending, then `n` child slots as little-endian `u32`s (so `n` is the
/// length divided by 5). Keeping both in one block saves a cache miss per
/// branch on every walk.
#[derive(Clone)]
struct Fan(Vec<u8>);

impl Fan {
    fn two(e0: u8, k0: u32, e1: u8, k1: u32) -> Fan {
        let mut v = Vec::with_capacity(10);
        v.extend_from_slice(&[e0, e1]);
        v.extend_from_slice(&k0.to_le_bytes());
        v.extend_from_slice(&k1.to_le_bytes());
        Fan(v)
    }

    #[inline]
    fn len(&self) -> usize {
        self.0.len() / 5
    }

    #[inline]
    fn edges(&self) -> &[u8] {
        &self.0[..self.len()]
    }

    #[inline]
    fn kid(&self, i: usize) -> u32 {
        let at = self.len() + 4 * i;
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.0[at..at + 4]);
        u32::from_le_bytes(b)
    }

    /// Inserts edge `e` leading to `k` at position `p`.
    fn insert(&mut self, p: usize, e: u8, k: u32) {
        let n = self.len();
        let v = &mut self.0;
        v.extend_from_slice(&[0; 5]);
        // Children from p on move right by 5 bytes, those before by 1.
        v.copy_within(n + 4 * p..5 * n, n + 4 * p + 5);
        v.copy_within(n..n + 4 * p, n + 1);
        v[n + 1 + 4 * p..n + 5 + 4 * p].copy_from_slice(&k.to_le_bytes());
        v.copy_within(p..n, p + 1);
        v[p] = e;
    }

    /// Removes the edge at position `p`.
    fn remove(&mut self, p: usize) {
        let n = self.len();
        let v = &mut self.0;
        v.copy_within(p + 1..n, p);
        v.copy_within(n..n + 4 * p, n - 1);
        v.copy_within(n + 4 * p + 4..5 * n, n - 1 + 4 * p);
        v.truncate(5 * n - 5);
    }
}

/// Position of `c` among sorted `edges` (`Ok`), or where it would go (`Err`).
/// Tries the last edge first: stream IDs mostly grow, so lookups and inserts
/// usually hit the end of a branch.
#[inline]
fn find_edge(edges: &[u8], c: u8) -> Result<usize, usize> {
    match edges.last() {
        Some(&last) if c > last => Err(edges.len()),
        Some(&last) if c == last => Ok(edges.len() - 1),
        _ => edges.binary_search(&c),
    }
}

impl<V> Default for Rax<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V> Rax<V> {
    /// An empty tree (one node: the root), shaped as Redis's rax up to 8.2.
    pub fn new() -> Self {
        Rax {
            nodes: vec![Node::Empty],
            free: NIL,
            len: 0,
            count: 1,
            inline: false,
        }
    }

    /// An empty tree shaped as Redis 8.8's fixed-length-key rax (the stream rax since
    /// redis/redis#15256), whose values sit in their parent's child slot: the node a
    /// leaf hangs from (its *leaf parent*) then never merges into a chain above it, and a
    /// branch of leaves left with one leaf is not merged with its neighbours. Leaves are
    /// still nodes here; [`Rax::inlined_node_count`] does not count them.
    pub fn new_inlined() -> Self {
        Rax {
            inline: true,
            ..Rax::new()
        }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the tree holds no key.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of nodes, equal to Redis' `numnodes` (`radix-tree-nodes`) after
    /// the same sequence of operations. An empty tree has one node.
    pub fn node_count(&self) -> usize {
        self.count
    }

    /// Number of nodes as Redis 8.8 counts them for a fixed-length-key tree: the
    /// leaves are inlined into their parents' child slots, so one node fewer per key
    /// (an empty tree still has its root). This is 8.8's `radix-tree-nodes`.
    pub fn inlined_node_count(&self) -> usize {
        self.count - self.len
    }

    /// Removes every key, keeping the arena's capacity.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.nodes.push(Node::Empty);
        self.free = NIL;
        self.len = 0;
        self.count = 1;
    }

    fn alloc(&mut self, node: Node<V>) -> u32 {
        self.count += 1;
        if self.free != NIL {
            let idx = self.free;
            let slot = &mut self.nodes[idx as usize];
            match slot {
                Node::Vacant(next) => self.free = *next,
                _ => unreachable!("free list points at a live node"),
            }
            *slot = node;
            idx
        } else {
            let idx = self.nodes.len();
            assert!(idx < NIL as usize, "rax arena exhausted");
            self.nodes.push(node);
            idx as u32
        }
    }

    fn release(&mut self, idx: u32) -> Node<V> {
        self.count -= 1;
        let old = std::mem::replace(&mut self.nodes[idx as usize], Node::Vacant(self.free));
        self.free = idx;
        old
    }

    /// New subtree for the last bytes of a key: a chain of `suffix` (when
    /// non-empty) leading to a leaf holding `value`.
    fn new_tail(&mut self, suffix: &[u8], value: V) -> u32 {
        let leaf = self.alloc(Node::Leaf(value));
        if suffix.is_empty() {
            leaf
        } else {
            self.alloc(Node::Chain {
                len: suffix.len() as u8,
                bytes: run(suffix),
                child: leaf,
            })
        }
    }

    /// Inserts `key`, returning the previous value when the key was present.
    pub fn insert(&mut self, key: RaxKey, value: V) -> Option<V> {
        // What to do once the walk has stopped.
        enum Stop {
            /// Split the chain at `n` (starting at depth `d`) at offset `j`.
            Split {
                n: u32,
                d: usize,
                j: usize,
                len: usize,
                bytes: [u8; KEY_LEN],
                next: u32,
            },
            /// Add an edge at position `p` to the branch `n` at depth `d`.
            AddEdge { n: u32, d: usize, p: usize },
        }

        let mut n = ROOT;
        let mut d = 0usize;
        let stop = loop {
            match &mut self.nodes[n as usize] {
                Node::Leaf(v) => return Some(std::mem::replace(v, value)),
                Node::Empty => {
                    // Only the root of an empty tree: it becomes a chain of
                    // the whole key.
                    let leaf = self.alloc(Node::Leaf(value));
                    self.nodes[n as usize] = Node::Chain {
                        len: KEY_LEN as u8,
                        bytes: key,
                        child: leaf,
                    };
                    self.len += 1;
                    return None;
                }
                Node::Chain { len, bytes, child } => {
                    let l = *len as usize;
                    match first_diff(&bytes[..l], &key[d..d + l]) {
                        None => {
                            d += l;
                            n = *child;
                        }
                        Some(j) => {
                            break Stop::Split {
                                n,
                                d,
                                j,
                                len: l,
                                bytes: *bytes,
                                next: *child,
                            }
                        }
                    }
                }
                Node::Branch(fan) => match find_edge(fan.edges(), key[d]) {
                    Ok(p) => {
                        n = fan.kid(p);
                        d += 1;
                    }
                    Err(p) => break Stop::AddEdge { n, d, p },
                },
                Node::Vacant(_) => unreachable!("walked into a vacant slot"),
            }
        };
        self.len += 1;
        match stop {
            Stop::AddEdge { n, d, p } => {
                let tail = self.new_tail(&key[d + 1..], value);
                match &mut self.nodes[n as usize] {
                    Node::Branch(fan) => fan.insert(p, key[d], tail),
                    _ => unreachable!("walk stopped at a branch"),
                }
            }
            Stop::Split {
                n,
                d,
                j,
                len,
                bytes,
                next,
            } => {
                // Bytes after the mismatching one keep their own chain.
                let postfix = if j + 1 < len {
                    self.alloc(Node::Chain {
                        len: (len - j - 1) as u8,
                        bytes: run(&bytes[j + 1..len]),
                        child: next,
                    })
                } else {
                    next
                };
                let tail = self.new_tail(&key[d + j + 1..], value);
                let (old_byte, new_byte) = (bytes[j], key[d + j]);
                let branch = Node::Branch(if old_byte < new_byte {
                    Fan::two(old_byte, postfix, new_byte, tail)
                } else {
                    Fan::two(new_byte, tail, old_byte, postfix)
                });
                if j == 0 {
                    // The branch takes the chain's place.
                    self.nodes[n as usize] = branch;
                } else {
                    // The chain keeps the bytes before the mismatch.
                    let b = self.alloc(branch);
                    self.nodes[n as usize] = Node::Chain {
                        len: j as u8,
                        bytes: run(&bytes[..j]),
                        child: b,
                    };
                }
            }
        }
        None
    }

    /// Removes `key`, returning its value when it was present.
    pub fn remove(&mut self, key: &RaxKey) -> Option<V> {
        // Ancestors of the leaf: (node, depth at which it starts).
        let mut path = [(ROOT, 0u8); KEY_LEN + 1];
        let mut sp = 0usize;
        let mut n = ROOT;
        let mut d = 0usize;
        loop {
            match &self.nodes[n as usize] {
                Node::Leaf(_) => break,
                Node::Empty => return None,
                Node::Chain { len, bytes, child } => {
                    let l = *len as usize;
                    if bytes[..l] != key[d..d + l] {
                        return None;
                    }
                    path[sp] = (n, d as u8);
                    sp += 1;
                    d += l;
                    n = *child;
                }
                Node::Branch(fan) => {
                    let p = find_edge(fan.edges(), key[d]).ok()?;
                    path[sp] = (n, d as u8);
                    sp += 1;
                    d += 1;
                    n = fan.kid(p);
                }
                Node::Vacant(_) => unreachable!("walked into a vacant slot"),
            }
        }
        let value = match self.release(n) {
            Node::Leaf(v) => v,
            _ => unreachable!("walk ended on a non-leaf"),
        };
        self.len -= 1;

        // Free the single-child nodes above the leaf, up to the first branch
        // or the root (which is never freed).
        let (h, hd) = loop {
            sp -= 1;
            let (h, hd) = path[sp];
            if h == ROOT || matches!(self.nodes[h as usize], Node::Branch(_)) {
                break (h, hd as usize);
            }
            self.release(h);
        };

        // Unlink the freed subtree from `h`.
        let node = &mut self.nodes[h as usize];
        let single = match node {
            Node::Chain { .. } => {
                // The root lost its only child: the tree is empty.
                *node = Node::Empty;
                None
            }
            Node::Branch(fan) => {
                let p = find_edge(fan.edges(), key[hd]).expect("removed edge present");
                fan.remove(p);
                (fan.len() == 1).then(|| (fan.edges()[0], fan.kid(0)))
            }
            _ => unreachable!("unlinking from a childless node"),
        };
        if let Some((edge, child)) = single {
            // A branch left with one child is a one-byte chain, which may
            // merge with its neighbours (Redis 8.8: not if the branch held leaves,
            // whose slots it only shrinks).
            self.nodes[h as usize] = Node::Chain {
                len: 1,
                bytes: run(&[edge]),
                child,
            };
            let leaf_parent = self.inline && hd + 1 == KEY_LEN;
            if !leaf_parent {
                self.recompress(h, &path[..sp]);
            }
        }
        Some(value)
    }

    /// `h` just became a single-child node: merge it with the single-child
    /// nodes directly above it (`ancestors`, root first) and below it.
    fn recompress(&mut self, h: u32, ancestors: &[(u32, u8)]) {
        let mut start = h;
        for &(p, _) in ancestors.iter().rev() {
            if matches!(self.nodes[p as usize], Node::Chain { .. }) {
                start = p;
            } else {
                break;
            }
        }
        let mut buf = [0u8; KEY_LEN];
        let mut total = 0usize;
        let mut merged = 0usize;
        let mut cur = start;
        while let Node::Chain { len, bytes, child } = &self.nodes[cur as usize] {
            // Redis 8.8 never merges a leaf parent into the chain above it.
            if self.inline && cur != start && matches!(self.nodes[*child as usize], Node::Leaf(_)) {
                break;
            }
            let l = *len as usize;
            buf[total..total + l].copy_from_slice(&bytes[..l]);
            total += l;
            merged += 1;
            cur = *child;
        }
        if merged > 1 {
            let mut x = match &self.nodes[start as usize] {
                Node::Chain { child, .. } => *child,
                _ => unreachable!(),
            };
            while x != cur {
                x = match self.release(x) {
                    Node::Chain { child, .. } => child,
                    _ => unreachable!(),
                };
            }
            self.nodes[start as usize] = Node::Chain {
                len: total as u8,
                bytes: buf,
                child: cur,
            };
        }
    }
}

impl<V: fmt::Debug> fmt::Debug for Rax<V> {
    /// Key count, node count, then the entries with keys shown as
    /// `ms-seq`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Id(RaxKey);
        impl fmt::Debug for Id {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let (ms, seq) = self.0.split_at(8);
                let ms = u64::from_be_bytes(ms.try_into().expect("8 bytes"));
                let seq = u64::from_be_bytes(seq.try_into().expect("8 bytes"));
                write!(f, "{ms}-{seq}")
            }
        }
        struct Entries<'a, V>(&'a Rax<V>);
        impl<V: fmt::Debug> fmt::Debug for Entries<'_, V> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_map()
                    .entries(self.0.iter().map(|(k, v)| (Id(k), v)))
                    .finish()
            }
        }
        f.debug_struct("Rax")
            .field("len", &self.len)
            .field("node_count", &self.count)
            .field("entries", &Entries(self))
            .finish()
    }
}
