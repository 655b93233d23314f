//! Standard output for every command. `println!` panics when the reader has gone
//! (`harness jobs | head -2`); here a closed pipe ends the program quietly instead, with
//! status 141 (128 + SIGPIPE), the status a shell reports for `ls` cut off the same way, so a
//! script with `set -o pipefail` sees what it sees for any other tool.

use std::fmt;
use std::io::{ErrorKind, Write};

/// The exit status when standard output's reader has gone.
pub const BROKEN_PIPE_STATUS: i32 = 141;

/// Writes to standard output, ending the program on a closed pipe.
pub fn write(args: fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        fail(e);
    }
}

/// Flushes standard output (after a prompt without a newline).
pub fn flush() {
    if let Err(e) = std::io::stdout().lock().flush() {
        fail(e);
    }
}

fn fail(e: std::io::Error) -> ! {
    if e.kind() == ErrorKind::BrokenPipe {
        // Nothing is lost: every state change is already one committed transaction, and the
        // data directory's lock goes with the process.
        std::process::exit(BROKEN_PIPE_STATUS);
    }
    eprintln!("harness: cannot write to standard output: {e}");
    std::process::exit(1);
}

/// `println!` for the CLI: see the module docs.
macro_rules! outln {
    () => {
        $crate::output::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for the CLI: see the module docs.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*))
    };
}
