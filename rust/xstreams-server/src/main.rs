//! `xstreams-server`: the RESP server as a standalone binary (for cargo users; Python
//! users run `xstreams serve`, which calls the same code).

use std::process::ExitCode;

use xstreams_server::cli::{self, Action};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<String> = match args.first().map(String::as_str) {
        Some("serve") => args[1..].to_vec(),
        _ => args,
    };
    let mut cfg = match cli::parse(&args) {
        Ok(Action::Serve(c)) => *c,
        Ok(Action::Help) => {
            print!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Ok(Action::Version) => {
            println!(
                "xstreams-server v={} (redis_version {})",
                env!("CARGO_PKG_VERSION"),
                xstreams_server::REDIS_VERSION
            );
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("xstreams-server: {e}");
            return ExitCode::from(2);
        }
    };
    cfg.handle_signals = true;
    match xstreams_server::start(cfg) {
        Ok(h) => match h.join() {
            None => ExitCode::SUCCESS,
            Some(why) => {
                eprintln!("xstreams-server: {why}");
                ExitCode::from(1)
            }
        },
        Err(e) => {
            eprintln!("xstreams-server: {e}");
            ExitCode::from(1)
        }
    }
}
