//! Power loss, simulated: a durable store runs a random workload (appends, group reads,
//! acks, claims, deletes, trims, IDMP appends, compactions) on a simulated disk
//! (`persist::disk::sim`) that freezes at one chosen write or fsync; then what was not
//! synced is dropped or torn (a prefix kept, zeros after it) and the directory reopened.
//!
//! Guarded invariants:
//! * `fsync=always`: the store reopens, `validate()` holds, and its state is exactly the
//!   state after every acknowledged command, plus at most the one command in flight
//!   (which was never acknowledged). No acknowledged write is ever lost. The same with
//!   group commit (`Options::group_commit`), a command acknowledged once
//!   `Store::sync_logged` has returned after it.
//! * `fsync=everysec`: the state after reopening is the state after some prefix of the
//!   executed commands that includes every command acknowledged before the last
//!   completed background fsync (so at most about the last second is lost).
//!
//! An in-memory store fed the same commands at the same (pinned) time is the oracle.
//! Trials: `XS_POWER_LOSS_TRIALS` (default 60 for `always`, 4 for `everysec`), seed
//! `XS_POWER_LOSS_SEED` (random by default, printed: rerun with it to replay).

use std::path::Path;
use std::time::{Duration, Instant};

use xstreams_core::store::persist::disk::sim::{SimDisk, Tear};
use xstreams_core::store::persist::{Fsync, Options};
use xstreams_core::{Config, Reply, Store};
use xstreams_fuzz::sim::options;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn seed() -> u64 {
    env_u64("XS_POWER_LOSS_SEED").unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock after 1970");
        t.as_nanos() as u64 | 1
    })
}

const T0: i64 = 1_700_000_000_000;

/// One step of the workload: a command, or a compaction.
#[derive(Clone, Debug)]
enum Op {
    Cmd(Vec<String>),
    Compact,
}

fn workload(rng: &mut Rng, n: usize) -> Vec<Op> {
    let mut ops = vec![
        Op::Cmd(words("XGROUP CREATE s0 g1 0 MKSTREAM")),
        Op::Cmd(words("XGROUP CREATE s1 g2 $ MKSTREAM")),
    ];
    for i in 0..n {
        let key = ["s0", "s1"][rng.below(2) as usize];
        let group = if key == "s0" { "g1" } else { "g2" };
        let c = ["c1", "c2", "c3"][rng.below(3) as usize];
        let line = match rng.below(20) {
            0..=6 => format!("XADD {key} * f{} v{i}", rng.below(4)),
            7 => format!("XADD {key} MAXLEN ~ 40 * f v{i}"),
            8 => format!(
                "XADD {key} IDMP p{} i{} * f v{i}",
                rng.below(2),
                rng.below(30)
            ),
            9..=11 => format!("XREADGROUP GROUP {group} {c} COUNT 3 STREAMS {key} >"),
            12 | 13 => format!(
                "XACK {key} {group} {}-0 {}-1",
                T0 + rng.below(i as u64 + 1) as i64,
                T0 + rng.below(i as u64 + 1) as i64
            ),
            14 => format!("XAUTOCLAIM {key} {group} {c} 0 0-0 COUNT 2"),
            15 => format!("XDEL {key} {}-0", T0 + rng.below(i as u64 + 1) as i64),
            16 => format!("XTRIM {key} MINID {}", T0 + rng.below(i as u64 + 1) as i64),
            17 => format!("XGROUP CREATECONSUMER {key} {group} c{}", rng.below(5)),
            18 => "SET k v".to_string(),
            _ => {
                ops.push(Op::Compact);
                continue;
            }
        };
        ops.push(Op::Cmd(words(&line)));
    }
    ops
}

fn words(line: &str) -> Vec<String> {
    line.split(' ').map(str::to_string).collect()
}

fn run(store: &Store, cmd: &[String]) -> Reply {
    let refs: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
    store.execute(&refs)
}

