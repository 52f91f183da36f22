//! XINFO STREAM [FULL [COUNT n]] / GROUPS / CONSUMERS / HELP.

use super::args::{int, is};
use super::xgroup::help_reply;
use super::Ctx;
use crate::command::reply::entry_reply;
use crate::command::reply::{map, Reply};
use crate::error::{CmdError, CmdResult};
use crate::structures::group::{ConsumerGroup, INVALID_ENTRIES_READ};
use crate::structures::id::StreamId;
use crate::structures::stream::Stream;

const XINFO_HELP: &[&str] = &[
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
];

fn opt_int(v: Option<i64>) -> Reply {
    match v {
        Some(i) => Reply::Int(i),
        None => Reply::Nil,
    }
}

fn entries_read(g: &ConsumerGroup) -> Reply {
    if g.entries_read != INVALID_ENTRIES_READ {
        Reply::Int(g.entries_read)
    } else {
        Reply::Nil
    }
}

/// `XINFO <subcommand> ...`
pub fn xinfo(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    if is(args[1], "HELP") {
        return Ok(help_reply("XINFO", XINFO_HELP));
    }
    let opt = args[1];
    let key = args[2];
    let now = ctx.now;
    let Some(s) = ctx.stream(key)? else {
        return Err(CmdError::no_such_key());
    };
    if is(opt, "CONSUMERS") && args.len() == 4 {
        let Some(g) = s.groups.lookup(args[3]) else {
            return Err(CmdError::nogroup_for_key(args[3], key));
        };
        let cg = s.groups.get(g);
        let out = cg
            .consumers()
            .map(|(_, c)| {
                let inactive = if c.active_time != -1 {
                    now - c.active_time
                } else {
                    -1
                };
                let idle = (now - c.seen_time).max(0);
                map(vec![
                    ("name", Reply::bulk(&c.name)),
                    ("pending", Reply::Int(c.pel.len() as i64)),
                    ("idle", Reply::Int(idle)),
                    ("inactive", Reply::Int(inactive)),
                ])
            })
            .collect();
        return Ok(Reply::Array(out));
    }
    if is(opt, "GROUPS") && args.len() == 3 {
        let out = s
            .groups
            .iter()
            .map(|(name, _, cg)| {
                map(vec![
                    ("name", Reply::bulk(name)),
                    ("consumers", Reply::Int(cg.consumer_count() as i64)),
                    ("pending", Reply::Int(cg.pel_len() as i64)),
                    ("last-delivered-id", Reply::id(&cg.last_id)),
                    ("entries-read", entries_read(cg)),
                    ("lag", opt_int(s.group_lag(cg))),
                ])
            })
            .collect();
        return Ok(Reply::Array(out));
    }
    if is(opt, "STREAM") {
        return stream_info(s, opt, &args[3..]);
    }
    Err(CmdError::subcommand_syntax(opt, "XINFO"))
}

