//! The store's typed RESTORE: a key from a DUMP payload (what the RDB import runs per key).

use crate::command::{self, RestoreArgs};
use crate::error::{CmdError, CmdResult};
use crate::keyspace::db::NUM_DBS;

use super::Store;

impl Store {
    /// RESTORE from typed arguments on database `db`: one command exactly as if sent as
    /// arguments (write refusal, `maxmemory`, RESTORE's checks and errors, its log record).
    ///
    /// ```
    /// use xstreams_core::command::RestoreArgs;
    /// use xstreams_core::{Reply, Store};
    ///
    /// let store = Store::default();
    /// store.execute(&[b"XADD", b"s", b"1-1", b"f", b"v"]);
    /// let Reply::Bulk(payload) = store.execute(&[b"DUMP", b"s"]) else { panic!() };
    /// let args = RestoreArgs { key: b"copy", ttl: 0, payload: &payload, replace: false, absttl: false };
    /// store.restore(0, &args).unwrap();
    /// assert!(store.restore(0, &args).unwrap_err().into_line().starts_with("BUSYKEY"));
    /// ```
    pub fn restore(&self, db: usize, args: &RestoreArgs<'_>) -> CmdResult<()> {
        if db >= NUM_DBS {
            return Err(CmdError::db_index_out_of_range());
        }
        self.session()?.run(db, |ctx| {
            command::typed_write(
                ctx,
                || args.to_argv(),
                |ctx| {
                    command::check_write(ctx)?;
                    command::restore_typed(ctx, args)
                },
            )
        })
    }
}
