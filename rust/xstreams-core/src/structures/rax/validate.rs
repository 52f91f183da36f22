//! The structural check of the radix tree.

use super::{Node, Rax, KEY_LEN, NIL, ROOT};

impl<V> Rax<V> {
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
