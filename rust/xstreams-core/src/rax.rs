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

    /// Value stored under `key`.
    pub fn get(&self, key: &RaxKey) -> Option<&V> {
        let idx = self.find(key)?;
        match &self.nodes[idx as usize] {
            Node::Leaf(v) => Some(v),
            _ => None,
        }
    }

    /// Mutable value stored under `key`.
    pub fn get_mut(&mut self, key: &RaxKey) -> Option<&mut V> {
        let idx = self.find(key)?;
        match &mut self.nodes[idx as usize] {
            Node::Leaf(v) => Some(v),
            _ => None,
        }
    }

    /// Slot of the leaf of `key`.
    fn find(&self, key: &RaxKey) -> Option<u32> {
        let mut n = ROOT;
        let mut d = 0usize;
        loop {
            match &self.nodes[n as usize] {
                Node::Leaf(_) => return Some(n),
                Node::Empty => return None,
                Node::Chain { len, bytes, child } => {
                    let l = *len as usize;
                    if bytes[..l] != key[d..d + l] {
                        return None;
                    }
                    d += l;
                    n = *child;
                }
                Node::Branch(fan) => {
                    let p = find_edge(fan.edges(), key[d]).ok()?;
                    d += 1;
                    n = fan.kid(p);
                }
                Node::Vacant(_) => unreachable!("walked into a vacant slot"),
            }
        }
    }

    /// Follows the first (`forward`) or last child from `n`, which starts at
    /// depth `d`, writing the bytes into `buf[d..]`; returns the leaf's value.
    fn descend(&self, mut n: u32, mut d: usize, buf: &mut RaxKey, forward: bool) -> Option<&V> {
        loop {
            match &self.nodes[n as usize] {
                Node::Leaf(v) => return Some(v),
                Node::Empty => return None,
                Node::Chain { len, bytes, child } => {
                    let l = *len as usize;
                    buf[d..d + l].copy_from_slice(&bytes[..l]);
                    d += l;
                    n = *child;
                }
                Node::Branch(fan) => {
                    let p = if forward { 0 } else { fan.len() - 1 };
                    buf[d] = fan.edges()[p];
                    d += 1;
                    n = fan.kid(p);
                }
                Node::Vacant(_) => unreachable!("walked into a vacant slot"),
            }
        }
    }

    /// Smallest key.
    pub fn first(&self) -> Option<(RaxKey, &V)> {
        let mut buf = [0u8; KEY_LEN];
        let v = self.descend(ROOT, 0, &mut buf, true)?;
        Some((buf, v))
    }

    /// Greatest key.
    pub fn last(&self) -> Option<(RaxKey, &V)> {
        let mut buf = [0u8; KEY_LEN];
        let v = self.descend(ROOT, 0, &mut buf, false)?;
        Some((buf, v))
    }

    /// Nearest key to `key` going up (`forward`) or down; `key` itself
    /// qualifies when `inclusive`.
    fn seek(&self, key: &RaxKey, forward: bool, inclusive: bool) -> Option<(RaxKey, &V)> {
        let mut buf = *key;
        // Deepest branch on the path with a sibling on the wanted side of
        // the path: (branch, sibling position, depth of the branch).
        let mut fallback: Option<(u32, usize, usize)> = None;
        let mut n = ROOT;
        let mut d = 0usize;
        loop {
            match &self.nodes[n as usize] {
                Node::Empty => return None,
                Node::Leaf(v) => {
                    if inclusive {
                        return Some((*key, v));
                    }
                    break;
                }
                Node::Chain { len, bytes, child } => {
                    let l = *len as usize;
                    match first_diff(&bytes[..l], &key[d..d + l]) {
                        None => {
                            d += l;
                            n = *child;
                        }
                        Some(j) => {
                            if (bytes[j] > key[d + j]) == forward {
                                // The whole subtree lies on the wanted side.
                                let v = self.descend(n, d, &mut buf, forward)?;
                                return Some((buf, v));
                            }
                            break;
                        }
                    }
                }
                Node::Branch(fan) => match find_edge(fan.edges(), key[d]) {
                    Ok(p) => {
                        if forward {
                            if p + 1 < fan.len() {
                                fallback = Some((n, p + 1, d));
                            }
                        } else if p > 0 {
                            fallback = Some((n, p - 1, d));
                        }
                        n = fan.kid(p);
                        d += 1;
                    }
                    Err(p) => {
                        let q = if forward {
                            (p < fan.len()).then_some(p)
                        } else {
                            p.checked_sub(1)
                        };
                        if let Some(q) = q {
                            buf[d] = fan.edges()[q];
                            let v = self.descend(fan.kid(q), d + 1, &mut buf, forward)?;
                            return Some((buf, v));
                        }
                        break;
                    }
                },
                Node::Vacant(_) => unreachable!("walked into a vacant slot"),
            }
        }
        let (b, p, fd) = fallback?;
        match &self.nodes[b as usize] {
            Node::Branch(fan) => {
                buf[fd] = fan.edges()[p];
                let v = self.descend(fan.kid(p), fd + 1, &mut buf, forward)?;
                Some((buf, v))
            }
            _ => unreachable!("fallback is not a branch"),
        }
    }

    /// Greatest key `<= key`.
    pub fn seek_le(&self, key: &RaxKey) -> Option<(RaxKey, &V)> {
        self.seek(key, false, true)
    }

    /// Least key `>= key`.
    pub fn seek_ge(&self, key: &RaxKey) -> Option<(RaxKey, &V)> {
        self.seek(key, true, true)
    }

    /// Least key `> key`.
    pub fn next_after(&self, key: &RaxKey) -> Option<(RaxKey, &V)> {
        self.seek(key, true, false)
    }

    /// Greatest key `< key`.
    pub fn prev_before(&self, key: &RaxKey) -> Option<(RaxKey, &V)> {
        self.seek(key, false, false)
    }

    /// All keys in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = (RaxKey, &V)> + '_ {
        let mut it = Iter {
            rax: self,
            stack: [(ROOT, 0, 0); KEY_LEN],
            sp: 0,
            key: [0u8; KEY_LEN],
            pending: None,
            remaining: self.len,
        };
        it.dive(ROOT, 0);
        it
    }

    /// Checks the structural invariants: node shapes, sorted children, leaf
    /// depth, canonical chains, key and node counts, and that every arena
    /// slot is either reachable from the root or on the free list.
    pub fn validate(&self) -> Result<(), String> {
        let slots = self.nodes.len();
        if slots == 0 {
            return Err("arena has no root slot".into());
        }
        let mut seen = vec![false; slots];
        let mut leaves = 0usize;
        let mut reached = 0usize;
        // (node, depth, parent is a chain)
        let mut stack: Vec<(u32, usize, bool)> = vec![(ROOT, 0, false)];
        while let Some((n, d, under_chain)) = stack.pop() {
            let i = n as usize;
            if i >= slots {
                return Err(format!("link to slot {n} beyond arena of {slots}"));
            }
            if seen[i] {
                return Err(format!("slot {n} reached twice"));
            }
            seen[i] = true;
            reached += 1;
            match &self.nodes[i] {
                Node::Vacant(_) => return Err(format!("vacant slot {n} is linked at depth {d}")),
                Node::Empty => {
                    if n != ROOT || self.len != 0 {
                        return Err(format!("empty node in slot {n} with {} keys", self.len));
                    }
                }
                Node::Leaf(_) => {
                    if d != KEY_LEN {
                        return Err(format!("leaf in slot {n} at depth {d}"));
                    }
                    leaves += 1;
                }
                Node::Chain { len, bytes, child } => {
                    let l = *len as usize;
                    if l == 0 || d + l > KEY_LEN {
                        return Err(format!("chain in slot {n} at depth {d} has {l} bytes"));
                    }
                    if bytes[l..].iter().any(|&b| b != 0) {
                        return Err(format!("chain in slot {n} has bytes past its length"));
                    }
                    // Redis 8.8's shapes depend on history: a chain may hang off a
                    // chain there (a leaf parent, or what remains of one once split).
                    if under_chain && !self.inline {
                        return Err(format!("chain in slot {n} hangs off a chain"));
                    }
                    stack.push((*child, d + l, true));
                }
                Node::Branch(fan) => {
                    if fan.0.len() % 5 != 0 || fan.len() < 2 {
                        return Err(format!(
                            "branch in slot {n} has {} bytes of children",
                            fan.0.len()
                        ));
                    }
                    if fan.edges().windows(2).any(|w| w[0] >= w[1]) {
                        return Err(format!("branch in slot {n} has unsorted edges"));
                    }
                    if d >= KEY_LEN {
                        return Err(format!("branch in slot {n} at depth {d}"));
                    }
                    stack.extend((0..fan.len()).map(|i| (fan.kid(i), d + 1, false)));
                }
            }
        }
        if leaves != self.len {
            return Err(format!("{leaves} leaves but len() is {}", self.len));
        }
        if reached != self.count {
            return Err(format!(
                "{reached} reachable nodes but node_count() is {}",
                self.count
            ));
        }
        let mut vacant = 0usize;
        let mut f = self.free;
        while f != NIL {
            let i = f as usize;
            if i >= slots || seen[i] {
                return Err(format!(
                    "free list reaches slot {f} twice, live or out of range"
                ));
            }
            seen[i] = true;
            match self.nodes[i] {
                Node::Vacant(next) => f = next,
                _ => return Err(format!("free list reaches live slot {f}")),
            }
            vacant += 1;
        }
        if reached + vacant != slots {
            return Err(format!(
                "{} orphan slots ({reached} reachable, {vacant} free, {slots} total)",
                slots - reached - vacant
            ));
        }
        Ok(())
    }
}

