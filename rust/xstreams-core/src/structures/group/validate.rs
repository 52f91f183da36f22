//! [`ConsumerGroup::validate`]: the invariants of the module documentation, checked.

use super::{ConsumerGroup, PelIdx};

impl ConsumerGroup {
    /// Check the invariants listed in the module documentation. Delivery times must be
    /// ordered outside the NACK zone unless a delivery was appended at the tail while the
    /// clock was behind it (then Redis's list is not sorted either).
    pub fn validate(&self) -> Result<(), String> {
        self.pel.validate()?;
        if self.pel.len() != self.records.len() {
            return Err(format!(
                "pel has {} ids, slab {} records",
                self.pel.len(),
                self.records.len()
            ));
        }
        for (id, &idx) in self.pel.iter() {
            let r = self.records.get(idx).ok_or("pel points to a free record")?;
            if r.id != *id {
                return Err(format!("record {} indexed under {id}", r.id));
            }
            match r.consumer {
                Some(c) => {
                    let cons = self
                        .consumer_slab
                        .get(c)
                        .ok_or("record owned by a deleted consumer")?;
                    if !cons.pel.contains(id) {
                        return Err(format!("{id} owned by a consumer whose PEL lacks it"));
                    }
                    if r.nacked {
                        return Err(format!("{id} is owned but flagged NACKed"));
                    }
                }
                None => {
                    if !r.nacked {
                        return Err(format!("{id} is unowned outside the NACK zone"));
                    }
                }
            }
            if r.delivery_count > i64::MAX as u64 {
                return Err(format!("{id} delivery count overflows"));
            }
        }
        let owned: usize = self.consumer_slab.iter().map(|(_, c)| c.pel.len()).sum();
        let owned_records = self
            .records
            .iter()
            .filter(|(_, r)| r.consumer.is_some())
            .count();
        if owned != owned_records {
            return Err(format!(
                "consumer PELs hold {owned} ids, {owned_records} records are owned"
            ));
        }
        for (ci, c) in &self.consumer_slab {
            if self.consumers.get(&c.name) != Some(&ci) {
                return Err("consumer index out of sync".into());
            }
            c.pel.validate()?;
            for id in &c.pel {
                let idx = self
                    .pel
                    .get(id)
                    .ok_or_else(|| format!("consumer holds {id} not in the group PEL"))?;
                if self.records[idx].consumer != Some(ci) {
                    return Err(format!(
                        "{id} in the PEL of a consumer that does not own it"
                    ));
                }
            }
        }
        if self.consumers.len() != self.consumer_slab.len() {
            return Err("consumer map and slab sizes differ".into());
        }
        // Time list: complete, zone is a prefix, times ordered outside the zone.
        let mut seen = 0usize;
        let mut in_zone = self.nack_tail.is_some();
        let mut zone_len = 0u64;
        let mut prev: Option<PelIdx> = None;
        let mut last_time = i64::MIN;
        let mut cur = self.time_head;
        while let Some(c) = cur {
            let r = &self.records[c];
            if r.prev != prev {
                return Err("time list back link broken".into());
            }
            if in_zone {
                if !r.nacked || r.delivery_time != 0 {
                    return Err(format!("{} inside the NACK zone is not NACKed", r.id));
                }
                zone_len += 1;
            } else {
                if r.nacked {
                    return Err(format!("{} NACKed outside the zone", r.id));
                }
                if self.time_sorted && r.delivery_time < last_time {
                    return Err(format!("time list out of order at {}", r.id));
                }
                last_time = r.delivery_time;
            }
            if Some(c) == self.nack_tail {
                in_zone = false;
            }
            seen += 1;
            if seen > self.records.len() {
                return Err("time list has a cycle".into());
            }
            prev = cur;
            cur = r.next;
        }
        if prev != self.time_tail {
            return Err("time tail mismatch".into());
        }
        if seen != self.records.len() {
            return Err(format!(
                "time list visits {seen} of {} records",
                self.records.len()
            ));
        }
        if zone_len != self.nack_count {
            return Err(format!(
                "NACK zone holds {zone_len}, counter says {}",
                self.nack_count
            ));
        }
        Ok(())
    }
}
