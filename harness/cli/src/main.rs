//! `harness`: the command-line entry point. Parses arguments, dispatches to one module per
//! subcommand, and maps outcomes to exit codes (see [`exit`]).

mod commands;
mod exit;
mod invocation;
mod output;
mod progress;
mod usage;

use clap::{Parser, Subcommand};

/// Reproduce Kubernetes traffic failures as assertable scenarios.
#[derive(Debug, Parser)]
#[command(name = "harness", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check scenario files strictly; report every problem with file:line:column.
    Validate(commands::validate::ValidateArgs),
    /// Run a scenario and write its verdict and reports.
    #[command(after_help = EXIT_CODES)]
    Run(commands::run::RunArgs),
    /// Show what a run would do (placement, hints, reachability), without running it.
    #[command(after_help = EXIT_CODES)]
    Plan(commands::plan::PlanArgs),
    /// Rebuild a run's junit.xml, report.md and report.html from its summary.json and
    /// timeline.jsonl, without rerunning.
    Report(commands::report::ReportArgs),
    /// Compare two run directories (expectations, errors, skew, shares, latency, reloads);
    /// with --max-regression, a gate: exit 1 on a regression, 2 when not comparable.
    #[command(after_help = EXIT_CODES)]
    Compare(commands::compare::CompareArgs),
    /// Print the JSON Schema of scenario files (for editors), of a run's summary.json, or of
    /// `harness compare`'s compare.json.
    Schema(commands::schema::SchemaArgs),
    /// What would the EndpointSlice controller and kube-proxy do with these objects?
    Hints(commands::hints::HintsArgs),
    /// Write a scenario that reproduces a cluster's Service: its nodes, Deployment, routing,
    /// autoscaler, read from `kubectl get ... -o yaml` files or live from a context.
    Import(commands::import::ImportArgs),
    /// Write the kind cluster config a scenario needs (zones, CPU shaped for the host, spares).
    KindConfig(commands::kind_config::KindConfigArgs),
    /// Build the workload images (scratch + static binary, tagged by content) for kind.
    Images(commands::images::ImagesArgs),
    /// The pinned third-party releases of the kind target (`pins lock` records their sha256).
    Pins(commands::pins::PinsArgs),
}

/// The exit codes, shown under `--help` of the commands that gate.
const EXIT_CODES: &str = "Exit codes:\n  0  every expectation held (or the command succeeded)\n  1  an expectation failed (compare: a regression beyond --max-regression)\n  2  invalid input or usage: a scenario, flag or directory to fix; nothing ran\n  3  infrastructure: a process, port, cluster or the run's own audit failed, or the run was interrupted (partial results kept)";

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let cli = Cli::try_parse().unwrap_or_else(|e| usage::with_tips(e, &argv).exit());
    let outcome = match cli.command {
        Command::Run(args) => commands::run::run(args),
        Command::Plan(args) => commands::plan::run(args),
        Command::Validate(args) => commands::validate::run(args),
        Command::Schema(args) => commands::schema::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Compare(args) => commands::compare::run(args),
        Command::Hints(args) => commands::hints::run(args),
        Command::Import(args) => commands::import::run(args),
        Command::KindConfig(args) => commands::kind_config::run(args),
        Command::Images(args) => commands::images::run(args),
        Command::Pins(args) => commands::pins::run(args),
    };
    std::process::exit(exit::code_for(outcome));
}
