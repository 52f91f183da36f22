//! COMMAND (COUNT, INFO, DOCS, LIST, GETKEYS, HELP) answered from the core's one command
//! table, and the COMMAND INFO / DOCS reply format.

use xstreams_core::command::table::{self, Begin, CommandSpec, FLAG_NAMES};

use super::args::{eq, lossy};
use crate::errors;
use crate::errors::SYNTAX;
use crate::out::Out;
use crate::session::Session;

impl Session {
    pub(super) fn command(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let proto = self.proto;
        let mut o = Out::new(out, proto);
        if args.len() == 1 {
            o.array(table::commands().len());
            for &c in table::commands() {
                write_info(&mut o, c, c.name);
            }
            return;
        }
        let sub = &args[1];
        if eq(sub, "count") {
            o.int(table::commands().len() as i64);
        } else if eq(sub, "info") {
            if args.len() == 2 {
                o.array(table::commands().len());
                for &c in table::commands() {
                    write_info(&mut o, c, c.name);
                }
            } else {
                o.array(args.len() - 2);
                for a in &args[2..] {
                    match table::lookup_fullname(a) {
                        Some((c, full)) => write_info(&mut o, c, &full),
                        None => o.null(),
                    }
                }
            }
        } else if eq(sub, "docs") {
            let list: Vec<(&CommandSpec, String)> = if args.len() == 2 {
                table::commands()
                    .iter()
                    .map(|&c| (c, c.name.to_string()))
                    .collect()
            } else {
                args[2..]
                    .iter()
                    .filter_map(|a| table::lookup_fullname(a))
                    .collect()
            };
            o.map(list.len());
            for (c, full) in list {
                o.bulk_str(&full);
                write_docs(&mut o, c, &full);
            }
        } else if eq(sub, "list") {
            let mut names: Vec<String> = Vec::new();
            let filter = if args.len() == 2 {
                None
            } else if args.len() == 5 && eq(&args[2], "filterby") {
                Some((args[3].clone(), args[4].clone()))
            } else {
                self.error(out, SYNTAX);
                return;
            };
            for &c in table::commands() {
                let mut all = vec![(c, c.name.to_string())];
                for s in c.subcommands {
                    all.push((s, format!("{}|{}", c.name, s.name)));
                }
                for (m, full) in all {
                    let keep = match &filter {
                        None => true,
                        Some((k, v)) if eq(k, "pattern") => {
                            xstreams_core::keyspace::db::glob_match(
                                &v.to_ascii_lowercase(),
                                full.as_bytes(),
                            )
                        }
                        Some((k, v)) if eq(k, "aclcat") => {
                            let v = lossy(v).to_ascii_lowercase();
                            m.acl_categories().contains(&v.as_str())
                        }
                        Some((k, _)) if eq(k, "module") => false,
                        Some(_) => {
                            self.error(out, SYNTAX);
                            return;
                        }
                    };
                    if keep && (m.subcommands.is_empty() || filter.is_some() || full == c.name) {
                        names.push(full);
                    }
                }
            }
            o.array(names.len());
            for n in names {
                o.bulk_str(&n);
            }
        } else if eq(sub, "getkeys") {
            let target = &args[2..];
            let Some(base) = table::lookup(&target[0]) else {
                self.error(out, errors::INVALID_COMMAND);
                return;
            };
            let spec = if !base.subcommands.is_empty() && target.len() > 1 {
                base.sub(&target[1])
            } else {
                Some(base)
            };
            let Some(spec) = spec else {
                self.error(out, errors::INVALID_COMMAND);
                return;
            };
            let argc = target.len() as i32;
            if (spec.arity > 0 && spec.arity != argc) || argc < -spec.arity {
                self.error(out, errors::INVALID_ARG_COUNT);
                return;
            }
            let keys = spec.keys_of(target);
            if keys.is_empty() {
                self.error(out, errors::NO_KEY_ARGS);
                return;
            }
            o.array(keys.len());
            for k in keys {
                o.bulk(k);
            }
        } else if eq(sub, "help") {
            o.help(
                "COMMAND",
                &[
                    "(no subcommand)",
                    "    Return details about all Redis commands.",
                    "COUNT",
                    "    Return the total number of commands in this Redis server.",
                    "LIST",
                    "    Return a list of all commands in this Redis server.",
                    "INFO [<command-name> ...]",
                    "    Return details about multiple Redis commands.",
                    "DOCS [<command-name> ...]",
                    "    Return documentation details about multiple Redis commands.",
                    "GETKEYS <full-command>",
                    "    Return the keys from a full Redis command.",
                ],
            );
        }
    }
}

