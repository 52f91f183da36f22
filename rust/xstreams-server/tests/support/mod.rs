//! What the server's end-to-end tests share: a server on a free loopback port and a
//! minimal RESP client (std only, no client library).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use xstreams_server::resp::encode_command;
use xstreams_server::{start, ServerConfig, ServerHandle};

pub fn server(cfg: ServerConfig) -> ServerHandle {
    start(ServerConfig {
        port: 0,
        verbose: false,
        threads: 2,
        ..cfg
    })
    .expect("server starts")
}

pub struct Client {
    pub r: BufReader<TcpStream>,
    pub w: TcpStream,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Client {
            r: BufReader::new(s.try_clone().unwrap()),
            w: s,
        }
    }

    pub fn send(&mut self, args: &[&str]) {
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.w.write_all(&encode_command(&refs)).unwrap();
    }

    pub fn raw(&mut self, bytes: &[u8]) {
        self.w.write_all(bytes).unwrap();
    }

    /// One reply, rendered as text (arrays as `[a,b]`, nulls as `nil`).
    pub fn read(&mut self) -> String {
        let mut line = String::new();
        self.r.read_line(&mut line).unwrap();
        assert!(line.ends_with("\r\n"), "truncated reply {line:?}");
        let line = &line[..line.len() - 2];
        let (t, rest) = line.split_at(1);
        match t {
            "+" | "-" | ":" => format!("{t}{rest}"),
            "_" => "nil".into(),
            "$" => {
                let n: i64 = rest.parse().unwrap();
                if n < 0 {
                    return "nil".into();
                }
                let mut b = vec![0; n as usize + 2];
                self.r.read_exact(&mut b).unwrap();
                String::from_utf8_lossy(&b[..n as usize]).into_owned()
            }
            "*" | "%" | "~" => {
                let n: i64 = rest.parse().unwrap();
                if n < 0 {
                    return "nil".into();
                }
                let n = if t == "%" { n * 2 } else { n };
                let items: Vec<String> = (0..n).map(|_| self.read()).collect();
                format!("[{}]", items.join(","))
            }
            "=" => {
                let n: usize = rest.parse().unwrap();
                let mut b = vec![0; n + 2];
                self.r.read_exact(&mut b).unwrap();
                String::from_utf8_lossy(&b[4..n]).into_owned()
            }
            _ => panic!("unexpected reply {line:?}"),
        }
    }

    pub fn call(&mut self, args: &[&str]) -> String {
        self.send(args);
        self.read()
    }

    /// True once the server closed the connection.
    pub fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.r.read(&mut b), Ok(0))
    }
}

pub fn info_field(c: &mut Client, field: &str) -> String {
    info_field_in(c, "clients", field)
}

/// A field of INFO's `section`.
pub fn info_field_in(c: &mut Client, section: &str, field: &str) -> String {
    let text = c.call(&["INFO", section]);
    text.split("\r\n")
        .find_map(|l| l.strip_prefix(&format!("{field}:")).map(str::to_string))
        .unwrap_or_default()
}

pub fn wait_for(mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < end, "condition not met in time");
        std::thread::sleep(Duration::from_millis(5));
    }
}
