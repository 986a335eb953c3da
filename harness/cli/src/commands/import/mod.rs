//! `harness import`: a scenario that reproduces one Service of a real cluster — its nodes
//! (zones, allocatable CPU, Ready, control plane, taints and cordons as placement), its
//! Deployment (replicas, spread, affinity, probe, rollout, termination), its routing mode and
//! its HorizontalPodAutoscaler — from `kubectl get ... -o yaml` files ([`objects`]) or read live
//! and read-only from a kubeconfig context (`harness_kind::import`). What the objects cannot
//! say is written as a commented default or a value to fill in, each with its sentence, and
//! listed on stderr. docs/import.md has every mapping.

mod autoscaler;
mod check;
mod mapping;
mod objects;
mod placement;
mod pod_spec;
mod render;
mod select;
mod text;

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, anyhow};
use harness_kind::import::ClusterObjects;

use crate::exit::{Failure, Outcome};
use text::NoteKind;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["from", "context"])))]
pub struct ImportArgs {
    /// Files of objects as `kubectl get nodes,deployments,services,endpointslices,hpa,pdb -o
    /// yaml` prints them (Lists, single objects or several documents; other kinds are
    /// skipped). Repeatable.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "context")]
    pub from: Vec<PathBuf>,
    /// Read the objects live (list calls only) from this kubeconfig context instead: the
    /// Nodes and the namespace's objects. Like runs, only `kind-harness-*` contexts unless
    /// --allow-existing-cluster.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// With --context: the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).
    #[arg(long, value_name = "PATH", requires = "context")]
    pub kubeconfig: Option<PathBuf>,
    /// With --context: read from a cluster the harness did not create (read-only: nothing is
    /// written to it).
    #[arg(long, requires = "context")]
    pub allow_existing_cluster: bool,
    /// The Service to reproduce.
    #[arg(long, value_name = "NAME")]
    pub service: String,
    /// Its namespace (with --context the default is `default`; with files, any namespace
    /// holding one Service of that name).
    #[arg(long, short = 'n', value_name = "NS")]
    pub namespace: Option<String>,
    /// Load per zone, requests per second: `--rate us-east-1a=200` (repeatable, or
    /// comma-separated). Zones without a rate get no generator; without any, each zone gets a
    /// rate to fill in.
    #[arg(long, value_name = "ZONE=RPS", value_delimiter = ',', value_parser = parse_rate)]
    pub rate: Vec<(String, f64)>,
    /// Write the scenario to this file (default: standard output). An existing file is
    /// refused unless --force.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite --output if it exists.
    #[arg(long, requires = "output")]
    pub force: bool,
}

fn parse_rate(text: &str) -> Result<(String, f64), String> {
    let (zone, rate) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: write ZONE=RPS, e.g. us-east-1a=200"))?;
    let rate: f64 = rate.trim().parse().map_err(|_| {
        format!("{text:?}: the rate {rate:?} is not a number of requests per second")
    })?;
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!("{text:?}: the rate must be a number above 0"));
    }
    Ok((zone.trim().to_owned(), rate))
}

pub fn run(args: ImportArgs) -> Outcome {
    if let Some(path) = args.output.as_ref().filter(|p| p.exists() && !args.force) {
        return Err(Failure::InvalidInput(anyhow!(
            "--output {}: the file exists; add --force to overwrite it",
            path.display()
        )));
    }
    let mut rates = BTreeMap::new();
    for (zone, rate) in &args.rate {
        if rates.insert(zone.clone(), *rate).is_some() {
            return Err(Failure::InvalidInput(anyhow!(
                "--rate {zone}=…: given twice"
            )));
        }
    }
    let (objects, origin, namespace) = match &args.context {
        Some(context) => {
            let namespace = args
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_owned());
            let objects = read_live(&args, context, &namespace)?;
            (objects, format!("context {context}"), Some(namespace))
        }
        None => {
            let read = objects::read_files(&args.from).map_err(Failure::InvalidInput)?;
            if !read.skipped.is_empty() {
                let kinds: Vec<String> = read
                    .skipped
                    .iter()
                    .map(|(k, n)| format!("{n} {k}"))
                    .collect();
                eprintln!(
                    "harness import: skipped objects the import does not read: {}",
                    kinds.join(", ")
                );
            }
            let names: Vec<String> = args.from.iter().map(|p| p.display().to_string()).collect();
            (read.objects, names.join(", "), args.namespace.clone())
        }
    };
    let selected = select::select(objects, &args.service, namespace.as_deref())
        .map_err(Failure::InvalidInput)?;
    let mut imported =
        mapping::import(&selected, &rates, &origin).map_err(Failure::InvalidInput)?;
    let text = render::render(&imported);
    let text = match check::check(&text, &imported).map_err(Failure::Infrastructure)? {
        Some(note) => {
            imported.notes.push(note);
            render::render(&imported)
        }
        None => text,
    };
    match &args.output {
        Some(path) => std::fs::write(path, &text)
            .with_context(|| format!("--output {}: cannot write the scenario", path.display()))
            .map_err(Failure::Infrastructure)?,
        None => crate::output::print(&text),
    }
    print_notes(&imported);
    Ok(())
}

fn read_live(args: &ImportArgs, context: &str, namespace: &str) -> Result<ClusterObjects, Failure> {
    let cluster = context.strip_prefix("kind-").unwrap_or("");
    if !args.allow_existing_cluster && !harness_kind::driver::is_harness_cluster(cluster) {
        return Err(Failure::InvalidInput(anyhow!(
            "--context {context}: the harness only talks to clusters it created (contexts named `kind-harness-*`) unless told otherwise; `harness import` only lists objects (Nodes, and the namespace's Deployments, Services, EndpointSlices, HPAs, PDBs) and writes nothing: add --allow-existing-cluster to read from this cluster"
        )));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Infrastructure(e.into()))?;
    runtime.block_on(async {
        let (client, _server) =
            harness_kind::driver::client_for(context, args.kubeconfig.as_deref())
                .await
                .map_err(|e| Failure::InvalidInput(e.into()))?;
        harness_kind::import::read_namespace(&client, namespace)
            .await
            .map_err(|e| Failure::Infrastructure(e.into()))
    })
}

fn print_notes(imported: &mapping::Imported) {
    if imported.notes.is_empty() {
        return;
    }
    eprintln!("harness import: what the objects did not say, and how it was written:");
    for kind in [
        NoteKind::FillIn,
        NoteKind::Approximation,
        NoteKind::NotReproduced,
        NoteKind::Default,
    ] {
        for note in imported.notes.iter().filter(|n| n.kind == kind) {
            eprintln!("  {:<15} {}: {}", note.kind.label(), note.field, note.text);
        }
    }
}
