//! CLIENT: ID, INFO, LIST, KILL, SETNAME/GETNAME, SETINFO, UNBLOCK, NO-EVICT/NO-TOUCH,
//! and the CLIENT LIST line format.

use std::sync::atomic::Ordering;

use xstreams_core::base::num::string2ll;
use xstreams_core::CmdError;

use super::args::{eq, lossy, valid_attr};
use crate::errors;
use crate::errors::{NOT_INTEGER, SYNTAX};
use crate::out::Out;
use crate::session::{Flow, Session};
use crate::state::{ClientHandle, Shared, Unblock};

impl Session {
    pub(super) fn client(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) -> Flow {
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
                self.error(out, errors::CLIENT_NAME_CHARS);
            } else {
                self.me.fields.lock().unwrap().name = n.clone();
                out.extend_from_slice(b"+OK\r\n");
            }
        } else if eq(sub, "setinfo") {
            let attr = &args[2];
            let v = &args[3];
            let is_name = eq(attr, "lib-name");
            if !is_name && !eq(attr, "lib-ver") {
                self.error(out, &errors::unrecognized_option(&lossy(attr)));
            } else if !valid_attr(v) {
                self.error(out, &errors::attr_chars(&lossy(attr)));
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
            let line = client_line(&self.sh, &self.me, Some("client|info"));
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
                    Unblock::Timeout
                } else if eq(&args[3], "error") {
                    Unblock::Error
                } else {
                    self.error(out, errors::UNBLOCK_REASON);
                    return Flow::Next;
                }
            } else if args.len() == 3 {
                Unblock::Timeout
            } else {
                self.error(out, SYNTAX);
                return Flow::Next;
            };
            let target = self.sh.clients.lock().unwrap().get(&(id as u64)).cloned();
            let n = match target {
                Some(c) if c.blocked.load(Ordering::SeqCst) => {
                    c.unblock.set(mode);
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
            self.error(
                out,
                &CmdError::unknown_subcommand(sub, "CLIENT").into_line(),
            );
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
                    self.error(out, &errors::unknown_client_type(&lossy(t)));
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
                            self.error(out, errors::INVALID_CLIENT_ID);
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
            text.push_str(&client_line(&self.sh, &c, cmd));
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
                None => self.error(out, errors::NO_SUCH_CLIENT),
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
                        self.error(out, errors::CLIENT_ID_POSITIVE);
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
}

/// One line of CLIENT LIST / CLIENT INFO.
pub fn client_line(sh: &Shared, c: &ClientHandle, cmd: Option<&str>) -> String {
    let f = c.fields.lock().unwrap().clone();
    let mut flags = String::new();
    if f.multi >= 0 {
        flags.push('x');
    }
    if c.blocked.load(Ordering::SeqCst) {
        flags.push('b');
    }
    // A touched watch: redis-server's CLIENT_DIRTY_CAS (its keys are already dropped).
    let dirty = f
        .watched
        .as_ref()
        .is_some_and(|(_, d)| d.load(Ordering::Relaxed));
    if dirty {
        flags.push('d');
    }
    if f.no_evict {
        flags.push('e');
    }
    if f.no_touch {
        flags.push('T');
    }
    if flags.is_empty() {
        flags.push('N');
    }
    format!(
        "id={} addr={} laddr={} fd=0 name={} age={} idle={} flags={flags} db={} sub=0 psub=0 \
         ssub=0 multi={} watch={} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=16384 rbp=0 \
         obl=0 oll=0 omem=0 omem-shared=0 omem-unshared=0 tot-mem=0 events=r cmd={} \
         user=default redir=-1 resp={} lib-name={} lib-ver={} io-thread=0 tot-net-in={} \
         tot-net-out={} tot-cmds={}",
        c.id,
        c.addr,
        c.laddr,
        String::from_utf8_lossy(&f.name),
        c.created.elapsed().as_secs(),
        (sh.started.elapsed().as_millis() as u64)
            .saturating_sub(c.last_interaction_ms.load(Ordering::Relaxed))
            / 1000,
        f.db,
        f.multi,
        f.watched.as_ref().filter(|_| !dirty).map_or(0, |(n, _)| *n),
        cmd.unwrap_or(&f.last_cmd),
        f.resp,
        String::from_utf8_lossy(&f.lib_name),
        String::from_utf8_lossy(&f.lib_ver),
        c.net_in.load(Ordering::Relaxed),
        c.net_out.load(Ordering::Relaxed),
        c.commands.load(Ordering::Relaxed),
    )
}
