//! The imported scenario as YAML text: a header saying where it came from and how to go on,
//! the values read from the objects, the defaults commented out and the values to fill in
//! marked `FILL IN`, each with its sentence.

use std::fmt::Write as _;

use super::mapping::{Imported, NodeEntry};
use super::text::{NoteKind, dns_label, quoted};

/// Requests per second written for a zone whose load is to be filled in.
pub const PLACEHOLDER_RATE: f64 = 10.0;

/// The scenario file's text.
pub fn render(imported: &Imported) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# {}.", imported.description);
    let _ = writeln!(
        w,
        "# Written by `harness import`. Values without a comment were read from the objects as they"
    );
    let _ = writeln!(
        w,
        "# stand; `FILL IN` marks what the objects cannot say (edit it); commented-out keys show the"
    );
    let _ = writeln!(
        w,
        "# default that applies. Then: `harness plan FILE`, `harness run FILE` (docs/import.md)."
    );
    let fill_ins: Vec<_> = imported
        .notes
        .iter()
        .filter(|n| n.kind == NoteKind::FillIn)
        .collect();
    if !fill_ins.is_empty() {
        let _ = writeln!(w, "#");
        let _ = writeln!(w, "# To fill in:");
        for note in fill_ins {
            let _ = writeln!(w, "# - {}: {}", note.field, note.text);
        }
    }
    let differences: Vec<_> = imported
        .notes
        .iter()
        .filter(|n| matches!(n.kind, NoteKind::Approximation | NoteKind::NotReproduced))
        .collect();
    if !differences.is_empty() {
        let _ = writeln!(w, "#");
        let _ = writeln!(w, "# Where the scenario differs from the objects:");
        for note in differences {
            let _ = writeln!(
                w,
                "# - {} ({}): {}",
                note.field,
                note.kind.label(),
                note.text
            );
        }
    }
    let _ = writeln!(w, "apiVersion: harness/v1alpha1");
    let _ = writeln!(w, "kind: Scenario");
    let _ = writeln!(w, "metadata:");
    let _ = writeln!(w, "  name: {}", imported.name);
    let _ = writeln!(w, "  description: {}", quoted(&imported.description));
    let _ = writeln!(w, "cluster:");
    let _ = writeln!(
        w,
        "  # Allocatable CPU as the nodes report it; on kind, one factor scales every node to fit the host."
    );
    if !imported.control_plane.is_empty() {
        let _ = writeln!(w, "  controlPlane:");
        for node in &imported.control_plane {
            let _ = writeln!(
                w,
                "    - {{ name: {}, zone: {}, allocatableCpu: {}{} }}",
                node.name,
                node.zone,
                quoted(&node.cpu),
                ready_text(node)
            );
        }
    }
    let _ = writeln!(w, "  zones:");
    for zone in &imported.zones {
        let _ = writeln!(w, "    - name: {}", zone.name);
        if zone.nodes.is_empty() {
            let _ = writeln!(w, "      nodes: []");
            continue;
        }
        let _ = writeln!(w, "      nodes:");
        for node in &zone.nodes {
            let _ = writeln!(
                w,
                "        - {{ name: {}, allocatableCpu: {}{} }}",
                node.name,
                quoted(&node.cpu),
                ready_text(node)
            );
        }
    }
    let _ = writeln!(w, "service:");
    for field in &imported.service {
        for line in field.lines(2) {
            let _ = writeln!(w, "{line}");
        }
    }
    for comment in &imported.service_comments {
        let _ = writeln!(w, "  # {comment}");
    }
    let _ = writeln!(w, "load:");
    let _ = writeln!(w, "  warmup: 5s       # edit: load before measurement");
    let _ = writeln!(w, "  duration: 60s    # edit: the measured load");
    let _ = writeln!(w, "  generators:");
    for g in &imported.generators {
        let name = generator_name(&g.zone);
        match g.rate {
            Some(rate) => {
                let _ = writeln!(
                    w,
                    "    - {{ name: {name}, zone: {}, rate: {rate} }}    # --rate",
                    g.zone
                );
            }
            None => {
                let _ = writeln!(
                    w,
                    "    - {{ name: {name}, zone: {}, rate: {PLACEHOLDER_RATE} }}    # FILL IN: this zone's requests per second",
                    g.zone
                );
            }
        }
    }
    let _ = writeln!(
        w,
        "# timeline: the changes to rehearse (docs/scenario-format.md#timeline), e.g."
    );
    let _ = writeln!(
        w,
        "#   - {{ at: 20s, name: rollout, rollout: {{ restart: true }} }}"
    );
    let _ = writeln!(w, "expect:");
    let _ = writeln!(
        w,
        "  - name: callers see (almost) no errors    # edit: what must hold"
    );
    let _ = writeln!(w, "    metric: errorRate");
    let _ = writeln!(w, "    max: 0.01");
    out
}

fn ready_text(node: &NodeEntry) -> &'static str {
    if node.ready { "" } else { ", ready: false" }
}

/// `from-<zone>`, a generator's name.
pub fn generator_name(zone: &str) -> String {
    dns_label(&format!("from-{zone}"))
}
