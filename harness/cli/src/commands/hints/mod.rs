//! `harness hints`: what the EndpointSlice controller and kube-proxy would do with a cluster's
//! Nodes, a Service and its EndpointSlices (Kubernetes v1.34 behaviour, from the models in
//! `kube_model`), and `harness hints sweep`: where Topology Aware Routing switches hints
//! on and off as one zone's share of CPU moves. With `--as-is`, the slices' hints are taken
//! as they are and only kube-proxy's choice is shown ([`as_is`]).

mod as_is;
mod render;
mod report;
mod sweep;

use std::path::PathBuf;

use crate::exit::{Failure, Outcome};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Readable tables.
    Text,
    /// One JSON object.
    Json,
}

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct HintsArgs {
    #[command(subcommand)]
    command: Option<HintsCommand>,

    /// Nodes as `kubectl get nodes -o yaml` prints them (a Node, a NodeList/List, or several
    /// YAML documents). Zone label, Ready condition, allocatable CPU and control-plane role
    /// labels are read.
    #[arg(long, value_name = "FILE", required = true)]
    nodes: Option<PathBuf>,

    /// The Service's EndpointSlices as `kubectl get endpointslices -o yaml` prints them.
    /// Without --service they must all belong to one Service (label kubernetes.io/service-name).
    #[arg(long, value_name = "FILE", required = true)]
    endpointslices: Option<PathBuf>,

    /// The Service (`kubectl get service NAME -o yaml`). It selects the mode: annotation
    /// service.kubernetes.io/topology-mode (or the deprecated topology-aware-hints) set to Auto,
    /// else spec.trafficDistribution. Without it, topology-mode Auto is assumed.
    #[arg(long, value_name = "FILE")]
    service: Option<PathBuf>,

    /// Take the EndpointSlices as they are (their hints untouched, no reconcile) and show
    /// what kube-proxy does with them: who reaches which pods right now, and why.
    #[arg(long)]
    as_is: bool,

    /// With --as-is: the node (one of --nodes) whose kube-proxy to explain; the JSON then has
    /// `reachable` (the addresses it uses) and `why`. Without it: `reachableFrom` per zone.
    #[arg(long, value_name = "NAME", requires = "as_is")]
    from_node: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    output: OutputFormat,
}

#[derive(Debug, clap::Subcommand)]
enum HintsCommand {
    /// Sweep the first zone's share of allocatable CPU and show where hints switch on and off.
    Sweep(SweepArgs),
}

#[derive(Debug, clap::Args)]
struct SweepArgs {
    /// Zones, comma separated; the first one's CPU share is swept, the others split the rest
    /// evenly (at least two zones).
    #[arg(
        long,
        value_name = "ZONE,ZONE,...",
        value_delimiter = ',',
        required = true
    )]
    zones: Vec<String>,

    /// Ready endpoints per zone, e.g. `2a=2,2c=2`; zones not listed have none.
    #[arg(long, value_name = "ZONE=COUNT,...", required = true)]
    endpoints: String,

    /// Step of the first zone's share, in (0, 0.5].
    #[arg(long, default_value_t = 0.01)]
    step: f64,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    output: OutputFormat,
}

pub fn run(args: HintsArgs) -> Outcome {
    match args.command {
        Some(HintsCommand::Sweep(sweep_args)) => run_sweep(sweep_args),
        None => run_report(args),
    }
}

fn run_report(args: HintsArgs) -> Outcome {
    let (Some(nodes), Some(slices)) = (args.nodes, args.endpointslices) else {
        return Err(Failure::InvalidInput(anyhow::anyhow!(
            "--nodes and --endpointslices are required"
        )));
    };
    if args.as_is {
        let (node_objects, slices_name, slice_objects, service) =
            report::read_inputs(&nodes, &slices, args.service.as_deref())
                .map_err(Failure::InvalidInput)?;
        let report = as_is::build(
            &node_objects,
            &slices_name,
            slice_objects,
            service,
            args.from_node.as_deref(),
            &nodes.display().to_string(),
        )
        .map_err(Failure::InvalidInput)?;
        return match args.output {
            OutputFormat::Text => print(&as_is::text(&report)),
            OutputFormat::Json => print_json(&report),
        };
    }
    let report = report::from_files(&nodes, &slices, args.service.as_deref())
        .map_err(Failure::InvalidInput)?;
    match args.output {
        OutputFormat::Text => print(&render::report_text(&report)),
        OutputFormat::Json => print_json(&report),
    }
}

fn run_sweep(args: SweepArgs) -> Outcome {
    let zones: Vec<String> = args.zones.iter().map(|z| z.trim().to_owned()).collect();
    let endpoints = sweep::parse_endpoints(&args.endpoints).map_err(Failure::InvalidInput)?;
    let report = sweep::build(zones, endpoints, args.step).map_err(Failure::InvalidInput)?;
    match args.output {
        OutputFormat::Text => print(&sweep::text(&report)),
        OutputFormat::Json => print_json(&report),
    }
}

fn print_json<T: serde::Serialize>(value: &T) -> Outcome {
    let json =
        serde_json::to_string_pretty(value).map_err(|e| Failure::Infrastructure(e.into()))?;
    print(&format!("{json}\n"))
}

fn print(text: &str) -> Outcome {
    crate::output::print(text);
    Ok(())
}
