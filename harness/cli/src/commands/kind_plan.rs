//! `harness plan FILE --target kind --output-dir DIR`: the kind cluster config and every object
//! a kind run would apply, in apply order, written for review (or `kubectl apply` by hand):
//! `kind-config.yaml`, `manifests.yaml` (all objects, one YAML document each) and
//! `manifests/NN-kind-name.yaml` per object (`kubectl apply -f DIR/manifests/`); with an
//! autoscaler also `autoscaler.yaml` (Prometheus, PodMonitors, ScaledObject, at the scenario's
//! time scale) and `third-party.txt` (the pinned releases installed first); with an ingress
//! also `ingress.yaml` (the haproxy-ingress controller's objects in apply order, after the
//! Service) and its image pin in `third-party.txt`. Generators
//! send to the Service's DNS name here (a run uses its ClusterIP once the Service exists).
//! Durations are at the scenario's `timeScale` (`harness run --time-scale` may choose another);
//! what the kind target refuses at that scale is refused here too (exit 2), and so is what the
//! chosen node image's Kubernetes lacks. Starts nothing. Without the image list (`make images`
//! not run: a dry run must work on any machine) the manifests name the stand-ins
//! `harness/<workload>:unbuilt`, and the plan says so on stderr and atop `manifests.yaml`.

use std::path::Path;

use anyhow::{Context as _, anyhow};
use harness_core::clock::TimeScale;
use harness_core::scenario::model::Scenario;
use harness_kind::cluster::ClusterPlan;
use harness_kind::driver::CreateOptions;
use harness_kind::images::Manifest as ImageManifest;
use harness_kind::manifests::{self, RenderInput};
use harness_kind::{config, host};

use super::target::refuse_node_image;
use crate::exit::{Failure, Outcome};

/// What the files are written for besides the scenario: `harness plan`'s flags.
pub struct Input<'a> {
    /// The scenario file, as the command line names it.
    pub file: &'a Path,
    pub variant: Option<&'a str>,
    /// The host's CPUs (None: this machine's online CPUs).
    pub host_cpus: Option<u32>,
    /// The image list `make images` wrote.
    pub images: &'a Path,
    /// The run id the objects are labelled with.
    pub run_id: &'a str,
    pub seed: u64,
}

/// The image list, or — when there is none — the stand-ins, with the note that says so.
fn read_images(path: &Path) -> Result<(ImageManifest, Option<String>), Failure> {
    if !path.exists() {
        let note = format!(
            "no image list at {} (`make images` writes it: it needs Docker and a second cargo build): the manifests name the stand-ins harness/<workload>:{}; a run needs the real images, so run `make images` before `harness run --target kind` (and `harness plan` again to see their content tags)",
            path.display(),
            ImageManifest::UNBUILT_TAG
        );
        return Ok((ImageManifest::unbuilt(), Some(note)));
    }
    read_image_list(path).map(|m| (m, None))
}

fn read_image_list(path: &Path) -> Result<ImageManifest, Failure> {
    let text = std::fs::read_to_string(path)
        .with_context(|| {
            format!(
                "cannot read the image list {}; run `make images` first, or pass --images PATH",
                path.display()
            )
        })
        .map_err(Failure::InvalidInput)?;
    serde_json::from_str(&text)
        .with_context(|| {
            format!(
                "{} is not an image list written by `harness images`",
                path.display()
            )
        })
        .map_err(Failure::InvalidInput)
}

