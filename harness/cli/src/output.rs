//! Standard output for command results. A reader that goes away early (`harness schema | head`)
//! ends the output quietly instead of panicking on a broken pipe.

use std::io::Write;

/// Writes `text` to stdout; on a closed pipe exits 0 at once (the reader has what it wanted).
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(3);
    }
}
