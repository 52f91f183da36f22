//! Lookups, seeks and in-order iteration of the radix tree.

use super::{find_edge, first_diff, Node, Rax, RaxKey, KEY_LEN, ROOT};

impl<V> Rax<V> {
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

    /// Mutable value of the greatest key (the stream's tail node, which XADD appends
    /// to): one walk down the last edges, without rebuilding the key.
    pub fn last_mut(&mut self) -> Option<&mut V> {
        let mut n = ROOT;
        loop {
            match &self.nodes[n as usize] {
                Node::Leaf(_) => break,
                Node::Empty => return None,
                Node::Chain { child, .. } => n = *child,
                Node::Branch(fan) => n = fan.kid(fan.len() - 1),
                Node::Vacant(_) => unreachable!("walked into a vacant slot"),
            }
        }
        match &mut self.nodes[n as usize] {
            Node::Leaf(v) => Some(v),
            _ => unreachable!("the walk stopped at a leaf"),
        }
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
