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