fn stream_info(s: &mut Stream, sub: &[u8], opts: &[&[u8]]) -> CmdResult<Reply> {
    let mut full = true;
    let mut count: i64 = 10;
    if opts.is_empty() {
        full = false;
    } else {
        if opts.len() != 1 && opts.len() != 3 {
            return Err(CmdError::subcommand_syntax(sub, "XINFO"));
        }
        if !is(opts[0], "full") {
            return Err(CmdError::subcommand_syntax(sub, "XINFO"));
        }
        if opts.len() == 3 {
            if !is(opts[1], "count") {
                return Err(CmdError::subcommand_syntax(sub, "XINFO"));
            }
            count = int(opts[2])?;
            if count < 0 {
                count = 10;
            }
        }
    }
    let limit = if count == 0 {
        usize::MAX
    } else {
        count as usize
    };
    let mut fields: Vec<(&'static str, Reply)> = vec![
        ("length", Reply::Int(s.length as i64)),
        ("radix-tree-keys", Reply::Int(s.node_count() as i64)),
        ("radix-tree-nodes", Reply::Int(s.rax_node_count() as i64)),
        ("last-generated-id", Reply::id(&s.last_id)),
        ("max-deleted-entry-id", Reply::id(&s.max_deleted_id)),
        ("entries-added", Reply::Int(s.entries_added as i64)),
        ("recorded-first-entry-id", Reply::id(&s.first_id)),
        ("idmp-duration", Reply::Int(s.idmp.duration as i64)),
        ("idmp-maxsize", Reply::Int(s.idmp.maxsize as i64)),
        ("pids-tracked", Reply::Int(s.idmp.pids_tracked() as i64)),
        ("iids-tracked", Reply::Int(s.idmp.iids_tracked() as i64)),
        ("iids-added", Reply::Int(s.idmp.iids_added as i64)),
        ("iids-duplicates", Reply::Int(s.idmp.iids_duplicates as i64)),
    ];
    if !full {
        fields.push(("groups", Reply::Int(s.groups.len() as i64)));
        let first = s
            .range(StreamId::MIN, StreamId::MAX, false)
            .next()
            .map(|e| entry_reply(&e));
        let last = s
            .range(StreamId::MIN, StreamId::MAX, true)
            .next()
            .map(|e| entry_reply(&e));
        fields.push(("first-entry", first.unwrap_or(Reply::Nil)));
        fields.push(("last-entry", last.unwrap_or(Reply::Nil)));
        return Ok(map(fields));
    }
    let entries: Vec<Reply> = s
        .range(StreamId::MIN, StreamId::MAX, false)
        .take(limit)
        .map(|e| entry_reply(&e))
        .collect();
    fields.push(("entries", Reply::Array(entries)));
    let groups: Vec<Reply> = s
        .groups
        .iter()
        .map(|(name, _, cg)| {
            let pending: Vec<Reply> = cg
                .pel_range(StreamId::MIN, StreamId::MAX)
                .take(limit)
                .map(|(id, p)| {
                    let r = cg.record(p);
                    let owner = r
                        .consumer
                        .map(|c| cg.consumer(c).name.clone())
                        .unwrap_or_default();
                    Reply::Array(vec![
                        Reply::id(&id),
                        Reply::Bulk(owner),
                        Reply::Int(r.delivery_time),
                        Reply::Int(r.delivery_count as i64),
                    ])
                })
                .collect();
            let consumers: Vec<Reply> = cg
                .consumers()
                .map(|(_, c)| {
                    let cpel: Vec<Reply> = c
                        .pel
                        .iter()
                        .take(limit)
                        .map(|id| {
                            let r = cg
                                .record(cg.pel_idx(id).expect("consumer PEL is in the group PEL"));
                            Reply::Array(vec![
                                Reply::id(id),
                                Reply::Int(r.delivery_time),
                                Reply::Int(r.delivery_count as i64),
                            ])
                        })
                        .collect();
                    map(vec![
                        ("name", Reply::bulk(&c.name)),
                        ("seen-time", Reply::Int(c.seen_time)),
                        ("active-time", Reply::Int(c.active_time)),
                        ("pel-count", Reply::Int(c.pel.len() as i64)),
                        ("pending", Reply::Array(cpel)),
                    ])
                })
                .collect();
            map(vec![
                ("name", Reply::bulk(name)),
                ("last-delivered-id", Reply::id(&cg.last_id)),
                ("entries-read", entries_read(cg)),
                ("lag", opt_int(s.group_lag(cg))),
                ("pel-count", Reply::Int(cg.pel_len() as i64)),
                ("nacked-count", Reply::Int(cg.nacked_count() as i64)),
                ("pending", Reply::Array(pending)),
                ("consumers", Reply::Array(consumers)),
            ])
        })
        .collect();
    fields.push(("groups", Reply::Array(groups)));
    Ok(map(fields))
}
