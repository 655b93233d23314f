//! `harness-cloud serve --db sqlite:PATH|postgres://… --listen 127.0.0.1:PORT`

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use harness_cloud::server::{self, App, Limits};
use harness_cloud::storage;

#[derive(Parser)]
#[command(
    name = "harness-cloud",
    version,
    about = "The PKU harness Cloud server"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve until SIGTERM or Ctrl-C, then finish the requests under way.
    Serve {
        /// sqlite:PATH (embedded) or postgres://USER@HOST:PORT/DB (replicas share it).
        #[arg(long, env = "HARNESS_CLOUD_DB")]
        db: String,
        #[arg(long, env = "HARNESS_CLOUD_LISTEN", default_value = "127.0.0.1:8480")]
        listen: String,
        /// Requests per second an account may make, sustained.
        #[arg(long, default_value_t = Limits::default().per_second)]
        rate: f64,
        /// Requests an account may make in a burst.
        #[arg(long, default_value_t = Limits::default().burst)]
        burst: f64,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    let Command::Serve {
        db,
        listen,
        rate,
        burst,
    } = Cli::parse().command;
    let storage = match storage::open(&db).await {
        Ok(storage) => storage,
        Err(e) => {
            eprintln!("harness-cloud: --db: {e}");
            return ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind(&listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("harness-cloud: --listen {listen}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The address actually bound (port 0 picks one): tests and scripts read this line.
    match listener.local_addr() {
        Ok(addr) => println!("listening on http://{addr}"),
        Err(e) => eprintln!("harness-cloud: {e}"),
    }
    let app = App::new(
        storage,
        Limits {
            per_second: rate,
            burst,
        },
    );
    match server::serve(listener, app, shutdown()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("harness-cloud: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn shutdown() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
