//! Property tests of the request parser: arbitrary bytes and mutated valid requests never
//! panic and never make the parser claim more bytes than it was given; valid requests
//! round-trip whatever way they are split into reads.

use proptest::prelude::*;
use xstreams_server::resp::{encode_command, Limits, Parsed, Parser, ProtocolError};

/// Feed `chunks` one after another as reads into a growing buffer; collect what the
/// parser returns until an error.
fn feed(chunks: &[Vec<u8>], auth: bool) -> (Vec<Vec<Vec<u8>>>, Option<ProtocolError>) {
    let mut p = Parser::new();
    let limits = Limits::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut cmds = Vec::new();
    for c in chunks {
        buf.extend_from_slice(c);
        loop {
            let (n, r) = p.parse(&buf, &limits, auth);
            assert!(n <= buf.len(), "consumed {n} of {}", buf.len());
            buf.drain(..n);
            match r {
                Ok(Parsed::Incomplete) => break,
                Ok(Parsed::Empty) => {}
                Ok(Parsed::Command(a)) => {
                    assert!(!a.is_empty());
                    cmds.push(a)
                }
                Err(e) => {
                    let line = e.reply();
                    assert!(line.starts_with(b"-ERR Protocol error: "));
                    assert!(line.ends_with(b"\r\n"));
                    return (cmds, Some(e));
                }
            }
        }
    }
    (cmds, None)
}

fn split_at_points(data: &[u8], points: &[usize]) -> Vec<Vec<u8>> {
    let mut cuts: Vec<usize> = points.iter().map(|p| p % (data.len() + 1)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    let mut last = 0;
    for c in cuts {
        out.push(data[last..c].to_vec());
        last = c;
    }
    out.push(data[last..].to_vec());
    out
}

fn arg() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40),
        proptest::collection::vec(any::<u8>(), 0..3000),
        Just(b"\r\n".to_vec()),
        Just(b"*1\r\n".to_vec()),
        Just(Vec::new()),
    ]
}

fn command() -> impl Strategy<Value = Vec<Vec<u8>>> {
    proptest::collection::vec(arg(), 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2000),
                                points in proptest::collection::vec(any::<usize>(), 0..6),
                                auth in any::<bool>()) {
        let chunks = split_at_points(&data, &points);
        let _ = feed(&chunks, auth);
    }

    #[test]
    fn resp_like_bytes_never_panic(parts in proptest::collection::vec(
            prop_oneof![
                Just(b"*".to_vec()), Just(b"$".to_vec()), Just(b"\r\n".to_vec()),
                Just(b"\r".to_vec()), Just(b"\n".to_vec()), Just(b"-1".to_vec()),
                Just(b"0".to_vec()), Just(b"3".to_vec()), Just(b"12".to_vec()),
                Just(b"\"".to_vec()), Just(b"'".to_vec()), Just(b" ".to_vec()),
                Just(b"\\x4".to_vec()), Just(b"\0".to_vec()), Just(b"PING".to_vec()),
                Just(b"99999999999999999999".to_vec()),
            ], 0..60),
            points in proptest::collection::vec(any::<usize>(), 0..6),
            auth in any::<bool>()) {
        let data: Vec<u8> = parts.concat();
        let chunks = split_at_points(&data, &points);
        let _ = feed(&chunks, auth);
    }

    #[test]
    fn valid_requests_round_trip(cmds in proptest::collection::vec(command(), 1..6),
                                 points in proptest::collection::vec(any::<usize>(), 0..12)) {
        let mut data = Vec::new();
        for c in &cmds {
            let refs: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
            data.extend_from_slice(&encode_command(&refs));
        }
        let chunks = split_at_points(&data, &points);
        let (got, err) = feed(&chunks, false);
        prop_assert!(err.is_none(), "{err:?}");
        prop_assert_eq!(got, cmds);
    }

    #[test]
    fn mutated_requests_never_panic(cmds in proptest::collection::vec(command(), 1..4),
                                    muts in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..8),
                                    points in proptest::collection::vec(any::<usize>(), 0..6),
                                    auth in any::<bool>()) {
        let mut data = Vec::new();
        for c in &cmds {
            let refs: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
            data.extend_from_slice(&encode_command(&refs));
        }
        for (pos, byte, kind) in muts {
            if data.is_empty() {
                data.push(byte);
                continue;
            }
            let i = pos % data.len();
            match kind {
                0 => data[i] = byte,
                1 => { data.remove(i); }
                _ => data.insert(i, byte),
            }
        }
        let chunks = split_at_points(&data, &points);
        let _ = feed(&chunks, auth);
    }

    /// Inline requests: arguments without quotes, blanks or NULs round-trip.
    #[test]
    fn inline_round_trip(args in proptest::collection::vec("[A-Za-z0-9_.:-]{1,12}", 1..6),
                         crlf in any::<bool>()) {
        let mut line = args.join(" ").into_bytes();
        line.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        let (got, err) = feed(&[line], false);
        prop_assert!(err.is_none());
        let want: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        prop_assert_eq!(got, vec![want]);
    }
}

#[test]
fn huge_declared_lengths_allocate_nothing() {
    // A count of 2^31-1 and a 512 MB bulk are accepted as headers; nothing is reserved
    // until the bytes arrive.
    let (cmds, err) = feed(&[b"*2147483647\r\n$536870912\r\n".to_vec()], false);
    assert!(cmds.is_empty() && err.is_none());
    let (_, err) = feed(&[b"*2147483648\r\n".to_vec()], false);
    assert_eq!(err, Some(ProtocolError::InvalidMultibulkLength));
}
