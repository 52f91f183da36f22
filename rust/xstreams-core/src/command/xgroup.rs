//! XGROUP CREATE / SETID / DESTROY / CREATECONSUMER / DELCONSUMER / HELP.

use super::args::{eq, id_or_special, int, is, strict_id};
use super::Ctx;
use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};
use crate::structures::group::INVALID_ENTRIES_READ;
use crate::structures::id::StreamId;

/// Help reply of a container command: a heading, the given lines, and the HELP footer.
pub fn help_reply(container_upper: &str, lines: &[&'static str]) -> Reply {
    let mut out = Vec::with_capacity(lines.len() + 3);
    out.push(Reply::Status(
        format!("{container_upper} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
            .into(),
    ));
    for l in lines {
        out.push(Reply::status(l));
    }
    out.push(Reply::status("HELP"));
    out.push(Reply::status("    Print this help."));
    Reply::Array(out)
}

const XGROUP_HELP: &[&str] = &[
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
];

/// `XGROUP <subcommand> ...`
pub fn xgroup(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let argc = args.len();
    let opt = args[1];
    let mut mkstream = false;
    let mut entries_read = INVALID_ENTRIES_READ;
    let mut key_exists = false;
    if argc >= 4 {
        let create = is(opt, "CREATE");
        let setid = is(opt, "SETID");
        let mut i = 5;
        while i < argc {
            if create && is(args[i], "MKSTREAM") {
                mkstream = true;
                i += 1;
            } else if (create || setid) && is(args[i], "ENTRIESREAD") && i + 1 < argc {
                entries_read = int(args[i + 1])?;
                if entries_read < 0 && entries_read != INVALID_ENTRIES_READ {
                    return Err(CmdError::entriesread_invalid());
                }
                i += 2;
            } else {
                return Err(CmdError::subcommand_syntax(opt, "XGROUP"));
            }
        }
        key_exists = ctx.stream(args[2])?.is_some();
    }
    let mut group = None;
    if argc >= 4 && !mkstream {
        if !key_exists {
            return Err(CmdError::xgroup_key_required());
        }
        let s = ctx.stream(args[2])?.expect("checked");
        group = s.groups.lookup(args[3]);
        if group.is_none()
            && (is(opt, "SETID") || is(opt, "CREATECONSUMER") || is(opt, "DELCONSUMER"))
        {
            return Err(CmdError::nogroup_for_key(args[3], args[2]));
        }
    }
    let now = ctx.now;
    if argc == 2 && is(opt, "HELP") {
        return Ok(help_reply("XGROUP", XGROUP_HELP));
    }
    if is(opt, "CREATE") && (5..=8).contains(&argc) {
        let id = if eq(args[4], "$") {
            match ctx.stream(args[2])? {
                Some(s) => s.last_id,
                None => StreamId::MIN,
            }
        } else {
            strict_id(args[4])?
        };
        let created = ctx.stream(args[2])?.is_none();
        if created {
            // MKSTREAM: a new key, which WATCH sees (the group alone is not a touch).
            ctx.stream_or_create(args[2])?;
            ctx.touch(args[2]);
        }
        let s = ctx.stream_or_create(args[2])?;
        if entries_read != INVALID_ENTRIES_READ && entries_read as u64 > s.entries_added {
            entries_read = s.entries_added as i64;
        }
        return match s.groups.create(args[3], id, entries_read) {
            Some(_) => {
                ctx.dirty += 1;
                Ok(Reply::ok())
            }
            None => Err(CmdError::busygroup()),
        };
    }
    if is(opt, "SETID") && (argc == 5 || argc == 7) {
        let s = ctx.stream(args[2])?.expect("checked above");
        let id = if eq(args[4], "$") {
            s.last_id
        } else {
            id_or_special(args[4], 0)?
        };
        if entries_read != INVALID_ENTRIES_READ && entries_read as u64 > s.entries_added {
            entries_read = s.entries_added as i64;
        }
        let g = group.expect("checked above");
        s.groups.set_last_id(g, id);
        s.groups.get_mut(g).entries_read = entries_read;
        ctx.dirty += 1;
        return Ok(Reply::ok());
    }
    if is(opt, "DESTROY") && argc == 4 {
        return Ok(match group {
            Some(g) => {
                ctx.stream(args[2])?.expect("checked").groups.destroy(g);
                ctx.dirty += 1;
                ctx.signal(args[2]);
                Reply::Int(1)
            }
            None => Reply::Int(0),
        });
    }
    if is(opt, "CREATECONSUMER") && argc == 5 {
        let g = group.expect("checked above");
        let s = ctx.stream(args[2])?.expect("checked");
        let created = s.groups.get_mut(g).create_consumer(args[4], now).is_some();
        if created {
            ctx.dirty += 1;
        }
        return Ok(Reply::Int(i64::from(created)));
    }
    if is(opt, "DELCONSUMER") && argc == 5 {
        let g = group.expect("checked above");
        let s = ctx.stream(args[2])?.expect("checked");
        let pending = match s.groups.get(g).consumer_idx(args[4]) {
            Some(c) => {
                let n = s.groups.delete_consumer(g, c);
                ctx.dirty += 1;
                n as i64
            }
            None => 0,
        };
        return Ok(Reply::Int(pending));
    }
    Err(CmdError::subcommand_syntax(opt, "XGROUP"))
}