/// Everything a reader can see of the store, as replies.
fn fingerprint(store: &Store) -> Vec<Reply> {
    let mut out = Vec::new();
    let keys = run(store, &words("KEYS *"));
    let mut names: Vec<Vec<u8>> = match &keys {
        Reply::Array(v) => v
            .iter()
            .filter_map(|r| match r {
                Reply::Bulk(b) => Some(b.clone()),
                _ => None,
            })
            .collect(),
        other => panic!("KEYS: {other:?}"),
    };
    names.sort();
    for k in names {
        let k = String::from_utf8(k).expect("utf-8 key");
        let ty = run(store, &["TYPE".into(), k.clone()]);
        if ty == Reply::Status("stream".into()) {
            out.push(run(
                store,
                &["XINFO".into(), "STREAM".into(), k.clone(), "FULL".into()],
            ));
        } else {
            out.push(run(store, &["GET".into(), k.clone()]));
        }
        out.push(ty);
    }
    out
}

/// A random tear of `unsynced` bytes: keep a prefix, sometimes add zeros after it.
fn tear(rng: &mut Rng, unsynced: u64) -> Tear {
    Tear {
        keep: rng.below(unsynced + 1),
        zeros: if rng.below(3) == 0 {
            1 + rng.below(600)
        } else {
            0
        },
    }
}

fn reopen(dir: &Path, now: i64) -> Store {
    let (store, _) = Store::open(dir, Config::default(), options(Fsync::Always, None))
        .unwrap_or_else(|e| panic!("the store did not reopen after a power loss: {e}"));
    store.set_clock(Some(now));
    store.validate().expect("validate() after reopening");
    store
}