/// Ascending iterator: a stack of the branches on the path to the current
/// leaf, each with the index of the child being visited.
struct Iter<'a, V> {
    rax: &'a Rax<V>,
    /// (branch, child index, depth of the branch)
    stack: [(u32, u16, u8); KEY_LEN],
    sp: usize,
    key: RaxKey,
    pending: Option<&'a V>,
    remaining: usize,
}

impl<'a, V> Iter<'a, V> {
    /// Descends to the first leaf under `n` (at depth `d`).
    fn dive(&mut self, mut n: u32, mut d: usize) {
        loop {
            match &self.rax.nodes[n as usize] {
                Node::Leaf(v) => {
                    self.pending = Some(v);
                    return;
                }
                Node::Empty => return,
                Node::Chain { len, bytes, child } => {
                    let l = *len as usize;
                    self.key[d..d + l].copy_from_slice(&bytes[..l]);
                    d += l;
                    n = *child;
                }
                Node::Branch(fan) => {
                    self.stack[self.sp] = (n, 0, d as u8);
                    self.sp += 1;
                    self.key[d] = fan.edges()[0];
                    d += 1;
                    n = fan.kid(0);
                }
                Node::Vacant(_) => unreachable!("walked into a vacant slot"),
            }
        }
    }
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (RaxKey, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        let v = self.pending.take()?;
        let out = (self.key, v);
        self.remaining -= 1;
        while self.sp > 0 {
            let (b, i, d) = self.stack[self.sp - 1];
            let Node::Branch(fan) = &self.rax.nodes[b as usize] else {
                unreachable!("iterator stack holds a non-branch");
            };
            let next = i as usize + 1;
            if next < fan.len() {
                self.stack[self.sp - 1].1 = next as u16;
                self.key[d as usize] = fan.edges()[next];
                self.dive(fan.kid(next), d as usize + 1);
                break;
            }
            self.sp -= 1;
        }
        Some(out)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn id(ms: u64, seq: u64) -> RaxKey {
        let mut k = [0u8; 16];
        k[..8].copy_from_slice(&ms.to_be_bytes());
        k[8..].copy_from_slice(&seq.to_be_bytes());
        k
    }

    /// Node count of the canonical compressed trie over `keys`, computed
    /// without a tree: nodes sit at the root, at every branching prefix, at
    /// every child of a branching prefix, and at every key.
    fn canonical_nodes<'a>(keys: impl IntoIterator<Item = &'a RaxKey>) -> usize {
        let keys: Vec<&RaxKey> = keys.into_iter().collect();
        let mut branching: BTreeSet<&[u8]> = BTreeSet::new();
        for w in keys.windows(2) {
            let l = w[0]
                .iter()
                .zip(w[1].iter())
                .take_while(|(a, b)| a == b)
                .count();
            branching.insert(&w[0][..l]);
        }
        let mut nodes: BTreeSet<&[u8]> = BTreeSet::new();
        nodes.insert(&[]);
        for k in &keys {
            nodes.insert(&k[..]);
            for d in 0..KEY_LEN {
                if branching.contains(&k[..d]) {
                    nodes.insert(&k[..d]);
                    nodes.insert(&k[..d + 1]);
                }
            }
        }
        nodes.len()
    }