pub fn write(args: &Input<'_>, scenario: &Scenario, dir: &Path, create: &CreateOptions) -> Outcome {
    let host_cpus = args.host_cpus.unwrap_or_else(host::online_cpus);
    let plan = ClusterPlan::new(scenario, host_cpus)
        .and_then(|plan| create.apply(&plan))
        .map_err(|e| {
            Failure::InvalidInput(anyhow!(
                "{}: no kind cluster for this scenario: {e}",
                args.file.display()
            ))
        })?;
    refuse_node_image(args.file, scenario, &create.node_image)?;
    if let Some(warning) = create.node_image.warning() {
        eprintln!("warning: {warning}");
    }
    let (images, unbuilt) = read_images(args.images)?;
    if let Some(note) = &unbuilt {
        eprintln!("note: {note}");
    }
    let time_scale = TimeScale::new(scenario.time_scale)
        .map_err(|e| Failure::InvalidInput(anyhow!("{}: {e}", args.file.display())))?;
    for warning in harness_kind::timing::warnings(scenario) {
        eprintln!("warning: kind: {warning}");
    }
    let refused = harness_kind::driver::refusals(scenario, time_scale);
    if !refused.is_empty() {
        return Err(Failure::InvalidInput(anyhow!(
            "{}: the kind target cannot run this scenario: {}",
            args.file.display(),
            refused.join("; ")
        )));
    }
    let objects = manifests::render(
        scenario,
        &RenderInput {
            run_id: args.run_id,
            images: &images,
            service_host: manifests::service_dns_name(scenario, args.run_id),
            lb_host: manifests::lb_dns_name(args.run_id),
            ingress_host: manifests::ingress_dns_name(args.run_id),
            time_scale,
            seed: args.seed,
        },
    )
    .map_err(|e| Failure::InvalidInput(anyhow!("{}: {e}", args.file.display())))?;
    std::fs::create_dir_all(dir.join("manifests"))
        .with_context(|| format!("cannot create {}", dir.join("manifests").display()))
        .map_err(Failure::Infrastructure)?;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .with_context(|| format!("cannot write {}", path.display()))
            .map_err(Failure::Infrastructure)
    };
    let mut command = format!("harness plan {} --target kind", args.file.display());
    if let Some(variant) = args.variant {
        command.push_str(&format!(" --variant {variant}"));
    }
    command.push_str(&format!(" --host-cpus {host_cpus}"));
    if create.node_image != harness_kind::node_image::NodeImage::pinned() {
        command.push_str(&format!(" --node-image {}", create.node_image));
    }
    write("kind-config.yaml", &config::render(&plan, &command))?;
    let header = unbuilt
        .as_ref()
        .map(|note| format!("# {note}\n"))
        .unwrap_or_default();
    write("manifests.yaml", &format!("{header}{}", objects.to_yaml()))?;
    for (name, text) in objects.documents() {
        write(&format!("manifests/{name}.yaml"), &text)?;
    }
    // The autoscaler: the run's Prometheus, PodMonitors and ScaledObject (applied once the
    // service's pods are ready), after the pinned releases it installs first.
    let scale = harness_core::clock::TimeScale::new(scenario.time_scale)
        .unwrap_or(harness_core::clock::TimeScale::REAL);
    let autoscaler = manifests::autoscaler::render(scenario, args.run_id, scale)
        .map_err(|e| Failure::InvalidInput(anyhow!("{}: {e}", args.file.display())))?;
    if let Some(autoscaler) = autoscaler {
        write("autoscaler.yaml", &manifests::values_to_yaml(&autoscaler))?;
        let table = harness_kind::pinned::PinTable::builtin()
            .map_err(|e| Failure::Infrastructure(e.into()))?;
        let mut releases = String::from(
            "# The pinned releases a kind run installs first, in this order (harness/kind/third-party.yaml)\n",
        );
        for name in harness_kind::pinned::AUTOSCALER_RELEASES {
            if let Some(pin) = table.releases.iter().find(|p| p.name == name) {
                releases.push_str(&format!(
                    "{} {} {} sha256 {}\n",
                    pin.name,
                    pin.version,
                    pin.url,
                    pin.sha256
                        .as_deref()
                        .unwrap_or("not recorded (run `harness pins lock`)")
                ));
            }
        }
        write("third-party.txt", &releases)?;
    }
    // The ingress controller: its objects (applied after the Service) and its image pin.
    if let Some(spec) = &scenario.ingress {
        let pin = manifests::ingress::kind_support(&spec.controller).map_err(|reason| {
            Failure::InvalidInput(anyhow!("{}: {reason}", args.file.display()))
        })?;
        let locked = pin.require_digest(harness_kind::pinned::PIN_FILE).ok();
        let image = locked.clone().unwrap_or_else(|| pin.tagged());
        if let Some(plan) =
            manifests::ingress::IngressPlan::new(scenario, args.run_id, image, time_scale)
        {
            let objects = manifests::ingress::objects(&plan);
            write("ingress.yaml", &manifests::values_to_yaml(&objects))?;
        }
        let line = format!(
            "# The ingress controller's image a kind run pulls (harness/kind/third-party.yaml)
{} {} {}
",
            pin.name,
            pin.version,
            locked.unwrap_or_else(|| format!(
                "{} digest not recorded (run `harness pins lock`; a run refuses until then)",
                pin.tagged()
            ))
        );
        // After the releases this plan wrote above, if any (not a stale file of another plan).
        let before = match scenario.service.autoscaler {
            Some(_) => std::fs::read_to_string(dir.join("third-party.txt")).unwrap_or_default(),
            None => String::new(),
        };
        write("third-party.txt", &format!("{before}{line}"))?;
    }
    eprintln!(
        "wrote {} (cluster {}, node image {}) and {} objects in apply order to {}",
        dir.join("kind-config.yaml").display(),
        plan.cluster_name,
        plan.node_image,
        objects.documents().len(),
        dir.display()
    );
    Ok(())
}
