//! Connection-level and server commands, one module per topic: [`auth`] (AUTH, HELLO,
//! RESET, SELECT), [`client`] (CLIENT), [`config`] (CONFIG and its parameter table),
//! [`info`] (INFO), [`command_docs`] (COMMAND and its INFO/DOCS replies), [`server`]
//! (SHUTDOWN, SAVE, BGSAVE, LASTSAVE, ROLE, DEBUG, FUNCTION/SCRIPT stubs). Error texts
//! are redis-server's (see [`crate::errors`]).
//!
//! Each topic extends [`Session`] (the connection state, below this module); the
//! dispatcher ([`crate::conn`]) calls [`run`]. Nothing here uses `conn` or `server`.

mod args;
mod auth;
mod client;
pub(crate) mod command_docs;
mod config;

pub use config::config_set;
mod info;
mod server;

use std::sync::atomic::Ordering;

use xstreams_core::command::table::{CommandSpec, ServerCmd as Srv};

use crate::errors;
use crate::out::Out;
use crate::session::{Flow, Multi, Session};

/// Run the connection-level command `srv` (any but EXEC, which the dispatcher runs).
pub fn run(
    s: &mut Session,
    spec: &'static CommandSpec,
    srv: Srv,
    args: &[Vec<u8>],
    out: &mut Vec<u8>,
) -> Flow {
    s.run_srv(spec, srv, args, out)
}

impl Session {
    /// WATCH: the keys join the connection's watched keys (in the selected database).
    fn watch_keys(&mut self, keys: &[Vec<u8>], out: &mut Vec<u8>) {
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        let store = self.sh.store.clone();
        let done = match self.watch.take() {
            Some(mut w) => match store.watch_more(&mut w, self.db, &refs) {
                Ok(()) => Ok(w),
                Err(e) => {
                    self.set_watch(Some(w));
                    Err(e)
                }
            },
            None => store.watch(self.db, &refs),
        };
        match done {
            Ok(w) => {
                self.set_watch(Some(w));
                out.extend_from_slice(b"+OK\r\n");
            }
            Err(e) => self.error(out, e.line()),
        }
    }

    fn run_srv(
        &mut self,
        spec: &'static CommandSpec,
        srv: Srv,
        args: &[Vec<u8>],
        out: &mut Vec<u8>,
    ) -> Flow {
        self.set_last_cmd(spec, args);
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
                    self.error(out, errors::MULTI_NESTED);
                } else {
                    self.multi = Some(Multi {
                        cmds: Vec::new(),
                        dirty: false,
                    });
                    self.set_multi_count();
                    out.extend_from_slice(b"+OK\r\n");
                }
            }
            // EXEC runs queued commands through the dispatcher, which handles it.
            Srv::Exec => unreachable!("EXEC is dispatched by conn"),
            Srv::Watch => {
                if self.multi.is_some() {
                    self.error(out, errors::WATCH_IN_MULTI);
                } else {
                    self.watch_keys(&args[1..], out);
                }
            }
            Srv::Unwatch => {
                self.set_watch(None);
                out.extend_from_slice(b"+OK\r\n");
            }
            Srv::Discard => {
                self.set_watch(None);
                if self.multi.take().is_none() {
                    self.error(out, errors::DISCARD_WITHOUT_MULTI);
                } else {
                    self.set_multi_count();
                    out.extend_from_slice(b"+OK\r\n");
                }
            }
            Srv::Shutdown => return self.shutdown(args, out),
            Srv::Command => self.command(args, out),
            Srv::Info => {
                let text = info::info(self, &args[1..]);
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
}
