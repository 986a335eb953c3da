//! `harness kind-config FILE [--variant V] [--host-cpus N] [--output PATH]`: writes the kind
//! cluster config a scenario needs — zone-labelled nodes, allocatable CPU shaped for the host,
//! spare nodes for the timeline, controller-manager flags — to stdout or PATH, and says on
//! stderr how the scenario's CPU maps onto the host. Exit 2 for a scenario kind cannot
//! represent (the message says why).

use std::path::PathBuf;

use anyhow::{Context as _, anyhow};
use harness_core::scenario::load_scenario;
use harness_kind::cluster::{ClusterPlan, NodeCpu};
use harness_kind::{config, host};

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct KindConfigArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// Apply this variant (see the file's `variants`).
    #[arg(long)]
    pub variant: Option<String>,
    /// CPUs of the host the kind nodes run on: every node reports them as its capacity.
    /// Default: this machine's online CPUs. Under Docker Desktop pass the VM's
    /// (`docker info --format '{{.NCPU}}'`).
    #[arg(long, value_name = "N")]
    pub host_cpus: Option<u32>,
    /// Write the config here instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

pub fn run(args: KindConfigArgs) -> Outcome {
    let scenario = load_scenario(&args.file, args.variant.as_deref())
        .map_err(|e| Failure::InvalidInput(anyhow!("{e}")))?;
    let host_cpus = args.host_cpus.unwrap_or_else(host::online_cpus);
    let plan = ClusterPlan::new(&scenario, host_cpus).map_err(|e| {
        Failure::InvalidInput(anyhow!(
            "{}: no kind cluster for this scenario: {e}",
            args.file.display()
        ))
    })?;
    let mut command = format!("harness kind-config {}", args.file.display());
    if let Some(variant) = &args.variant {
        command.push_str(&format!(" --variant {variant}"));
    }
    command.push_str(&format!(" --host-cpus {host_cpus}"));
    let text = config::render(&plan, &command);
    match &args.output {
        Some(path) => std::fs::write(path, &text)
            .with_context(|| format!("cannot write {}", path.display()))
            .map_err(Failure::Infrastructure)?,
        None => print!("{text}"),
    }
    eprint!("{}", summary(&plan, args.host_cpus.is_none()));
    Ok(())
}

/// What the plan means, for the person who asked.
fn summary(plan: &ClusterPlan, host_detected: bool) -> String {
    let source = if host_detected {
        "this machine's online CPUs; --host-cpus to change"
    } else {
        "--host-cpus"
    };
    let mut out = format!(
        "kind cluster {} for a {}-CPU host ({source}); CPU scale {}\n",
        plan.cluster_name, plan.host_cpus, plan.cpu_scale
    );
    for node in &plan.nodes {
        let name = node.scenario_name.as_deref().unwrap_or("(control plane)");
        let zone = node.zone.as_deref().unwrap_or("-");
        let cpu = match node.cpu {
            NodeCpu::Host => format!("{}m (the host's)", plan.host_cpus * 1000),
            NodeCpu::Shaped {
                scenario_millicpu,
                allocatable_millicpu,
                ..
            } => format!("{allocatable_millicpu}m (scenario {scenario_millicpu}m)"),
        };
        out.push_str(&format!(
            "  {name:<12} {zone:<18} {:<14} allocatable {cpu}  [{}]\n",
            node.role.as_str(),
            node.kind_name
        ));
    }
    out
}
