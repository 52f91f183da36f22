//! Listpack nodes holding live and deleted entries (`streamAppendItem`'s layout).

use super::*;

#[derive(Clone, Debug)]
pub struct MEntry {
    pub id: Id,
    pub pairs: Vec<(Vec<u8>, Vec<u8>)>,
    pub same: bool,
    pub deleted: bool,
}

#[derive(Clone, Debug)]
pub struct MNode {
    pub master: Id,
    pub mfields: Vec<Vec<u8>>,
    pub entries: Vec<MEntry>,
}

impl MNode {
    pub fn live(&self) -> u64 {
        self.entries.iter().filter(|e| !e.deleted).count() as u64
    }
    pub fn deleted(&self) -> u64 {
        self.entries.iter().filter(|e| e.deleted).count() as u64
    }
    /// The last entry of the listpack, tombstone or not (`lpGetEdgeStreamID(lp,0,..)`).
    pub fn last_any(&self) -> Id {
        self.entries.last().expect("node never empty of entries").id
    }
    /// `lpBytes` of the node, recomputed element by element.
    pub fn lp_bytes(&self) -> u64 {
        let mut n = 6 + 1; // header + EOF
        n += lp_int(self.live() as i64) + lp_int(self.deleted() as i64);
        n += lp_int(self.mfields.len() as i64);
        for f in &self.mfields {
            n += lp_str(f);
        }
        n += lp_int(0);
        for e in &self.entries {
            let flags = (if e.deleted { 1 } else { 0 }) | (if e.same { 2 } else { 0 });
            n += lp_int(flags);
            n += lp_int(e.id.ms.wrapping_sub(self.master.ms) as i64);
            n += lp_int(e.id.seq.wrapping_sub(self.master.seq) as i64);
            let nf = e.pairs.len() as i64;
            if !e.same {
                n += lp_int(nf);
            }
            for (f, v) in &e.pairs {
                if !e.same {
                    n += lp_str(f);
                }
                n += lp_str(v);
            }
            let lp_count = nf + 3 + if e.same { 0 } else { nf + 1 };
            n += lp_int(lp_count);
        }
        n
    }
}