/// One `fsync=always` trial frozen at operation `freeze_at`; returns whether the freeze
/// hit (false when the workload ended first). With `group`, the store commits in groups
/// (`Options::group_commit`): a command is acknowledged once `sync_logged` returns.
fn always_trial(
    seed: u64,
    freeze_at: Option<u64>,
    ops: &[Op],
    rng: &mut Rng,
    group: bool,
) -> (bool, u64, u64) {
    let tmp = std::env::temp_dir().join(format!("xs-power-loss-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let disk = SimDisk::new(freeze_at);
    let opts = Options {
        group_commit: group,
        ..options(Fsync::Always, Some(disk.clone()))
    };
    let (store, _) = Store::open(&tmp, Config::default(), opts).unwrap();
    let opened = disk.ops();
    let shadow = Store::new(Config::default());
    let mut now = T0;
    store.set_clock(Some(now));
    shadow.set_clock(Some(now));
    let mut in_flight: Option<&Vec<String>> = None;
    for op in ops {
        now += 1;
        store.set_clock(Some(now));
        shadow.set_clock(Some(now));
        match op {
            Op::Compact => {
                let _ = store.compact();
            }
            Op::Cmd(cmd) => {
                let r = run(&store, cmd);
                if group {
                    // A failure leaves the disk frozen: the command is then in flight.
                    let _ = store.sync_logged();
                }
                if disk.is_frozen() {
                    in_flight = Some(cmd);
                    break;
                }
                let want = run(&shadow, cmd);
                assert_eq!(r, want, "reply of acknowledged {cmd:?}");
            }
        }
        if disk.is_frozen() {
            break;
        }
    }
    let frozen = disk.is_frozen();
    let total_ops = disk.ops();
    store.close();
    drop(store);
    disk.power_loss(|_, unsynced| tear(rng, unsynced)).unwrap();
    let acked = fingerprint(&shadow);
    let with_in_flight = in_flight.map(|cmd| {
        run(&shadow, cmd);
        fingerprint(&shadow)
    });
    let back = reopen(&tmp, now);
    let got = fingerprint(&back);
    assert!(
        got == acked || Some(&got) == with_in_flight.as_ref(),
        "seed {seed}, freeze at {freeze_at:?}: the reopened store is neither the acknowledged \
         state nor that plus the command in flight ({in_flight:?})\n got: {got:?}\nwant: {acked:?}"
    );
    back.close();
    let _ = std::fs::remove_dir_all(&tmp);
    (frozen, opened, total_ops)
}

/// `trials` trials of `fsync=always`, frozen across the workload.
fn always_trials(seed: u64, trials: u64, group: bool) {
    let mut rng = Rng(seed);
    let ops = workload(&mut rng, 150);
    // A run without a freeze counts the operations (after creating the store); each
    // trial freezes at one of them.
    let (_, opened, total) = always_trial(seed, None, &ops, &mut rng, group);
    let span = total - opened;
    assert!(span > 100, "the workload did {span} disk operations");
    let mut hits = 0;
    for t in 0..trials {
        // Spread over the whole workload, with jitter.
        let at = opened + (t * span / trials + rng.below(3)) % span;
        let (frozen, _, _) = always_trial(seed ^ (t + 1), Some(at), &ops, &mut rng, group);
        hits += u64::from(frozen);
    }
    assert_eq!(hits, trials, "every trial froze inside the workload");
}

#[test]
fn fsync_always_loses_no_acknowledged_write() {
    let seed = seed();
    let trials = env_u64("XS_POWER_LOSS_TRIALS").unwrap_or(60);
    println!("power loss (always): XS_POWER_LOSS_SEED={seed} XS_POWER_LOSS_TRIALS={trials}");
    always_trials(seed, trials, false);
}

#[test]
fn fsync_always_with_group_commit_loses_no_acknowledged_write() {
    let seed = seed();
    let trials = env_u64("XS_POWER_LOSS_TRIALS").unwrap_or(60);
    println!(
        "power loss (always, group commit): XS_POWER_LOSS_SEED={seed} XS_POWER_LOSS_TRIALS={trials}"
    );
    always_trials(seed ^ 0x6c, trials, true);
}

#[test]
fn fsync_everysec_loses_at_most_the_last_second() {
    let seed = seed();
    let trials = env_u64("XS_POWER_LOSS_EVERYSEC_TRIALS").unwrap_or(3);
    println!("power loss (everysec): XS_POWER_LOSS_SEED={seed} trials={trials}");
    let mut rng = Rng(seed ^ 0xe5);
    for t in 0..trials {
        let ops = workload(&mut rng, 400);
        let tmp = std::env::temp_dir().join(format!(
            "xs-power-loss-es-{}-{seed}-{t}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&tmp);
        let disk = SimDisk::new(None);
        let (store, _) = Store::open(
            &tmp,
            Config::default(),
            options(Fsync::EverySec, Some(disk.clone())),
        )
        .unwrap();
        let shadow = Store::new(Config::default());
        let mut fps = vec![fingerprint(&shadow)];
        // syncs[i]: completed fsyncs seen right after command i; times[i]: when it returned.
        let mut syncs = Vec::new();
        let mut times = Vec::new();
        let stop = Instant::now() + Duration::from_millis(1500 + rng.below(1200));
        let mut now = T0;
        for op in ops.iter().filter(|o| matches!(o, Op::Cmd(_))) {
            let Op::Cmd(cmd) = op else { unreachable!() };
            if Instant::now() >= stop {
                break;
            }
            now += 1;
            store.set_clock(Some(now));
            shadow.set_clock(Some(now));
            let r = run(&store, cmd);
            assert_eq!(r, run(&shadow, cmd), "{cmd:?}");
            syncs.push(disk.syncs());
            times.push(Instant::now());
            fps.push(fingerprint(&shadow));
            std::thread::sleep(Duration::from_millis(4));
        }
        disk.freeze();
        let cut_at = Instant::now();
        let last_syncs = disk.syncs();
        store.close();
        drop(store);
        disk.power_loss(|_, unsynced| tear(&mut rng, unsynced))
            .unwrap();
        assert!(last_syncs > 0, "the background fsync never ran in 1.5 s");
        // Commands acknowledged before the last completed fsync must all be there.
        let durable = syncs
            .iter()
            .rposition(|&s| s < last_syncs)
            .map_or(0, |i| i + 1);
        let back = reopen(&tmp, now);
        let got = fingerprint(&back);
        let k = fps.iter().rposition(|f| *f == got).unwrap_or_else(|| {
            panic!("seed {seed}: the reopened state is no prefix of the commands")
        });
        assert!(
            k >= durable,
            "seed {seed}: {} commands survived but {durable} were acknowledged before the last fsync",
            k
        );
        let lost_window = times.get(k).map_or(Duration::ZERO, |t| cut_at - *t);
        println!(
            "everysec trial {t}: {} commands, {k} survived, {durable} were covered by an fsync, \
             the lost ones span the last {lost_window:?}",
            syncs.len()
        );
        back.close();
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
