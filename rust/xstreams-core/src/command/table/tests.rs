use super::*;

#[test]
fn names_unique_and_lowercase() {
    let mut seen = std::collections::HashSet::new();
    for c in commands() {
        assert_eq!(c.name, c.name.to_ascii_lowercase());
        assert!(seen.insert(c.name), "duplicate {}", c.name);
        let mut subs = std::collections::HashSet::new();
        for s in c.subcommands {
            assert_eq!(s.name, s.name.to_ascii_lowercase());
            assert!(subs.insert(s.name), "duplicate {}|{}", c.name, s.name);
        }
    }
}

/// Every row runs somewhere: an engine command or subcommand has a handler, a server
/// row's subcommands are the server's too, and only containers run nothing.
#[test]
fn every_row_runs() {
    for c in commands() {
        match c.run {
            Run::Engine(_) | Run::Shared(..) => {
                assert!(c.subcommands.is_empty(), "{}", c.name)
            }
            Run::Server(_) => {
                for s in c.subcommands {
                    assert!(s.server_cmd().is_some(), "{}|{}", c.name, s.name);
                }
            }
            Run::Container => {
                assert!(!c.subcommands.is_empty(), "{}", c.name);
                for s in c.subcommands {
                    assert!(s.handler().is_some(), "{}|{}", c.name, s.name);
                }
            }
        }
    }
}

#[test]
fn slots_cover_commands_and_subcommands() {
    let n: usize = commands().iter().map(|c| 1 + c.subcommands.len()).sum();
    assert_eq!(slot_count(), n);
    let r = resolve(&["XGROUP", "create", "k", "g", "$"], Scope::Engine).unwrap();
    assert_eq!(slot_name(r.slot), "xgroup|create");
    assert_eq!(r.fullname(), "xgroup|create");
    assert_eq!(r.parent.map(|p| p.name), Some("xgroup"));
}

/// The embedded engine does not know the server's commands; the server does.
#[test]
fn scopes() {
    let e = resolve(&["AUTH", "x"], Scope::Engine).err().unwrap();
    assert_eq!(
        e.error.line(),
        "ERR unknown command 'AUTH', with args beginning with: 'x' "
    );
    assert!(e.slot.is_none());
    let r = resolve(&["AUTH", "x"], Scope::Server).ok().unwrap();
    assert_eq!(r.spec.server_cmd(), Some(ServerCmd::Auth));
    // Arity errors carry the slot (a rejected call counts in the statistics).
    let e = resolve(&["CLIENT", "ID", "x"], Scope::Server)
        .err()
        .unwrap();
    assert_eq!(
        e.error.line(),
        "ERR wrong number of arguments for 'client|id' command"
    );
    assert_eq!(e.slot.map(slot_name), Some("client|id"));
    let e = resolve(&["XINFO", "nope"], Scope::Server).err().unwrap();
    assert_eq!(
        e.error.line(),
        "ERR unknown subcommand 'nope'. Try XINFO HELP."
    );
    let names: Vec<&str> = crate::command::command_names().collect();
    assert!(names.contains(&"xadd") && !names.contains(&"client"));
}

#[test]
fn implied_categories() {
    let xadd = lookup(b"XADD").unwrap();
    assert_eq!(xadd.acl_categories(), vec!["write", "stream", "fast"]);
    let xread = lookup(b"xread").unwrap();
    assert_eq!(
        xread.acl_categories(),
        vec!["read", "stream", "slow", "blocking"]
    );
}

#[test]
fn getkeys() {
    let xread = lookup(b"xread").unwrap();
    let args = ["XREAD", "COUNT", "2", "STREAMS", "a", "b", "0", "0"];
    assert_eq!(xread.keys_of(&args), vec![b"a".as_slice(), b"b"]);
    let del = lookup(b"del").unwrap();
    assert_eq!(del.keys_of(&["DEL", "a", "b"]), vec![b"a".as_slice(), b"b"]);
    let (create, full) = lookup_fullname(b"XGROUP|CREATE").unwrap();
    assert_eq!(full, "xgroup|create");
    assert_eq!(
        create.keys_of(&["XGROUP", "CREATE", "k", "g", "$"]),
        vec![b"k".as_slice()]
    );
}

