//! AUTH, HELLO, RESET and SELECT: who the connection is and what it speaks.

use xstreams_core::base::num::string2ll;

use super::args::{eq, lossy, valid_attr};
use crate::errors;
use crate::errors::{NOT_INTEGER, SYNTAX};
use crate::out::Out;
use crate::session::Session;

impl Session {
    fn check_password(&self, user: &[u8], pass: &[u8]) -> bool {
        if user != b"default" {
            return false;
        }
        match &self.sh.dynamic.lock().unwrap().requirepass {
            None => true,
            Some(p) => p.as_bytes() == pass,
        }
    }

    pub(super) fn auth(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        if args.len() > 3 {
            self.error(out, SYNTAX);
            return;
        }
        let (user, pass): (&[u8], &[u8]) = if args.len() == 2 {
            if !self.sh.auth_configured() {
                self.error(out, errors::AUTH_WITHOUT_PASSWORD);
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
            self.error(out, errors::WRONGPASS);
        }
    }

    pub(super) fn hello(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        let mut ver = 0i64;
        let mut next = 1;
        if args.len() >= 2 {
            match string2ll(&args[1]) {
                Some(v) => ver = v,
                None => {
                    self.error(out, errors::PROTO_NOT_INTEGER);
                    return;
                }
            }
            next = 2;
            if !(2..=3).contains(&ver) {
                self.error(out, errors::NOPROTO);
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
                    self.error(out, errors::CLIENT_NAME_CHARS);
                    return;
                }
                name = Some(n);
                j += 2;
            } else {
                self.error(out, &errors::hello_option(&lossy(&args[j])));
                return;
            }
        }
        if let Some((u, p)) = auth {
            if self.check_password(u, p) {
                self.authed = true;
            } else {
                self.error(out, errors::WRONGPASS);
                return;
            }
        }
        if self.auth_required() {
            self.error(out, errors::NOAUTH_HELLO);
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

    pub(super) fn reset(&mut self, out: &mut Vec<u8>) {
        self.multi = None;
        self.set_watch(None);
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

    /// The database `SELECT index` switches to, or its error line.
    pub(crate) fn select_target(&self, index: &[u8]) -> Result<usize, &'static str> {
        // getIntFromObjectOrReply: not an integer, or outside the C int range.
        let id = string2ll(index).ok_or(NOT_INTEGER)?;
        if i32::try_from(id).is_err() {
            return Err(errors::DB_INDEX_RANGE_INT);
        }
        if id < 0 || id as usize >= self.sh.cfg.databases {
            return Err(errors::DB_INDEX_RANGE);
        }
        Ok(id as usize)
    }

    pub(super) fn select(&mut self, args: &[Vec<u8>], out: &mut Vec<u8>) {
        match self.select_target(&args[1]) {
            Err(e) => self.error(out, e),
            Ok(db) => {
                self.db = db;
                self.me.fields.lock().unwrap().db = self.db;
                out.extend_from_slice(b"+OK\r\n");
            }
        }
    }
}
