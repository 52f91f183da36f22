//! Connection-level and server commands: HELLO, AUTH, SELECT, CLIENT, QUIT, RESET,
//! MULTI/EXEC/DISCARD, SHUTDOWN, COMMAND, INFO, CONFIG, DEBUG, SAVE and a few stubs that
//! test harnesses send (FUNCTION FLUSH, SCRIPT FLUSH). Error texts are redis-server's.

use std::sync::atomic::Ordering;

use xstreams_core::num::string2ll;
use xstreams_core::CmdError;

use crate::conn::{Conn, Flow, Multi};
use xstreams_core::command::table::{self, CommandSpec, ServerCmd as Srv};

use crate::meta;
use crate::out::Out;
use crate::server::{DebugAccess, UNBLOCK_ERROR, UNBLOCK_TIMEOUT};

const SYNTAX: &str = "ERR syntax error";
const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

fn eq(a: &[u8], s: &str) -> bool {
    a.eq_ignore_ascii_case(s.as_bytes())
}

fn lossy(a: &[u8]) -> String {
    String::from_utf8_lossy(xstreams_core::num::c_str(a)).into_owned()
}

/// Client names and library attributes: printable ASCII without spaces.
fn valid_attr(v: &[u8]) -> bool {
    v.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

impl Conn {
    pub fn debug_allowed(&self) -> bool {
        match self.sh.cfg.enable_debug_command {
            DebugAccess::Yes => true,
            DebugAccess::No => false,
            DebugAccess::Local => self.me.addr.ip().is_loopback(),
        }
    }

    pub fn run_srv(
        &mut self,
        spec: &'static CommandSpec,
        srv: Srv,
        args: &[Vec<u8>],
        out: &mut Vec<u8>,
    ) -> Flow {
        {
            let base = table::lookup(&args[0]).map_or(spec.name, |b| b.name);
            let full = if base == spec.name {
                base.to_string()
            } else {
                format!("{base}|{}", spec.name)
            };
            self.me.fields.lock().unwrap().last_cmd = full;
        }
        match srv {
            Srv::Auth => self.auth(args, out),
            Srv::Hello => self.hello(args, out),
            Srv::Quit => {
                out.extend_from_slice(b"+OK\r\n");
                return Flow::Close;
            }
            Srv::Reset => self.reset(out),
            Srv::Select => self.select(args, out),
            Srv::Client => return self.client(args, out),
            Srv::Multi => {
                if self.multi.is_some() {
                    self.error(out, "ERR MULTI calls can not be nested");
                } else {
                    self.multi = Some(Multi {
                        cmds: Vec::new(),
                        dirty: false,
                    });
                    self.set_multi_count();
                    out.extend_from_slice(b"+OK\r\n");
                }
            }
            Srv::Exec => return self.exec(out),
            Srv::Discard => {
                if self.multi.take().is_none() {
                    self.error(out, "ERR DISCARD without MULTI");
                } else {
                    self.set_multi_count();
                    out.extend_from_slice(b"+OK\r\n");
                }
            }
            Srv::Shutdown => return self.shutdown(args, out),
            Srv::Command => self.command(args, out),
            Srv::Info => {
                let text = crate::info::info(self, &args[1..]);
                Out::new(out, self.proto).verbatim(&text);
            }
            Srv::Config => self.config(args, out),
            Srv::Debug => self.debug(args, out),
            Srv::Function | Srv::Script => self.scripting(srv, args, out),
            Srv::Save => self.save(out),
            Srv::BgSave => self.bgsave(args, out, "Background saving started"),
            Srv::BgRewriteAof => {
                self.bgsave(args, out, "Background append only file rewriting started")
            }
            Srv::LastSave => {
                let t = self.sh.last_save_unix.load(Ordering::Relaxed);
                Out::new(out, self.proto).int(t);
            }
            Srv::Role => {
                let mut o = Out::new(out, self.proto);
                o.array(3);
                o.bulk_str("master");
                o.int(0);
                o.array(0);
            }
        }
        Flow::Next
    }

    fn check_password(&self, user: &[u8], pass: &[u8]) -> bool {
        if user != b"default" {
            return false;
        }
        match &self.sh.dynamic.lock().unwrap().requirepass {
            None => true,
            Some(p) => p.as_bytes() == pass,
        }
    }

    fn auth(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        if args.len() > 3 {
            self.error(out, SYNTAX);
            return;
        }
        let (user, pass): (&[u8], &[u8]) = if args.len() == 2 {
            if !self.sh.auth_configured() {
                self.error(
                    out,
                    "ERR AUTH <password> called without any password configured for the \
                     default user. Are you sure your configuration is correct?",
                );
                return;
            }
            (b"default", &args[1])
        } else {
            (&args[1], &args[2])
        };
        if self.check_password(user, pass) {
            self.authed = true;
            out.extend_from_slice(b"+OK\r\n");
        } else {
            self.error(
                out,
                "WRONGPASS invalid username-password pair or user is disabled.",
            );
        }
    }

    fn hello(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let mut ver = 0i64;
        let mut next = 1;
        if args.len() >= 2 {
            match string2ll(&args[1]) {
                Some(v) => ver = v,
                None => {
                    self.error(
                        out,
                        "ERR Protocol version is not an integer or out of range",
                    );
                    return;
                }
            }
            next = 2;
            if !(2..=3).contains(&ver) {
                self.error(out, "NOPROTO unsupported protocol version");
                return;
            }
        }
        let mut auth: Option<(&[u8], &[u8])> = None;
        let mut name: Option<&[u8]> = None;
        let mut j = next;
        while j < args.len() {
            let more = args.len() - 1 - j;
            if eq(&args[j], "auth") && more >= 2 {
                auth = Some((&args[j + 1], &args[j + 2]));
                j += 3;
            } else if eq(&args[j], "setname") && more >= 1 {
                let n = &args[j + 1];
                if !n.is_empty() && !valid_attr(n) {
                    self.error(
                        out,
                        "ERR Client names cannot contain spaces, newlines or special characters.",
                    );
                    return;
                }
                name = Some(n);
                j += 2;
            } else {
                self.error(
                    out,
                    &format!("ERR Syntax error in HELLO option '{}'", lossy(&args[j])),
                );
                return;
            }
        }
        if let Some((u, p)) = auth {
            if self.check_password(u, p) {
                self.authed = true;
            } else {
                self.error(
                    out,
                    "WRONGPASS invalid username-password pair or user is disabled.",
                );
                return;
            }
        }
        if self.auth_required() {
            self.error(
                out,
                "NOAUTH HELLO must be called with the client already authenticated, otherwise \
                 the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the \
                 client and select the RESP protocol version at the same time",
            );
            return;
        }
        if let Some(n) = name {
            self.me.fields.lock().unwrap().name = n.to_vec();
        }
        if ver != 0 {
            self.proto = ver as u8;
            self.me.fields.lock().unwrap().resp = self.proto;
        }
        let mut o = Out::new(out, self.proto);
        o.map(7);
        o.bulk_str("server");
        o.bulk_str("redis");
        o.bulk_str("version");
        o.bulk_str(crate::REDIS_VERSION);
        o.bulk_str("proto");
        o.int(self.proto as i64);
        o.bulk_str("id");
        o.int(self.me.id as i64);
        o.bulk_str("mode");
        o.bulk_str("standalone");
        o.bulk_str("role");
        o.bulk_str("master");
        o.bulk_str("modules");
        o.array(0);
    }

    fn reset(&mut self, out: &mut Vec<u8>) {
        self.multi = None;
        self.set_multi_count();
        self.db = 0;
        self.proto = 2;
        self.authed = !self.sh.auth_configured();
        {
            let mut f = self.me.fields.lock().unwrap();
            f.db = 0;
            f.resp = 2;
            f.name.clear();
            f.no_evict = false;
            f.no_touch = false;
        }
        out.extend_from_slice(b"+RESET\r\n");
    }

    fn select(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        // getIntFromObjectOrReply: not an integer, or outside the C int range.
        let Some(id) = string2ll(&args[1]) else {
            self.error(out, NOT_INTEGER);
            return;
        };
        if i32::try_from(id).is_err() {
            self.error(
                out,
                "ERR value is out of range, value must between -2147483648 and 2147483647",
            );
            return;
        }
        if id < 0 || id as usize >= self.sh.cfg.databases {
            self.error(out, "ERR DB index is out of range");
            return;
        }
        self.db = id as usize;
        self.me.fields.lock().unwrap().db = self.db;
        out.extend_from_slice(b"+OK\r\n");
    }

    fn shutdown(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) -> Flow {
        let (mut save, mut nosave, mut abort) = (false, false, false);
        for a in &args[1..] {
            if eq(a, "nosave") {
                nosave = true;
            } else if eq(a, "save") {
                save = true;
            } else if eq(a, "now") || eq(a, "force") {
            } else if eq(a, "abort") {
                abort = true;
            } else {
                self.error(out, SYNTAX);
                return Flow::Next;
            }
        }
        if (abort && args.len() != 2) || (save && nosave) {
            self.error(out, SYNTAX);
            return Flow::Next;
        }
        if abort {
            self.error(out, "ERR No shutdown in progress.");
            return Flow::Next;
        }
        if save && self.sh.store.is_durable() {
            let _ = self.sh.store.compact();
        }
        self.sh.request_shutdown();
        // redis-server closes the connection without a reply when it shuts down.
        Flow::Close
    }

    fn save(&mut self, out: &mut Vec<u8>) {
        if !self.sh.store.is_durable() {
            self.error(
                out,
                "ERR this server keeps its data in memory (start it with --dir to persist)",
            );
            return;
        }
        match self.sh.store.compact() {
            Ok(()) => {
                self.sh.last_save_unix.store(
                    xstreams_core::clock::system_now_ms() / 1000,
                    Ordering::Relaxed,
                );
                out.extend_from_slice(b"+OK\r\n");
            }
            Err(e) => self.error(out, &format!("ERR {e}")),
        }
    }

    fn bgsave(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>, msg: &str) {
        if args.len() > 2 || (args.len() == 2 && !eq(&args[1], "schedule")) {
            self.error(out, SYNTAX);
            return;
        }
        if !self.sh.store.is_durable() {
            self.error(
                out,
                "ERR this server keeps its data in memory (start it with --dir to persist)",
            );
            return;
        }
        let sh = self.sh.clone();
        std::thread::spawn(move || {
            if sh.store.compact().is_ok() {
                sh.last_save_unix.store(
                    xstreams_core::clock::system_now_ms() / 1000,
                    Ordering::Relaxed,
                );
            }
        });
        Out::new(out, self.proto).status(msg);
    }

    fn scripting(&mut self, srv: Srv, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let sub = &args[1];
        if eq(sub, "flush") {
            // There are no scripts or functions: flushing them is a no-op.
            if args.len() > 3
                || (args.len() == 3 && !eq(&args[2], "sync") && !eq(&args[2], "async"))
            {
                self.error(out, SYNTAX);
                return;
            }
            out.extend_from_slice(b"+OK\r\n");
        } else {
            let name = if srv == Srv::Function {
                "FUNCTION"
            } else {
                "SCRIPT"
            };
            Out::new(out, self.proto).help(
                name,
                &[
                    "FLUSH [ASYNC|SYNC]",
                    "    No-op: xstreams has no scripts or functions.",
                ],
            );
        }
    }

    fn client(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) -> Flow {
        let sub = &args[1];
        if eq(sub, "id") {
            Out::new(out, self.proto).int(self.me.id as i64);
        } else if eq(sub, "getname") {
            let name = self.me.fields.lock().unwrap().name.clone();
            let mut o = Out::new(out, self.proto);
            if name.is_empty() {
                o.null();
            } else {
                o.bulk(&name);
            }
        } else if eq(sub, "setname") {
            let n = &args[2];
            if !n.is_empty() && !valid_attr(n) {
                self.error(
                    out,
                    "ERR Client names cannot contain spaces, newlines or special characters.",
                );
            } else {
                self.me.fields.lock().unwrap().name = n.clone();
                out.extend_from_slice(b"+OK\r\n");
            }
        } else if eq(sub, "setinfo") {
            let attr = &args[2];
            let v = &args[3];
            let is_name = eq(attr, "lib-name");
            if !is_name && !eq(attr, "lib-ver") {
                self.error(out, &format!("ERR Unrecognized option '{}'", lossy(attr)));
            } else if !valid_attr(v) {
                self.error(
                    out,
                    &format!(
                        "ERR {} cannot contain spaces, newlines or special characters.",
                        lossy(attr)
                    ),
                );
            } else {
                let mut f = self.me.fields.lock().unwrap();
                if is_name {
                    f.lib_name = v.clone();
                } else {
                    f.lib_ver = v.clone();
                }
                out.extend_from_slice(b"+OK\r\n");
            }
        } else if eq(sub, "info") {
            let line = crate::info::client_line(&self.sh, &self.me, Some("client|info"));
            Out::new(out, self.proto).verbatim(&format!("{line}\n"));
        } else if eq(sub, "list") {
            self.client_list(args, out);
        } else if eq(sub, "kill") {
            return self.client_kill(args, out);
        } else if eq(sub, "no-evict") || eq(sub, "no-touch") {
            let on = eq(&args[2], "on");
            if !on && !eq(&args[2], "off") {
                self.error(out, SYNTAX);
            } else {
                let mut f = self.me.fields.lock().unwrap();
                if eq(sub, "no-evict") {
                    f.no_evict = on;
                } else {
                    f.no_touch = on;
                }
                out.extend_from_slice(b"+OK\r\n");
            }
        } else if eq(sub, "unblock") {
            let Some(id) = string2ll(&args[2]) else {
                self.error(out, NOT_INTEGER);
                return Flow::Next;
            };
            let mode = if args.len() == 4 {
                if eq(&args[3], "timeout") {
                    UNBLOCK_TIMEOUT
                } else if eq(&args[3], "error") {
                    UNBLOCK_ERROR
                } else {
                    self.error(out, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
                    return Flow::Next;
                }
            } else if args.len() == 3 {
                UNBLOCK_TIMEOUT
            } else {
                self.error(out, SYNTAX);
                return Flow::Next;
            };
            let target = self.sh.clients.lock().unwrap().get(&(id as u64)).cloned();
            let n = match target {
                Some(c) if c.blocked.load(Ordering::SeqCst) => {
                    c.unblock.store(mode, Ordering::SeqCst);
                    1
                }
                _ => 0,
            };
            Out::new(out, self.proto).int(n);
        } else if eq(sub, "help") {
            Out::new(out, self.proto).help(
                "CLIENT",
                &[
                    "GETNAME",
                    "    Return the name of the current connection.",
                    "ID",
                    "    Return the ID of the current connection.",
                    "INFO",
                    "    Return information about the current client connection.",
                    "KILL <ip:port>",
                    "    Kill connection made from <ip:port>.",
                    "KILL <option> <value> [<option> <value> [...]]",
                    "    Kill connections. Options are: ID <client-id>, ADDR <ip:port>, LADDR <ip:port>, SKIPME (YES|NO).",
                    "LIST [TYPE (NORMAL|MASTER|REPLICA|PUBSUB)] [ID <id> [<id> ...]]",
                    "    Return information about client connections.",
                    "SETNAME <name>",
                    "    Assign the name <name> to the current connection.",
                    "SETINFO <option> <value>",
                    "    Set client meta attr. Options are: LIB-NAME, LIB-VER.",
                    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
                    "    Unblock the specified blocked client.",
                ],
            );
        } else {
            self.error(out, &CmdError::unknown_subcommand(sub, "CLIENT").0);
        }
        Flow::Next
    }

    fn client_list(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let mut ids: Option<Vec<u64>> = None;
        let mut i = 2;
        while i < args.len() {
            if eq(&args[i], "type") && i + 1 < args.len() {
                let t = &args[i + 1];
                if !(eq(t, "normal")
                    || eq(t, "master")
                    || eq(t, "replica")
                    || eq(t, "slave")
                    || eq(t, "pubsub"))
                {
                    self.error(out, &format!("ERR Unknown client type '{}'", lossy(t)));
                    return;
                }
                if !eq(t, "normal") {
                    ids = Some(Vec::new());
                }
                i += 2;
            } else if eq(&args[i], "id") && i + 1 < args.len() {
                let mut v = Vec::new();
                i += 1;
                while i < args.len() {
                    match string2ll(&args[i]) {
                        Some(n) if n > 0 => v.push(n as u64),
                        _ => {
                            self.error(out, "ERR Invalid client ID");
                            return;
                        }
                    }
                    i += 1;
                }
                ids = Some(match ids {
                    Some(prev) if prev.is_empty() => prev,
                    _ => v,
                });
            } else {
                self.error(out, SYNTAX);
                return;
            }
        }
        let clients: Vec<_> = self.sh.clients.lock().unwrap().values().cloned().collect();
        let mut text = String::new();
        for c in clients {
            if ids.as_ref().is_some_and(|v| !v.contains(&c.id)) {
                continue;
            }
            let cmd = (c.id == self.me.id).then_some("client|list");
            text.push_str(&crate::info::client_line(&self.sh, &c, cmd));
            text.push('\n');
        }
        Out::new(out, self.proto).verbatim(&text);
    }

    fn client_kill(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) -> Flow {
        let clients: Vec<_> = self.sh.clients.lock().unwrap().values().cloned().collect();
        if args.len() == 3 {
            // Old form: CLIENT KILL addr:port
            let addr = lossy(&args[2]);
            match clients.iter().find(|c| c.addr.to_string() == addr) {
                Some(c) => {
                    let me = c.id == self.me.id;
                    c.killed.store(true, Ordering::SeqCst);
                    c.kill.notify_one();
                    out.extend_from_slice(b"+OK\r\n");
                    if me {
                        return Flow::Close;
                    }
                }
                None => self.error(out, "ERR No such client"),
            }
            return Flow::Next;
        }
        let mut id: Option<u64> = None;
        let mut addr: Option<String> = None;
        let mut laddr: Option<String> = None;
        let mut skipme = true;
        let mut i = 2;
        while i < args.len() {
            if i + 1 >= args.len() {
                self.error(out, SYNTAX);
                return Flow::Next;
            }
            let (k, v) = (&args[i], &args[i + 1]);
            if eq(k, "id") {
                match string2ll(v) {
                    Some(n) if n > 0 => id = Some(n as u64),
                    _ => {
                        self.error(out, "ERR client-id should be greater than 0");
                        return Flow::Next;
                    }
                }
            } else if eq(k, "addr") {
                addr = Some(lossy(v));
            } else if eq(k, "laddr") {
                laddr = Some(lossy(v));
            } else if eq(k, "skipme") {
                if eq(v, "yes") {
                    skipme = true;
                } else if eq(v, "no") {
                    skipme = false;
                } else {
                    self.error(out, SYNTAX);
                    return Flow::Next;
                }
            } else if eq(k, "type") || eq(k, "user") || eq(k, "maxage") {
                // Accepted; every client here is a normal client of the default user.
            } else {
                self.error(out, SYNTAX);
                return Flow::Next;
            }
            i += 2;
        }
        let mut n = 0;
        let mut close_me = false;
        for c in clients {
            if id.is_some_and(|x| x != c.id)
                || addr.as_ref().is_some_and(|a| *a != c.addr.to_string())
                || laddr.as_ref().is_some_and(|a| *a != c.laddr.to_string())
            {
                continue;
            }
            if c.id == self.me.id {
                if skipme {
                    continue;
                }
                close_me = true;
            }
            c.killed.store(true, Ordering::SeqCst);
            c.kill.notify_one();
            n += 1;
        }
        Out::new(out, self.proto).int(n);
        if close_me {
            Flow::Close
        } else {
            Flow::Next
        }
    }

    fn command(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let proto = self.proto;
        let mut o = Out::new(out, proto);
        if args.len() == 1 {
            o.array(table::commands().len());
            for &c in table::commands() {
                meta::write_info(&mut o, c, c.name);
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
                    meta::write_info(&mut o, c, c.name);
                }
            } else {
                o.array(args.len() - 2);
                for a in &args[2..] {
                    match table::lookup_fullname(a) {
                        Some((c, full)) => meta::write_info(&mut o, c, &full),
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
                meta::write_docs(&mut o, c, &full);
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
                            xstreams_core::db::glob_match(&v.to_ascii_lowercase(), full.as_bytes())
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
                self.error(out, "ERR Invalid command specified");
                return;
            };
            let spec = if !base.subcommands.is_empty() && target.len() > 1 {
                base.sub(&target[1])
            } else {
                Some(base)
            };
            let Some(spec) = spec else {
                self.error(out, "ERR Invalid command specified");
                return;
            };
            let argc = target.len() as i32;
            if (spec.arity > 0 && spec.arity != argc) || argc < -spec.arity {
                self.error(out, "ERR Invalid number of arguments specified for command");
                return;
            }
            let keys = spec.keys_of(target);
            if keys.is_empty() {
                self.error(out, "ERR The command has no key arguments");
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

    fn config(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let sub = &args[1];
        if eq(sub, "get") {
            let params = crate::info::config_params(&self.sh);
            let mut found: Vec<(String, String)> = Vec::new();
            for pat in &args[2..] {
                let p = lossy(pat).to_ascii_lowercase();
                let glob = p.contains(['*', '?', '[']);
                for (name, value) in &params {
                    let hit = if glob {
                        xstreams_core::db::glob_match(p.as_bytes(), name.as_bytes())
                    } else {
                        *name == p
                    };
                    if hit && !found.iter().any(|(n, _)| n == name) {
                        found.push((name.clone(), value.clone()));
                    }
                }
            }
            let mut o = Out::new(out, self.proto);
            o.map(found.len());
            for (n, v) in found {
                o.bulk_str(&n);
                o.bulk_str(&v);
            }
        } else if eq(sub, "set") {
            if args.len() % 2 == 1 {
                self.error(out, SYNTAX);
                return;
            }
            match crate::info::config_set(self, &args[2..]) {
                Ok(()) => out.extend_from_slice(b"+OK\r\n"),
                Err(e) => self.error(out, &e),
            }
        } else if eq(sub, "resetstat") {
            self.sh.stats.reset();
            out.extend_from_slice(b"+OK\r\n");
        } else if eq(sub, "rewrite") {
            self.error(out, "ERR The server is running without a config file");
        } else if eq(sub, "help") {
            Out::new(out, self.proto).help(
                "CONFIG",
                &[
                    "GET <pattern>",
                    "    Return parameters matching the glob-like <pattern> and their values.",
                    "SET <directive> <value>",
                    "    Set the configuration <directive> to <value>.",
                    "RESETSTAT",
                    "    Reset statistics reported by the INFO command.",
                    "REWRITE",
                    "    Rewrite the configuration file.",
                ],
            );
        }
    }

    fn debug(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let sub = &args[1];
        if eq(sub, "set-clock") && args.len() == 3 {
            // xstreams-specific: pin the store clock (ms) or return to the system clock.
            if eq(&args[2], "system") {
                self.sh.store.set_clock(None);
            } else {
                match string2ll(&args[2]) {
                    Some(ms) => self.sh.store.set_clock(Some(ms)),
                    None => {
                        self.error(out, NOT_INTEGER);
                        return;
                    }
                }
            }
            out.extend_from_slice(b"+OK\r\n");
        } else if eq(sub, "validate") && args.len() == 2 {
            // xstreams-specific: check every invariant of every stream.
            match self.sh.store.validate() {
                Ok(()) => out.extend_from_slice(b"+OK\r\n"),
                Err(e) => self.error(out, &format!("ERR invalid store: {e}")),
            }
        } else if eq(sub, "help") {
            Out::new(out, self.proto).help(
                "DEBUG",
                &[
                    "SET-CLOCK <ms>|SYSTEM",
                    "    Pin the store clock to <ms> milliseconds, or return to the system clock.",
                    "VALIDATE",
                    "    Check the invariants of every stream.",
                ],
            );
        } else {
            self.error(
                out,
                &format!(
                    "ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
                    lossy(sub)
                ),
            );
        }
    }
}