/// Every stream command's row declares what the lists derived from the table need: a
/// top-level row its fuzz weight (above 0) and the Python client's path, a command its
/// log effect, a container's subcommands each theirs. A row left without one fails
/// here, by name.
#[test]
fn every_stream_row_declares_its_lists() {
    let mut missing = Vec::new();
    for c in streams::ROWS {
        if c.lists.fuzz.is_none_or(|w| w == 0) {
            missing.push(format!("{}: a fuzz weight", c.name));
        }
        if c.lists.client.is_none() {
            missing.push(format!("{}: how the Python client serves it", c.name));
        }
        if c.subcommands.is_empty() {
            if c.lists.log.is_none() {
                missing.push(format!("{}: its log effect", c.name));
            }
        } else {
            for s in c.subcommands {
                if s.lists.log.is_none() {
                    missing.push(format!("{}|{}: its log effect", c.name, s.name));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "stream command rows lacking a list entry:\n{}",
        missing.join("\n")
    );
}

/// A declared log effect agrees with the row's flags: a write changes something, a read
/// is never logged.
#[test]
fn log_effects_agree_with_the_flags() {
    let rows = commands()
        .iter()
        .flat_map(|c| std::iter::once(*c).chain(c.subcommands));
    for c in rows {
        let Some(log) = c.lists.log else { continue };
        if c.flags.has(Flags::WRITE) {
            assert!(!matches!(log, Log::NotLogged | Log::Select), "{}", c.name);
        }
        if c.flags.has(Flags::READONLY) {
            assert_eq!(log, Log::NotLogged, "{}", c.name);
        }
    }
}

#[test]
fn the_derived_lists() {
    let fuzzed: Vec<&str> = fuzz_commands().collect();
    for c in streams::ROWS {
        assert!(fuzzed.contains(&c.name), "{}", c.name);
    }
    assert_eq!(fuzzed.iter().filter(|n| **n == "xadd").count(), 4);
    for n in &fuzzed {
        assert!(lookup(n.as_bytes()).unwrap().runs_in(Scope::Engine), "{n}");
    }

    let mut native: Vec<&str> = native_client_commands().map(|(n, _)| n).collect();
    native.sort_unstable();
    assert_eq!(
        native,
        [
            "del",
            "exists",
            "type",
            "xack",
            "xadd",
            "xdel",
            "xlen",
            "xrange",
            "xread",
            "xreadgroup",
            "xrevrange"
        ]
    );
    let shape = |n: &str| {
        native_client_commands()
            .find(|(c, _)| *c == n)
            .map(|(_, r)| r)
    };
    assert_eq!(shape("xadd"), Some(NativeReply::Raw));
    assert_eq!(shape("xrevrange"), Some(NativeReply::Entries));
    assert_eq!(shape("xreadgroup"), Some(NativeReply::Read));
    assert_eq!(shape("exists"), Some(NativeReply::Int));

    let appends = Log::Appends {
        unless: &["maxlen", "minid"],
    };
    assert_eq!(log_effect(&["XADD", "s", "*", "f", "v"]), appends);
    assert_eq!(
        log_effect(&["xgroup", "CREATE", "s", "g", "$", "MKSTREAM"]),
        Log::GroupState {
            unless: &["mkstream"]
        }
    );
    assert_eq!(
        log_effect(&["XGROUP", "SETID", "s", "g", "0"]),
        Log::GroupState { unless: &[] }
    );
    assert_eq!(
        log_effect(&["XCLAIM", "s", "g", "c", "0", "1-1"]),
        Log::GroupState { unless: &[] }
    );
    assert_eq!(
        log_effect(&["XIDMP", "CFGSET", "s", "DURATION", "5"]),
        Log::Data
    );
    assert_eq!(log_effect(&["SELECT", "1"]), Log::Select);
    assert_eq!(log_effect(&["FLUSHALL"]), Log::AllDatabases);
    assert_eq!(log_effect(&["SWAPDB", "0", "1"]), Log::AllDatabases);
    assert_eq!(log_effect(&["FLUSHDB"]), Log::Database);
    assert_eq!(log_effect(&["MOVE", "k", "1"]), Log::OtherDb);
    // Undeclared writes change what they name; unknown commands and subcommands too.
    assert_eq!(log_effect(&["PEXPIREAT", "k", "1"]), Log::Data);
    assert_eq!(log_effect(&["NOSUCH", "k"]), Log::Data);
    assert_eq!(log_effect(&["XGROUP", "NOSUCH", "k"]), Log::Data);
}
