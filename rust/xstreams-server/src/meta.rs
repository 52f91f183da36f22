//! `COMMAND`, `COMMAND INFO` and `COMMAND DOCS` replies rendered from the core's one
//! command table (`xstreams_core::command::table`): redis-server's arity, flags, key
//! positions, key specifications, ACL categories and documentation, so that client
//! libraries and tools that inspect the table (redis-cli, cluster-aware clients) see what
//! they would see on redis-server.

use xstreams_core::command::table::{Begin, CommandSpec, FLAG_NAMES};

use crate::out::Out;

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
