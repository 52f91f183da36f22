//! The dedup's answers against the store's: the same rows sent as XADD IDMP (or
//! IDMPAUTO) through [`Store::xadd_rows`], each at its time, in the order the dedup
//! says it sends them. Random rows from fixed seeds (`DEDUP_SEED` replaces the base
//! seed; a failure names its seed).

use super::*;
use crate::interop::batch::{Col, Idmp, RowOutcome, XaddRows};
use crate::test_rng::Rng;
use crate::Store;

const BASE_SEED: u64 = 0x5eed_1234;

fn base_seed() -> u64 {
    std::env::var("DEDUP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(BASE_SEED)
}

/// One input row: producer, time, IID, two content values, two tie values.
#[derive(Clone, Debug)]
struct Row {
    pid: Vec<u8>,
    time: i64,
    iid: Vec<u8>,
    content: [Option<Vec<u8>>; 2],
    tie_int: Option<i64>,
    tie_bytes: Option<Vec<u8>>,
}

const CONTENT: [&str; 2] = ["a", "bb"];

fn spec(duration: u64, maxsize: u64, auto: bool) -> DedupSpec {
    DedupSpec {
        iid: if auto {
            IidSource::Content(CONTENT.iter().map(|c| c.to_string()).collect())
        } else {
            IidSource::Column("iid".into())
        },
        duration,
        maxsize,
        ..Default::default()
    }
}

/// The store's answers to `rows` sent in this order, one store for all (`calls` of
/// them share it: the state a dedup carries between calls).
fn store_answers(store: &Store, rows: &[&Row], auto: bool) -> Vec<RowOutcome> {
    let col = |f: &dyn Fn(&Row) -> Option<&[u8]>| Col::Rows(rows.iter().map(|r| f(r)).collect());
    let pid = col(&|r| Some(r.pid.as_slice()));
    let xadd = XaddRows {
        len: rows.len(),
        key: Some(col(&|r| Some(r.pid.as_slice()))),
        idmp: if auto {
            Idmp::Auto { pid }
        } else {
            Idmp::Iid {
                pid,
                iid: col(&|r| Some(r.iid.as_slice())),
            }
        },
        fields: if auto {
            vec![
                (CONTENT[0].as_bytes(), col(&|r| r.content[0].as_deref())),
                (CONTENT[1].as_bytes(), col(&|r| r.content[1].as_deref())),
            ]
        } else {
            vec![(b"iid".as_slice(), col(&|r| Some(r.iid.as_slice())))]
        },
        times: Some(rows.iter().map(|r| r.time).collect()),
        ..Default::default()
    };
    store.xadd_rows(0, &xadd).unwrap()
}

fn store_for(duration: u64, maxsize: u64) -> Store {
    Store::new(crate::Config {
        stream_idmp_duration: duration as i64,
        stream_idmp_maxsize: maxsize as i64,
        ..Default::default()
    })
}

fn outcomes(a: &Answers) -> Vec<RowOutcome> {
    (0..a.len())
        .map(|r| match a.duplicate(r) {
            true => RowOutcome::Duplicate(a.id(r)),
            false => RowOutcome::Added(a.id(r)),
        })
        .collect()
}

/// Random rows of a few producers, in time order per producer or shuffled; with
/// `errors`, an empty IID (or a row with no content) now and then.
fn rows(r: &mut Rng, sorted: bool, errors: bool) -> Vec<Row> {
    let producers = 1 + r.below(5);
    let mut out = Vec::new();
    for p in 0..producers {
        // Times around 0 (a negative clock counts as 0), with repeats and jumps.
        let mut t = r.below(3000) as i64 - 1500;
        for _ in 0..r.below(120) {
            t += match r.below(6) {
                0 => 0,
                1 => r.below(10) as i64,
                2..=4 => r.below(900) as i64,
                _ => r.below(6000) as i64,
            };
            let bad = errors && r.below(40) == 0;
            let iid = if bad {
                Vec::new()
            } else {
                format!("i{}", r.below(25)).into_bytes()
            };
            let value = |r: &mut Rng| match r.below(5) {
                0 => None,
                _ => Some(format!("{}", r.below(6)).into_bytes()),
            };
            let mut content = [value(r), value(r)];
            if bad {
                content = [None, None];
            } else if content.iter().all(Option::is_none) {
                content[0] = Some(b"x".to_vec());
            }
            let tie_int = (r.below(4) != 0).then(|| r.below(3) as i64 - 1);
            let tie_bytes = (r.below(4) != 0).then(|| vec![b'a' + r.below(3) as u8]);
            out.push(Row {
                pid: format!("p{p}").into_bytes(),
                time: t,
                iid,
                content,
                tie_int,
                tie_bytes,
            });
        }
    }
    if !sorted {
        for i in (1..out.len()).rev() {
            out.swap(i, r.below(i as u64 + 1) as usize);
        }
    }
    out
}

/// The IDMPAUTO IIDs and sizes of `rows`, as a binding computes them.
fn auto_iids(rows: &[Row]) -> Option<AutoIids> {
    let names: Vec<&[u8]> = CONTENT.iter().map(|c| c.as_bytes()).collect();
    let values: Vec<Vec<Option<&[u8]>>> = (0..2)
        .map(|c| rows.iter().map(|r| r.content[c].as_deref()).collect())
        .collect();
    let mut a = AutoIids::with_capacity(rows.len());
    a.push_rows(&names, &values, rows.len()).then_some(a)
}

/// The dedup's answers to one call of `rows` (any order), ties by the IID (`None`) or
/// by the tie columns, and the order it sent the rows in.
fn dedup_call(
    d: &mut Deduper,
    s: &DedupSpec,
    rows: &[Row],
    by_columns: bool,
) -> Result<(Answers, Vec<usize>), Refused> {
    let pids: Vec<&[u8]> = rows.iter().map(|r| r.pid.as_slice()).collect();
    let iid_col: Vec<&[u8]> = rows.iter().map(|r| r.iid.as_slice()).collect();
    let times: Vec<i64> = rows.iter().map(|r| r.time).collect();
    let auto = if s.content().is_some() {
        Some(auto_iids(rows).expect("every test row has a content value"))
    } else {
        None
    };
    let iids = match &auto {
        Some(a) => IidRows::Hashes(&a.hashes),
        None => IidRows::Column(iid_col.as_slice()),
    };
    let ties = if by_columns {
        Ties::Columns(vec![
            Tie::Ints(rows.iter().map(|r| r.tie_int).collect()),
            Tie::Bytes(rows.iter().map(|r| r.tie_bytes.as_deref()).collect()),
        ])
    } else if auto.is_some() {
        // IDMPAUTO ties by its content columns.
        Ties::Columns(vec![
            Tie::Bytes(rows.iter().map(|r| r.content[0].as_deref()).collect()),
            Tie::Bytes(rows.iter().map(|r| r.content[1].as_deref()).collect()),
        ])
    } else {
        Ties::Iid
    };
    let g = group(&pids.as_slice(), &times, &iids, &ties).expect("rows the kernel takes");
    let order: Vec<usize> = g.order.iter().map(|r| r.row as usize).collect();
    let mut answers = Answers::new(rows.len(), true);
    let size = |rec: &Rec, iid: &[u8]| match &auto {
        Some(a) => a.sizes[rec.row as usize],
        None => s.iid_entry_size(iid),
    };
    d.answer_grouped(&g, size, &mut answers)?;
    Ok((answers, order))
}

/// The order a stable sort by (producer first seen, time, ties) gives: what the dedup
/// must send, computed the plain way.
fn reference_order(rows: &[Row], by_columns: bool, auto: bool) -> Vec<usize> {
    let mut first: Vec<&[u8]> = Vec::new();
    for r in rows {
        if !first.contains(&r.pid.as_slice()) {
            first.push(&r.pid);
        }
    }
    let mut idx: Vec<usize> = (0..rows.len()).collect();
    idx.sort_by(|&a, &b| {
        let (x, y) = (&rows[a], &rows[b]);
        let g = |r: &Row| first.iter().position(|p| *p == r.pid.as_slice());
        let tie = if by_columns {
            (x.tie_int, &x.tie_bytes).cmp(&(y.tie_int, &y.tie_bytes))
        } else if auto {
            x.content.cmp(&y.content)
        } else {
            x.iid.cmp(&y.iid)
        };
        g(x).cmp(&g(y)).then(x.time.cmp(&y.time)).then(tie)
    });
    idx
}

#[test]
fn sorted_rows_answer_as_the_store() {
    let base = base_seed();
    let (mut dups, mut refused, mut re_added) = (0, 0, 0);
    for case in 0..200u64 {
        let seed = base.wrapping_add(case.wrapping_mul(0x9e37_79b9));
        let mut r = Rng::new(seed);
        let (duration, maxsize) = (1 + r.below(4), 1 + r.below(12));
        let auto = case % 3 == 2;
        let input = rows(&mut r, true, case % 4 == 0);
        let s = spec(duration, maxsize, auto);
        let expect = store_answers(
            &store_for(duration, maxsize),
            &input.iter().collect::<Vec<_>>(),
            auto,
        );
        let hashes = if auto { auto_iids(&input) } else { None };
        let mut d = Deduper::per_call(&s);
        let mut answers = Answers::new(input.len(), true);
        let row = |i: usize| {
            let r = &input[i];
            match &hashes {
                Some(a) => (r.pid.as_slice(), r.time, a.hashes[i].as_slice(), a.sizes[i]),
                None => (
                    r.pid.as_slice(),
                    r.time,
                    r.iid.as_slice(),
                    s.iid_entry_size(&r.iid),
                ),
            }
        };
        let ctx = format!("seed {seed} (DEDUP_SEED={base}, case {case})");
        if auto && input.iter().any(|r| r.content.iter().all(Option::is_none)) {
            assert!(hashes.is_none(), "{ctx}");
            continue;
        }
        match d.answer_sorted(input.len(), row, &mut answers) {
            Ok(()) => {
                let got = outcomes(&answers);
                assert_eq!(got, expect, "{ctx}");
                dups += got
                    .iter()
                    .filter(|o| matches!(o, RowOutcome::Duplicate(_)))
                    .count();
                let mut seen = std::collections::HashSet::new();
                for (row, o) in input.iter().zip(&got) {
                    if matches!(o, RowOutcome::Added(_)) && !seen.insert((&row.pid, &row.iid)) {
                        re_added += 1; // forgotten in between (time or size eviction)
                    }
                }
            }
            Err(Refused::Row(at, e)) => {
                // Refused at the store's first error, with its error; nothing kept.
                let first = expect
                    .iter()
                    .position(|o| matches!(o, RowOutcome::Error(_)));
                assert_eq!(first, Some(at), "{ctx}");
                assert_eq!(expect[at], RowOutcome::Error(e), "{ctx}");
                assert_eq!(d.producers(), 0, "{ctx}");
                refused += 1;
            }
            Err(e) => panic!("{ctx}: {e:?}"),
        }
    }
    assert!(
        dups > 100 && refused > 10 && re_added > 100,
        "{dups} {refused} {re_added}"
    );
}

#[test]
fn grouping_and_ties_answer_as_the_store_in_sorted_order() {
    let base = base_seed();
    let mut tied = 0;
    for case in 0..150u64 {
        let seed = base.wrapping_add(0x1000 + case.wrapping_mul(0x9e37_79b9));
        let mut r = Rng::new(seed);
        let (duration, maxsize) = (1 + r.below(4), 1 + r.below(12));
        let (auto, by_columns) = (case % 3 == 1, case % 2 == 1);
        let input = rows(&mut r, false, false);
        let s = spec(duration, maxsize, auto);
        let ctx = format!("seed {seed} (DEDUP_SEED={base}, case {case})");
        let mut d = Deduper::per_call(&s);
        let (answers, order) = dedup_call(&mut d, &s, &input, by_columns).expect(&ctx);
        assert_eq!(order, reference_order(&input, by_columns, auto), "{ctx}");
        let sent: Vec<&Row> = order.iter().map(|&i| &input[i]).collect();
        let expect = store_answers(&store_for(duration, maxsize), &sent, auto);
        let got = outcomes(&answers);
        for (k, &i) in order.iter().enumerate() {
            assert_eq!(got[i], expect[k], "{ctx}: input row {i}, sent {k}th");
        }
        tied += order
            .windows(2)
            .filter(|w| input[w[0]].time == input[w[1]].time)
            .count();
        assert_eq!(d.producers(), 0, "{ctx}: per_call keeps nothing");
    }
    assert!(tied > 500, "{tied}");
}

/// Calls one after another answer as each producer's own store fed every call's rows of
/// that producer in turn: a producer's IIDs expire on its own rows' clock (in one store
/// for all, the cron running at another producer's times would sweep it too).
#[test]
fn state_carries_between_calls_as_a_store_per_producer() {
    let base = base_seed();
    let mut carried = 0;
    for case in 0..60u64 {
        let seed = base.wrapping_add(0x2000 + case.wrapping_mul(0x9e37_79b9));
        let mut r = Rng::new(seed);
        let (duration, maxsize) = (1 + r.below(4), 1 + r.below(12));
        let auto = case % 2 == 1;
        let input = rows(&mut r, false, false);
        let s = spec(duration, maxsize, auto);
        let ctx = format!("seed {seed} (DEDUP_SEED={base}, case {case})");
        let mut stores: std::collections::HashMap<Vec<u8>, Store> = Default::default();
        let mut d = Deduper::new(&s);
        let mut at = 0;
        while at < input.len() {
            let end = (at + 1 + r.below(60) as usize).min(input.len());
            let call = &input[at..end];
            let (answers, order) = dedup_call(&mut d, &s, call, false).expect(&ctx);
            let got = outcomes(&answers);
            // Each producer's rows of this call, in the order sent, to its own store.
            let mut k = 0;
            while k < order.len() {
                let pid = &call[order[k]].pid;
                let run: Vec<usize> = order[k..]
                    .iter()
                    .copied()
                    .take_while(|&i| &call[i].pid == pid)
                    .collect();
                if stores.contains_key(pid) {
                    carried += 1;
                }
                let store = stores
                    .entry(pid.clone())
                    .or_insert_with(|| store_for(duration, maxsize));
                let sent: Vec<&Row> = run.iter().map(|&i| &call[i]).collect();
                for (o, &i) in store_answers(store, &sent, auto).iter().zip(&run) {
                    assert_eq!(&got[i], o, "{ctx}: call at {at}, row {i}");
                }
                k += run.len();
            }
            at = end;
        }
        assert_eq!(d.producers(), stores.len(), "{ctx}");
    }
    assert!(carried > 200, "{carried}");
}

#[test]
fn refused_rows_leave_the_state_as_it_was() {
    let s = spec(100, 100, false);
    let mut d = Deduper::new(&s);
    let row = |pid: &str, time, iid: &str| Row {
        pid: pid.into(),
        time,
        iid: iid.into(),
        content: [None, None],
        tie_int: None,
        tie_bytes: None,
    };
    let first = [row("p", 5, "a")];
    dedup_call(&mut d, &s, &first, false).unwrap();
    let bad = [row("p", 6, "b"), row("q", 7, "")];
    assert_eq!(
        dedup_call(&mut d, &s, &bad, false).unwrap_err(),
        Refused::Row(1, CmdError::idmp_empty_iid())
    );
    // "b" was not recorded: it is new now; "a" is still known.
    let (a, _) = dedup_call(&mut d, &s, &[row("p", 8, "b"), row("p", 9, "a")], false).unwrap();
    assert_eq!(
        outcomes(&a),
        [
            RowOutcome::Added(StreamId::new(8, 0)),
            RowOutcome::Duplicate(StreamId::new(5, 0))
        ]
    );
    // Unsorted input to answer_sorted: refused, nothing kept.
    let mut sorted = Deduper::new(&s);
    let input = [("p", 2), ("q", 1), ("p", 3)];
    let mut answers = Answers::new(3, true);
    let got = sorted.answer_sorted(
        3,
        |i| (input[i].0.as_bytes(), input[i].1, b"x", 4),
        &mut answers,
    );
    assert_eq!(got, Err(Refused::Unsorted(2)));
    let back = [("p", 3), ("p", 2)];
    let got = sorted.answer_sorted(
        2,
        |i| (back[i].0.as_bytes(), back[i].1, b"x", 4),
        &mut answers,
    );
    assert_eq!((got, sorted.producers()), (Err(Refused::Unsorted(1)), 0));
}

#[test]
fn float_keys_order_as_arrow() {
    let xs = [
        f64::NAN,
        f64::NEG_INFINITY,
        -2.5,
        -0.0,
        0.0,
        1e-300,
        3.0,
        f64::INFINITY,
    ];
    let keys: Vec<i64> = xs.iter().map(|&x| float_key(x)).collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{keys:?}");
    assert_eq!(float_key(-0.0), float_key(0.0));
}

#[test]
fn spec_checks_its_settings() {
    assert_eq!(DedupSpec::default().check(), Ok(()));
    let bad = DedupSpec {
        duration: 0,
        ..Default::default()
    };
    assert_eq!(bad.check(), Err(data::dedup_setting("duration", 0)));
    let bad = DedupSpec {
        maxsize: 0,
        ..Default::default()
    };
    assert_eq!(bad.check(), Err(data::dedup_setting("maxsize", 0)));
    let big = DedupSpec {
        maxsize: 2_000_000,
        duration: 1_000_000,
        ..Default::default()
    };
    assert_eq!(big.check(), Ok(()));
    let bad = DedupSpec {
        iid: IidSource::Content(vec![]),
        ..Default::default()
    };
    assert_eq!(bad.check(), Err(data::DEDUP_CONTENT_EMPTY.to_string()));
    let s = DedupSpec {
        order: Some("o".into()),
        ..Default::default()
    };
    assert_eq!((s.ties(), s.ties_are_iid()), (vec!["o"], false));
    assert_eq!(
        (
            DedupSpec::default().ties(),
            DedupSpec::default().ties_are_iid()
        ),
        (vec!["iid"], true)
    );
}
