//! SHUTDOWN, SAVE, BGSAVE/BGREWRITEAOF (compaction), DEBUG and the FUNCTION/SCRIPT
//! stubs test harnesses send.

use std::sync::atomic::Ordering;

use xstreams_core::base::num::string2ll;
use xstreams_core::command::table::ServerCmd as Srv;

use super::args::{eq, lossy};
use crate::errors;
use crate::errors::{NOT_INTEGER, SYNTAX};
use crate::out::Out;
use crate::session::{Flow, Session};

impl Session {
    pub(super) fn shutdown(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) -> Flow {
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
            self.error(out, errors::NO_SHUTDOWN);
            return Flow::Next;
        }
        if save && self.sh.store.is_durable() {
            let _ = self.sh.store.compact();
        }
        self.sh.request_shutdown();
        // redis-server closes the connection without a reply when it shuts down.
        Flow::Close
    }

    pub(super) fn save(&mut self, out: &mut Vec<u8>) {
        if !self.sh.store.is_durable() {
            self.error(out, errors::IN_MEMORY);
            return;
        }
        match self.sh.store.compact() {
            Ok(()) => {
                self.sh.last_save_unix.store(
                    xstreams_core::base::clock::system_now_ms() / 1000,
                    Ordering::Relaxed,
                );
                out.extend_from_slice(b"+OK\r\n");
            }
            Err(e) => self.error(out, &errors::failed(&e)),
        }
    }

    pub(super) fn bgsave(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>, msg: &str) {
        if args.len() > 2 || (args.len() == 2 && !eq(&args[1], "schedule")) {
            self.error(out, SYNTAX);
            return;
        }
        if !self.sh.store.is_durable() {
            self.error(out, errors::IN_MEMORY);
            return;
        }
        let sh = self.sh.clone();
        std::thread::spawn(move || {
            if sh.store.compact().is_ok() {
                sh.last_save_unix.store(
                    xstreams_core::base::clock::system_now_ms() / 1000,
                    Ordering::Relaxed,
                );
            }
        });
        Out::new(out, self.proto).status(msg);
    }

    pub(super) fn scripting(&mut self, srv: Srv, args: &[Vec<u8>], out: &mut Vec<u8>) {
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

    pub(super) fn debug(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
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
                Err(e) => self.error(out, &errors::invalid_store(&e)),
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
            self.error(out, &errors::debug_subcommand(&lossy(sub)));
        }
    }
}
