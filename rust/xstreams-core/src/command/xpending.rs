//! XPENDING: the summary form and the extended form (IDLE, range, count, consumer).

use super::args::{int, is, range_end, range_start};
use super::Ctx;
use crate::error::{CmdError, CmdResult};
use crate::id::StreamId;
use crate::reply::Reply;

/// `XPENDING key group [[IDLE min-idle-time] start end count [consumer]]`
pub fn xpending(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let argc = args.len();
    let justinfo = argc == 3;
    if argc != 3 && !(6..=9).contains(&argc) {
        return Err(CmdError::syntax());
    }
    let mut start = StreamId::MIN;
    let mut end = StreamId::MAX;
    let mut count: i64 = 0;
    let mut minidle: i64 = 0;
    let mut consumer_name: Option<&[u8]> = None;
    if argc >= 6 {
        let mut startidx = 3;
        if is(args[3], "IDLE") {
            minidle = int(args[4])?;
            if argc < 8 {
                return Err(CmdError::syntax());
            }
            startidx += 2;
        }
        count = int(args[startidx + 2])?;
        if count < 0 {
            count = 0;
        }
        start = range_start(args[startidx])?;
        end = range_end(args[startidx + 1])?;
        if startidx + 3 < argc {
            consumer_name = Some(args[startidx + 3]);
        }
    }
    let now = ctx.now;
    let s = ctx.stream(args[1])?;
    let Some((s, g)) = s.and_then(|s| s.groups.lookup(args[2]).map(|g| (s, g))) else {
        return Err(CmdError::nogroup_key_or_group(args[1], args[2]));
    };
    let cg = s.groups.get(g);
    if justinfo {
        return Ok(match cg.pel_bounds() {
            None => Reply::Array(vec![Reply::Int(0), Reply::Nil, Reply::Nil, Reply::NilArray]),
            Some((first, last)) => {
                let consumers: Vec<Reply> = cg
                    .consumers()
                    .filter(|(_, c)| !c.pel.is_empty())
                    .map(|(_, c)| {
                        Reply::Array(vec![
                            Reply::bulk(&c.name),
                            Reply::Bulk(c.pel.len().to_string().into_bytes()),
                        ])
                    })
                    .collect();
                Reply::Array(vec![
                    Reply::Int(cg.pel_len() as i64),
                    Reply::id(&first),
                    Reply::id(&last),
                    Reply::Array(consumers),
                ])
            }
        });
    }
    let row = |id: StreamId, p: usize| {
        let r = cg.record(p);
        let (owner, elapsed) = match r.consumer {
            Some(c) => (cg.consumer(c).name.clone(), (now - r.delivery_time).max(0)),
            None => (Vec::new(), -1),
        };
        Reply::Array(vec![
            Reply::id(&id),
            Reply::Bulk(owner),
            Reply::Int(elapsed),
            Reply::Int(r.delivery_count as i64),
        ])
    };
    let passes_idle = |p: usize| {
        let r = cg.record(p);
        !(r.consumer.is_some() && minidle != 0 && now - r.delivery_time < minidle)
    };
    let mut out = Vec::new();
    let mut left = count;
    match consumer_name {
        Some(name) => {
            let Some(c) = cg.consumer_idx(name) else {
                return Ok(Reply::empty_array());
            };
            if start <= end {
                for id in cg.consumer(c).pel.range(start..=end) {
                    if left == 0 {
                        break;
                    }
                    let p = cg.pel_idx(id).expect("consumer PEL is in the group PEL");
                    if !passes_idle(p) {
                        continue;
                    }
                    out.push(row(*id, p));
                    left -= 1;
                }
            }
        }
        None => {
            for (id, p) in cg.pel_range(start, end) {
                if left == 0 {
                    break;
                }
                if !passes_idle(p) {
                    continue;
                }
                out.push(row(id, p));
                left -= 1;
            }
        }
    }
    Ok(Reply::Array(out))
}