    /// Replays a parity log (see tests/rax_parity/check_rax_parity.py).
    /// Returns (operations, sequences, mismatch descriptions).
    fn replay(log: &str) -> (usize, usize, Vec<String>) {
        let mut rax: Rax<u64> = Rax::new();
        let (mut ops, mut seqs) = (0usize, 0usize);
        let mut bad = Vec::new();
        // Logs from a server that inlines leaves (Redis 8.8) say so on their first line.
        let mut inline = false;
        for (lineno, line) in log.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line == "inline-leaves" {
                inline = true;
                rax = Rax::new_inlined();
                continue;
            }
            if line == "reset" {
                rax.clear();
                seqs += 1;
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f.len(), 4, "line {}: {line:?}", lineno + 1);
            let ms: u64 = f[1].parse().expect("ms");
            let seq: u64 = f[2].parse().expect("seq");
            let want: usize = f[3].parse().expect("node count");
            let key = id(ms, seq);
            match f[0] {
                "+" => {
                    if rax.insert(key, ms ^ seq).is_some() {
                        bad.push(format!("line {}: {ms}-{seq} inserted twice", lineno + 1));
                    }
                }
                "-" => {
                    if rax.remove(&key) != Some(ms ^ seq) {
                        bad.push(format!(
                            "line {}: {ms}-{seq} missing on removal",
                            lineno + 1
                        ));
                    }
                }
                op => panic!("line {}: unknown op {op:?}", lineno + 1),
            }
            ops += 1;
            let got = if inline {
                rax.inlined_node_count()
            } else {
                rax.node_count()
            };
            if got != want {
                bad.push(format!(
                    "line {}: {} {ms}-{seq}: node count {got} but redis reported {want}",
                    lineno + 1,
                    f[0],
                ));
            }
            if let Err(e) = rax.validate() {
                bad.push(format!("line {}: invalid tree: {e}", lineno + 1));
            }
        }
        (ops, seqs, bad)
    }

    /// Cases recorded from real redis-servers (8.2.3: leaf nodes; 8.8: inlined leaves)
    /// with `check_rax_parity.py --emit-cases`.
    #[test]
    fn redis_parity_recorded() {
        for log in [RECORDED, RECORDED_INLINE] {
            let (ops, seqs, bad) = replay(log);
            assert!(ops >= 300 && seqs >= 6, "{ops} ops in {seqs} sequences");
            assert!(
                bad.is_empty(),
                "{} mismatches:\n{}",
                bad.len(),
                bad.join("\n")
            );
        }
    }

    /// Replays the log named by RAX_PARITY_LOG; run by
    /// tests/rax_parity/check_rax_parity.py.
    #[test]
    #[ignore = "needs a log recorded from redis-server (RAX_PARITY_LOG)"]
    fn redis_parity_log() {
        let path = std::env::var("RAX_PARITY_LOG").expect("RAX_PARITY_LOG names a parity log");
        let log = std::fs::read_to_string(&path).expect("readable parity log");
        let (ops, seqs, bad) = replay(&log);
        println!(
            "rax parity: {ops} operations in {seqs} sequences, {} mismatches",
            bad.len()
        );
        for b in bad.iter().take(50) {
            println!("  {b}");
        }
        assert!(bad.is_empty(), "{} mismatches", bad.len());
    }

    /// Every lookup and seek on `rax` agrees with `model` for `probe`.
    fn check_queries(rax: &Rax<u32>, model: &BTreeMap<RaxKey, u32>, probe: &RaxKey) {
        let m = |e: Option<(&RaxKey, &u32)>| e.map(|(k, v)| (*k, *v));
        let r = |e: Option<(RaxKey, &u32)>| e.map(|(k, v)| (k, *v));
        assert_eq!(rax.get(probe), model.get(probe));
        assert_eq!(r(rax.seek_ge(probe)), m(model.range(*probe..).next()));
        assert_eq!(r(rax.seek_le(probe)), m(model.range(..=*probe).next_back()));
        assert_eq!(
            r(rax.next_after(probe)),
            m(model
                .range((
                    std::ops::Bound::Excluded(*probe),
                    std::ops::Bound::Unbounded
                ))
                .next())
        );
        assert_eq!(
            r(rax.prev_before(probe)),
            m(model.range(..*probe).next_back())
        );
    }

    fn check_whole(rax: &Rax<u32>, model: &BTreeMap<RaxKey, u32>) {
        if let Err(e) = rax.validate() {
            panic!("invalid tree: {e}");
        }
        assert_eq!(rax.len(), model.len());
        assert_eq!(rax.is_empty(), model.is_empty());
        if rax.inline {
            // Redis 8.8's shapes depend on history: never fewer nodes than canonical.
            assert!(rax.node_count() >= canonical_nodes(model.keys()));
            assert_eq!(rax.inlined_node_count(), rax.node_count() - rax.len());
        } else {
            assert_eq!(rax.node_count(), canonical_nodes(model.keys()));
        }
        let got: Vec<(RaxKey, u32)> = rax.iter().map(|(k, v)| (k, *v)).collect();
        let want: Vec<(RaxKey, u32)> = model.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(got, want);
        assert_eq!(rax.iter().size_hint(), (model.len(), Some(model.len())));
        assert_eq!(rax.first().map(|(k, v)| (k, *v)), want.first().copied());
        assert_eq!(rax.last().map(|(k, v)| (k, *v)), want.last().copied());
    }

    fn key_strategy() -> impl Strategy<Value = RaxKey> {
        let bytes = prop::sample::select(vec![0u8, 1, 2, 0x7f, 0x80, 0xfe, 0xff]);
        prop_oneof![
            // Stream-like: few ms values, small sequence numbers.
            (0u64..4, 0u64..600).prop_map(|(ms, seq)| id(ms, seq)),
            // A base key with a few bytes changed anywhere.
            (0usize..3, prop::collection::vec((0usize..16, bytes), 0..4)).prop_map(
                |(base, muts)| {
                    let mut k = [[0u8; 16], [0xff; 16], id(1_700_000_000_000, 0)][base];
                    for (i, b) in muts {
                        k[i] = b;
                    }
                    k
                }
            ),
            any::<[u8; 16]>(),
        ]
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(RaxKey, u32),
        Remove(RaxKey),
        /// Remove the existing key at this position (modulo len).
        RemoveNth(usize),
        Query(RaxKey),
        GetMut(RaxKey, u32),
        Clear,
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        prop_oneof![
            10 => (key_strategy(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            3 => key_strategy().prop_map(Op::Remove),
            6 => any::<usize>().prop_map(Op::RemoveNth),
            6 => key_strategy().prop_map(Op::Query),
            1 => (key_strategy(), any::<u32>()).prop_map(|(k, v)| Op::GetMut(k, v)),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn matches_btreemap(ops in prop::collection::vec(op_strategy(), 1..300)) {
          for inline in [false, true] {
            let mut rax: Rax<u32> = if inline { Rax::new_inlined() } else { Rax::new() };
            let mut model: BTreeMap<RaxKey, u32> = BTreeMap::new();
            for op in ops.clone() {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(rax.insert(k, v), model.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(rax.remove(&k), model.remove(&k)),
                    Op::RemoveNth(i) => {
                        if let Some(&k) = model.keys().nth(i % model.len().max(1)) {
                            prop_assert_eq!(rax.remove(&k), model.remove(&k));
                        }
                    }
                    Op::Query(k) => {
                        check_queries(&rax, &model, &k);
                        // Also probe the neighbours of an existing key.
                        if let Some((&e, _)) = model.range(k..).next() {
                            check_queries(&rax, &model, &e);
                            let n = u128::from_be_bytes(e);
                            check_queries(&rax, &model, &n.wrapping_add(1).to_be_bytes());
                            check_queries(&rax, &model, &n.wrapping_sub(1).to_be_bytes());
                        }
                    }
                    Op::GetMut(k, v) => {
                        match (rax.get_mut(&k), model.get_mut(&k)) {
                            (Some(a), Some(b)) => { *a = v; *b = v; }
                            (None, None) => {}
                            (a, b) => prop_assert!(false, "get_mut {:?} vs {:?}", a, b),
                        }
                    }
                    Op::Clear => { rax.clear(); model.clear(); }
                }
                check_whole(&rax, &model);
            }
          }
        }

        /// Append-only inserts (like XADD) with removals anywhere.
        #[test]
        fn stream_like(steps in prop::collection::vec((0u8..10, 0u64..1 << 20, any::<usize>()), 1..400)) {
            let mut rax: Rax<u32> = Rax::new();
            let mut model: BTreeMap<RaxKey, u32> = BTreeMap::new();
            let (mut ms, mut seq) = (1_700_000_000_000u64, 0u64);
            for (i, (kind, gap, pick)) in steps.into_iter().enumerate() {
                match kind {
                    0..=2 => seq += 1,
                    3 => seq += gap,
                    4 => { ms += 1 + gap % 3; seq = 0; }
                    5 => { ms += gap; seq = gap & 0xff; }
                    _ => {
                        if !model.is_empty() {
                            let k = *model.keys().nth(pick % model.len()).expect("in range");
                            prop_assert_eq!(rax.remove(&k), model.remove(&k));
                            check_whole(&rax, &model);
                            continue;
                        }
                        seq += 1;
                    }
                }
                let k = id(ms, seq);
                prop_assert_eq!(rax.insert(k, i as u32), None);
                model.insert(k, i as u32);
                check_whole(&rax, &model);
            }
        }
    }

    proptest! {
        #[test]
        fn fan_matches_vecs(ops in prop::collection::vec((any::<u8>(), any::<u32>(), any::<bool>(), any::<usize>()), 1..600)) {
            let mut fan = Fan::two(10, 1, 20, 2);
            let (mut edges, mut kids) = (vec![10u8, 20], vec![1u32, 2]);
            for (e, k, add, pick) in ops {
                if add || edges.len() <= 2 {
                    if let Err(p) = edges.binary_search(&e) {
                        fan.insert(p, e, k);
                        edges.insert(p, e);
                        kids.insert(p, k);
                    }
                } else {
                    let p = pick % edges.len();
                    fan.remove(p);
                    edges.remove(p);
                    kids.remove(p);
                }
                prop_assert_eq!(fan.edges(), &edges[..]);
                let got: Vec<u32> = (0..fan.len()).map(|i| fan.kid(i)).collect();
                prop_assert_eq!(got, kids.clone());
            }
        }
    }

    #[test]
    fn node_is_compact() {
        // Chains and branches fit in 24 bytes; with a value of up to 24
        // bytes a slot is 32 bytes.
        assert!(std::mem::size_of::<Node<u64>>() <= 32);
        assert!(std::mem::size_of::<Node<Vec<u8>>>() <= 32);
    }

    #[test]
    fn empty_tree() {
        let mut rax: Rax<u8> = Rax::default();
        assert_eq!(rax.node_count(), 1);
        assert!(rax.is_empty());
        assert_eq!(rax.first(), None);
        assert_eq!(rax.last(), None);
        for k in [[0u8; 16], [0xff; 16], id(5, 5)] {
            assert_eq!(rax.get(&k), None);
            assert_eq!(rax.seek_ge(&k), None);
            assert_eq!(rax.seek_le(&k), None);
            assert_eq!(rax.next_after(&k), None);
            assert_eq!(rax.prev_before(&k), None);
            assert_eq!(rax.remove(&k), None);
        }
        assert_eq!(rax.iter().count(), 0);
        rax.validate().unwrap();
    }

    #[test]
    fn zero_and_max_keys() {
        let (lo, hi) = ([0u8; 16], [0xffu8; 16]);
        let mut rax = Rax::new();
        assert_eq!(rax.insert(lo, 1), None);
        assert_eq!(rax.node_count(), 2);
        assert_eq!(rax.seek_ge(&hi), None);
        assert_eq!(rax.seek_le(&hi), Some((lo, &1)));
        assert_eq!(rax.prev_before(&lo), None);
        assert_eq!(rax.next_after(&lo), None);
        assert_eq!(rax.insert(hi, 2), None);
        // Root branch {00, ff}, a 15-byte chain under each, two leaves.
        assert_eq!(rax.node_count(), 5);
        rax.validate().unwrap();
        assert_eq!(rax.insert(lo, 3), Some(1));
        assert_eq!(rax.node_count(), 5);
        assert_eq!(rax.first(), Some((lo, &3)));
        assert_eq!(rax.last(), Some((hi, &2)));
        assert_eq!(rax.seek_ge(&lo), Some((lo, &3)));
        assert_eq!(rax.next_after(&lo), Some((hi, &2)));
        assert_eq!(rax.prev_before(&hi), Some((lo, &3)));
        assert_eq!(rax.seek_le(&hi), Some((hi, &2)));
        let mid = id(1 << 63, 0);
        assert_eq!(rax.seek_ge(&mid), Some((hi, &2)));
        assert_eq!(rax.seek_le(&mid), Some((lo, &3)));
        assert_eq!(rax.remove(&hi), Some(2));
        assert_eq!(rax.node_count(), 2);
        rax.validate().unwrap();
        assert_eq!(rax.remove(&lo), Some(3));
        assert_eq!(rax.node_count(), 1);
        assert!(rax.is_empty());
        rax.validate().unwrap();
    }

    #[test]
    fn keys_differing_in_last_byte_only() {
        let mut rax = Rax::new();
        let base = id(1_700_000_000_000, 0);
        for b in (0..=255u8).rev() {
            let mut k = base;
            k[15] = b;
            rax.insert(k, b);
        }
        // 15-byte chain at the root, one branch of 256, 256 leaves.
        assert_eq!(rax.node_count(), 1 + 1 + 256);
        rax.validate().unwrap();
        let all: Vec<u8> = rax
            .iter()
            .map(|(k, v)| {
                assert_eq!(k[15], *v);
                *v
            })
            .collect();
        assert_eq!(all, (0..=255).collect::<Vec<u8>>());
        let mut k = base;
        k[15] = 100;
        assert_eq!(rax.next_after(&k).map(|(_, v)| *v), Some(101));
        assert_eq!(rax.prev_before(&k).map(|(_, v)| *v), Some(99));
        let mut below = base;
        below[14] = 0xff; // greater prefix than every key
        assert_eq!(rax.seek_le(&below).map(|(_, v)| *v), Some(255));
        assert_eq!(rax.seek_ge(&below), None);
        for b in 0..=253u8 {
            k[15] = b;
            assert_eq!(rax.remove(&k), Some(b));
        }
        assert_eq!(rax.node_count(), 4);
        k[15] = 254;
        rax.remove(&k);
        // The branch folded back into the root chain.
        assert_eq!(rax.node_count(), 2);
        rax.validate().unwrap();
    }

    #[test]
    fn keys_differing_in_first_byte_only() {
        let mut rax = Rax::new();
        for b in 0..=255u8 {
            let mut k = [0x5a; 16];
            k[0] = b;
            rax.insert(k, b);
        }
        // Root branch of 256, a 15-byte chain and a leaf under each edge.
        assert_eq!(rax.node_count(), 1 + 2 * 256);
        rax.validate().unwrap();
        let mut probe = [0u8; 16];
        probe[0] = 7;
        assert_eq!(rax.seek_ge(&probe).map(|(_, v)| *v), Some(7));
        assert_eq!(rax.seek_le(&probe).map(|(_, v)| *v), Some(6));
        probe[1] = 0xff;
        assert_eq!(rax.seek_ge(&probe).map(|(_, v)| *v), Some(8));
        assert_eq!(rax.seek_le(&probe).map(|(_, v)| *v), Some(7));
        for b in 1..=255u8 {
            let mut k = [0x5a; 16];
            k[0] = b;
            assert_eq!(rax.remove(&k), Some(b));
        }
        // Root folded into one 16-byte chain.
        assert_eq!(rax.node_count(), 2);
        assert_eq!(
            rax.first(),
            Some((
                [
                    0, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
                    0x5a, 0x5a, 0x5a
                ],
                &0
            ))
        );
        rax.validate().unwrap();
    }

    #[test]
    fn split_shapes() {
        let mut rax = Rax::new();
        rax.insert(id(0x0102_0304_0506_0708, 0x1112_1314_1516_1718), 0);
        assert_eq!(rax.node_count(), 2);
        // Mismatch in the middle of the chain: prefix chain, branch, postfix
        // chain, new chain and leaf.
        rax.insert(id(0x0102_0304_0506_0708, 0x1112_1399_0000_0000), 1);
        assert_eq!(rax.node_count(), 2 + 4);
        // Mismatch at the first byte of a chain: the branch replaces it.
        rax.insert(id(0x0102_0304_0506_0708, 0x1112_1314_1516_1799), 2);
        rax.validate().unwrap();
        assert_eq!(
            rax.node_count(),
            canonical_nodes(rax.iter().map(|(k, _)| k).collect::<Vec<_>>().iter())
        );
        // Remove the middle key: the branch it hung from folds back.
        rax.remove(&id(0x0102_0304_0506_0708, 0x1112_1399_0000_0000));
        rax.validate().unwrap();
        assert_eq!(rax.node_count(), 4);
    }

    #[test]
    fn clone_debug_clear() {
        let mut rax = Rax::new();
        for s in 0..10 {
            rax.insert(id(7, s), s);
        }
        let copy = rax.clone();
        rax.clear();
        assert!(rax.is_empty());
        assert_eq!(rax.node_count(), 1);
        rax.validate().unwrap();
        copy.validate().unwrap();
        assert_eq!(copy.len(), 10);
        assert_eq!(copy.get(&id(7, 3)), Some(&3));
        let text = format!("{copy:?}");
        assert!(
            text.starts_with("Rax { len: 10, node_count: 12, entries: {7-0: 0, 7-1: 1"),
            "{text}"
        );
        rax.insert(id(1, 1), 9);
        assert_eq!(rax.node_count(), 2);
        rax.validate().unwrap();
    }

    #[test]
    fn get_mut_updates() {
        let mut rax = Rax::new();
        rax.insert(id(1, 2), String::from("a"));
        rax.get_mut(&id(1, 2)).unwrap().push('b');
        assert_eq!(rax.get(&id(1, 2)).map(String::as_str), Some("ab"));
        assert!(rax.get_mut(&id(1, 3)).is_none());
    }

    const RECORDED: &str = "\
# radix-tree-nodes recorded from redis 8.2.3, stream-node-max-entries 1
# handpicked
reset
+ 0 1 2
+ 0 2 4
+ 0 3 5
+ 0 255 6
+ 0 256 9
+ 0 257 10
+ 0 65535 12
+ 0 65536 15
+ 0 4294967296 19
+ 0 72057594037927936 23
+ 0 18446744073709551615 25
+ 1 0 28
+ 1 1 30
+ 2 0 32
+ 255 0 34
+ 256 0 37
+ 256 1 39
+ 65536 0 42
+ 4294967296 0 46
+ 1099511627776 7 49
+ 72057594037927936 0 52
+ 72057594037927937 0 56
+ 144115188075855872 0 58
+ 9223372036854775808 0 60
+ 9223372036854775809 0 64
+ 18446744073709551614 18446744073709551615 66
+ 18446744073709551615 0 70
+ 18446744073709551615 1 72
+ 18446744073709551615 256 75
+ 18446744073709551615 18446744073709551614 78
+ 18446744073709551615 18446744073709551615 80
- 0 257 79
- 0 1 78
- 18446744073709551615 18446744073709551615 76
- 1 1 74
- 2 0 72
- 1 0 70
- 72057594037927936 0 66
- 72057594037927937 0 64
- 144115188075855872 0 62
- 0 2 61
- 0 3 60
- 0 255 58
- 0 256 55
- 18446744073709551615 18446744073709551614 52
- 18446744073709551615 256 49
- 0 65535 45
- 0 65536 41
- 0 4294967296 39
- 0 72057594037927936 36
- 0 18446744073709551615 33
- 255 0 30
- 256 0 28
- 256 1 24
- 65536 0 21
- 4294967296 0 17
- 1099511627776 7 15
- 9223372036854775808 0 11
- 9223372036854775809 0 8
- 18446744073709551614 18446744073709551615 4
- 18446744073709551615 0 2
- 18446744073709551615 1 1
# handpicked refill
reset
+ 5 0 2
+ 5 1 4
+ 5 2 5
+ 5 3 6
+ 6 0 10
- 5 0 9
- 5 1 8
- 5 2 6
- 5 3 2
- 6 0 1
+ 6 1 2
+ 7 0 6
+ 7 1 8
+ 1099511627776 0 12
+ 1099511627777 0 16
+ 1099511627777 9 18
- 1099511627777 9 16
- 1099511627777 0 12
- 1099511627776 0 8
- 7 1 6
- 7 0 2
- 6 1 1
+ 2199023255552 0 2
- 2199023255552 0 1
+ 2199023255808 0 2
+ 2199023255808 1 4
+ 2199023256064 0 8
+ 144115188075855872 0 11
+ 144115188075855872 1152921504606846976 15
- 2199023256064 0 11
- 144115188075855872 0 7
- 144115188075855872 1152921504606846976 4
- 2199023255808 0 2
- 2199023255808 1 1
# seed 1
reset
+ 1620460256196 0 2
- 1620460256196 0 1
+ 1620460256196 1 2
- 1620460256196 1 1
+ 1620460256473 29984 2
+ 1620460256473 29985 4
- 1620460256473 29984 2
+ 1620460256473 29986 4
- 1620460256473 29985 2
+ 1620460321461 0 6
- 1620460256473 29986 2
+ 72059214498249397 11848239804822359220 5
- 1620460321461 0 2
- 72059214498249397 11848239804822359220 1
+ 72144603558459563 0 2
+ 72144603558459563 259 6
+ 72144605621018728 0 10
+ 72144605621018728 89 12
- 72144603558459563 0 8
- 72144603558459563 259 4
- 72144605621018728 89 2
- 72144605621018728 0 1
+ 72144605621018728 90 2
+ 72144605621018731 0 6
- 72144605621018728 90 2
+ 72144605621049163 0 6
- 72144605621049163 0 2
- 72144605621018731 0 1
+ 72144605621099454 105 2
+ 72144605621099454 106 4
+ 72144605621099455 15003687180791188809 8
+ 72144605621099455 15003687180791188810 10
+ 72144605621142858 0 14
- 72144605621099454 106 12
+ 72144605621142858 1 14
- 72144605621099454 105 10
+ 72381533336470305 0 14
+ 72381533336470305 144 16
- 72381533336470305 0 14
- 72144605621099455 15003687180791188810 12
- 72144605621099455 15003687180791188809 8
- 72381533336470305 144 4
- 72144605621142858 1 2
+ 72381533336470305 145 6
- 72144605621142858 0 2
- 72381533336470305 145 1
+ 72381533336470305 156 2
- 72381533336470305 156 1
+ 72381533336470305 157 2
+ 72381533336470308 14819846930052064268 6
+ 72381533336470308 14819846930052064421 8
- 72381533336470305 157 4
- 72381533336470308 14819846930052064268 2
+ 72381533336470308 14819846930052064422 4
- 72381533336470308 14819846930052064421 2
- 72381533336470308 14819846930052064422 1
+ 72381533336470309 6972294396311278606 2
- 72381533336470309 6972294396311278606 1
+ 72381533336470309 6972294396311278806 2
- 72381533336470309 6972294396311278806 1
# seed 2
reset
+ 844720600218478239 177989 2
- 844720600218478239 177989 1
+ 844720600218478239 177990 2
- 844720600218478239 177990 1
+ 844720600218478242 58307 2
+ 844728326310734573 0 6
+ 844979343198777236 90 8
- 844728326310734573 0 6
- 844720600218478242 58307 2
- 844979343198777236 90 1
+ 4519385924823236107 0 2
+ 4519608216715073423 0 6
- 4519385924823236107 0 2
- 4519608216715073423 0 1
+ 4519608216715073423 272 2
- 4519608216715073423 272 1
+ 4519608216715119813 16660668540119074586 2
- 4519608216715119813 16660668540119074586 1
+ 4519608216715119813 16660668540119074700 2
+ 4519608216715141581 62883 6
- 4519608216715119813 16660668540119074700 2
+ 4519608216715141581 63092 6
- 4519608216715141581 63092 2
+ 4519608216715141582 1103 6
+ 4519608216715141582 1104 8
+ 4519608216715141582 1105 9
+ 4519608216715141582 1106 10
- 4519608216715141582 1105 9
+ 4519608216715141582 1107 10
- 4519608216715141582 1107 9
+ 4519608216715141582 1108 10
+ 4519608216715149027 0 13
- 4519608216715141581 62883 10
- 4519608216715149027 0 6
- 4519608216715141582 1103 5
- 4519608216715141582 1108 4
- 4519608216715141582 1104 2
+ 4519608216715149027 1 6
+ 4519608216715149027 2 8
- 4519608216715149027 2 6
+ 4519608216715186518 0 8
- 4519608216715186518 0 6
+ 4519721327924470928 242 10
+ 4519721327924470928 243 12
+ 4519721327924474101 0 16
+ 4519721327924474101 1 18
+ 4519721327924474101 2 19
+ 4519721327924474101 3 20
+ 4519721327924474101 4 21
+ 4519721327924474101 14 22
+ 4591778921962402037 4398 24
- 4519721327924474101 3 23
+ 4591778921962402037 4415 25
+ 4591778921962402037 4416 26
+ 4591778921962402037 4417 27
+ 4591778921962402040 55445 31
- 4591778921962402040 55445 27
- 4519721327924470928 242 25
- 4591778921962402037 4417 24
- 4519721327924470928 243 20
# seed 3
reset
+ 1731442835709 0 2
+ 1731442835709 1 4
- 1731442835709 1 2
- 1731442835709 0 1
+ 1731442835709 701785349252 2
+ 1731442835709 701785349253 4
- 1731442835709 701785349252 2
+ 1731442835710 0 6
+ 1731442835710 1 8
+ 1731442871025 0 11
+ 1734510033787 1797714827382272579 15
- 1731442871025 0 12
+ 1736318852871 0 15
+ 1736318852871 1 17
+ 1736318852873 2 21
+ 1736318852874 13641 23
+ 1736318852874 13642 25
+ 1736318852876 0 27
+ 1736318852878 0 29
+ 1736318852878 78 31
- 1736318852873 2 29
+ 1736318852878 79 30
+ 1736318852878 80 31
+ 1736318852878 81 32
+ 1088136234121714142 948 35
- 1731442835709 701785349253 31
- 1736318852874 13642 29
- 1736318852878 81 28
- 1736318852876 0 26
- 1736318852878 0 25
- 1736318852871 0 23
+ 1088136234121714145 0 27
+ 1088136234121749705 0 30
+ 1088136234121749705 1 32
- 1736318852871 1 30
- 1736318852878 80 29
+ 1088136234121749705 2 30
- 1731442835710 0 28
- 1731442835710 1 25
- 1088136234121714145 0 22
+ 1088136234121749705 3 23
+ 1088136234121749708 0 26
- 1734510033787 1797714827382272579 22
- 1736318852874 13641 18
- 1088136234121749705 2 17
+ 1088136234121749708 1 19
+ 1088136234121749708 2 20
+ 4478524124202271361 0 22
+ 4478524124202271363 0 26
- 1736318852878 79 24
- 1088136234121749708 0 23
+ 4478524124202271363 1 25
+ 4550581718240199299 0 27
+ 4550581718240199299 1 29
+ 4550581718240199299 2 30
+ 4550581718240199299 3 31
+ 4550581718240199299 4 32
+ 4550581718240199301 0 36
+ 4550581718240199301 1 38
+ 4550581718240199303 0 40
# seed 4
reset
+ 0 1 2
+ 0 2 4
- 0 2 2
+ 29089 0 6
- 29089 0 2
+ 29089 1 6
+ 29089 2 8
+ 29089 3 9
- 29089 2 8
+ 77900 0 11
+ 77903 0 15
- 77903 0 11
+ 77903 1 15
- 77903 1 11
- 77900 0 8
- 29089 1 6
+ 77903 2 9
- 77903 2 6
- 29089 3 2
+ 77906 0 6
+ 77906 1 8
+ 77906 2 9
+ 77906 3 10
- 77906 3 9
- 0 1 5
+ 77906 4 6
- 77906 1 5
- 77906 0 4
+ 77906 5 5
+ 4100644683 0 9
+ 4100644683 1 11
- 77906 4 10
+ 4100644683 41 11
- 4100644683 1 10
- 77906 5 8
- 77906 2 4
+ 4100644683 42 5
+ 447804910427556874 0 8
- 4100644683 42 7
- 4100644683 0 5
+ 636387662755432192 0 7
+ 636387662755432192 1 9
- 636387662755432192 1 7
- 4100644683 41 5
+ 636387662755432192 2 7
+ 636387662755432192 3 8
+ 636387662755432192 4 9
+ 636387662755497542 0 13
- 636387662755432192 4 12
- 636387662755432192 2 11
- 636387662755432192 3 9
+ 5076312426008546248 3 11
+ 5076312426008546248 297 15
+ 5076395801359337465 55048 19
+ 5076395801359337468 51404 23
+ 5076395801359337468 51405 25
+ 5148453395397265404 3 27
+ 5148453395397265404 4 29
+ 5148453395397265405 17109003651279132793 33
- 636387662755497542 0 29
";

    /// Recorded from redis-server 8.8 (leaves inlined).
    const RECORDED_INLINE: &str = include_str!("rax_recorded_8_8.log");
}
