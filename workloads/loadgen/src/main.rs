//! `loadgen` binary: a thin wrapper over [`loadgen::cli::main`].

fn main() -> std::process::ExitCode {
    loadgen::cli::main()
}