fn write_info_one(o: &mut Out<'_>, c: &CommandSpec, fullname: &str) {
    o.array(10);
    o.bulk_str(fullname);
    o.int(c.arity as i64);
    let flags: Vec<&str> = FLAG_NAMES
        .iter()
        .filter(|(f, _)| c.flags.has(*f))
        .map(|(_, n)| *n)
        .collect();
    o.set(flags.len());
    for f in flags {
        o.status(f);
    }
    o.int(c.range.0 as i64);
    o.int(c.range.1 as i64);
    o.int(c.range.2 as i64);
    let cats = c.acl_categories();
    o.set(cats.len());
    for a in cats {
        o.status(&format!("@{a}"));
    }
    o.set(c.tips.len());
    for t in c.tips {
        o.bulk_str(&t.to_ascii_lowercase());
    }
    o.set(c.keys.len());
    for k in c.keys {
        o.map(3);
        o.bulk_str("flags");
        o.set(k.flags.len());
        for f in k.flags {
            // redis-server: access types upper case, operations lower case.
            if matches!(*f, "RO" | "RW" | "OW" | "RM") {
                o.status(f);
            } else {
                o.status(&f.to_ascii_lowercase());
            }
        }
        o.bulk_str("begin_search");
        o.map(2);
        o.bulk_str("type");
        match k.begin {
            Begin::Index(pos) => {
                o.bulk_str("index");
                o.bulk_str("spec");
                o.map(1);
                o.bulk_str("index");
                o.int(pos);
            }
            Begin::Keyword(kw, from) => {
                o.bulk_str("keyword");
                o.bulk_str("spec");
                o.map(2);
                o.bulk_str("keyword");
                o.bulk_str(kw);
                o.bulk_str("startfrom");
                o.int(from);
            }
        }
        o.bulk_str("find_keys");
        o.map(2);
        o.bulk_str("type");
        o.bulk_str("range");
        o.bulk_str("spec");
        o.map(3);
        o.bulk_str("lastkey");
        o.int(k.lastkey);
        o.bulk_str("keystep");
        o.int(k.keystep);
        o.bulk_str("limit");
        o.int(k.limit);
    }
    if c.subcommands.is_empty() {
        o.set(0);
    } else {
        o.array(c.subcommands.len());
        for s in c.subcommands {
            write_info_one(o, s, &format!("{fullname}|{}", s.name));
        }
    }
}

/// One entry of `COMMAND` / `COMMAND INFO`.
pub fn write_info(o: &mut Out<'_>, c: &CommandSpec, fullname: &str) {
    write_info_one(o, c, fullname);
}

/// One entry of `COMMAND DOCS` (the map after the name).
pub fn write_docs(o: &mut Out<'_>, c: &CommandSpec, fullname: &str) {
    let mut n = 3;
    if !c.doc.flags.is_empty() {
        n += 1;
    }
    if !c.doc.deprecated_since.is_empty() {
        n += 1;
    }
    if !c.subcommands.is_empty() {
        n += 1;
    }
    o.map(n);
    o.bulk_str("summary");
    o.bulk_str(c.doc.summary);
    o.bulk_str("since");
    o.bulk_str(c.doc.since);
    o.bulk_str("group");
    o.bulk_str(c.doc.group);
    if !c.doc.flags.is_empty() {
        o.bulk_str("doc_flags");
        o.set(c.doc.flags.len());
        for f in c.doc.flags {
            o.status(&f.to_ascii_lowercase());
        }
    }
    if !c.doc.deprecated_since.is_empty() {
        o.bulk_str("deprecated_since");
        o.bulk_str(c.doc.deprecated_since);
    }
    if !c.subcommands.is_empty() {
        o.bulk_str("subcommands");
        o.map(c.subcommands.len());
        for s in c.subcommands {
            let full = format!("{fullname}|{}", s.name);
            o.bulk_str(&full);
            write_docs(o, s, &full);
        }
    }
}
