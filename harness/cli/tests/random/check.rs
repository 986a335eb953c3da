//! One random scenario, run and checked: `harness run` on the local target must end with exit
//! 0 or 1 (never a panic, never 2 for a generated file, never 3), its self-audit must hold,
//! and — without an autoscaler — the pods each zone's clients reach must settle where
//! `harness plan` predicts after each step of the plan.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::render::Rendered;
use super::spec::TIME_SCALE;

/// How long one run may take before it counts as hung (a generated run loads for at most
/// 17 s of wall time).
const RUN_DEADLINE: Duration = Duration::from_secs(150);

/// Kubernetes seconds a plan step needs before its reachability is compared: new pods start
/// (1 s), pass a probe (≤ 2 s), and a rollout takes up to three waves of that.
const SETTLE_S: f64 = 12.0;

/// The run's reachability is read this many wall seconds before the next step.
const BEFORE_NEXT_WALL_S: f64 = 0.1;

/// Runs `rendered` (written to `dir/scenario.yaml`) with `seed`; `Err` names what broke.
pub fn check(rendered: &Rendered, seed: u64, dir: &Path) -> Result<(), String> {
    let file = dir.join("scenario.yaml");
    std::fs::write(&file, &rendered.yaml).map_err(|e| format!("writing the scenario: {e}"))?;
    let out = dir.join("run");
    let seed_text = seed.to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "--progress", "none", "--seed", &seed_text, "--out"])
        .arg(&out)
        .arg(&file)
        .current_dir(crate::support::workspace_root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting harness run: {e}"))?;
    let stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut s) = stderr {
            let _ = std::io::Read::read_to_string(&mut s, &mut text);
        }
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > RUN_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the run took more than {RUN_DEADLINE:?}: killed"));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stderr = reader.join().unwrap_or_default();
    let tail: String = stderr
        .lines()
        .rev()
        .take(12)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    match status.code() {
        Some(0 | 1) => {}
        Some(2) => {
            return Err(format!(
                "the generated scenario was refused (exit 2):\n{tail}"
            ));
        }
        code => {
            // A violated audit exits 3 too: name its invariants, not only the exit.
            let audit = read_json(&out.join("summary.json")).and_then(|s| audit_held(&s));
            let why = audit.err().map(|a| format!("{a}\n")).unwrap_or_default();
            return Err(format!("exit {code:?} (0 or 1 expected): {why}{tail}"));
        }
    }
    let summary = read_json(&out.join("summary.json"))?;
    audit_held(&summary)?;
    if rendered.plan_comparable {
        let plan = plan(&file, &seed_text)?;
        let events = timeline(&out.join("timeline.jsonl"))?;
        let duration = summary["durationS"].as_f64().unwrap_or(0.0);
        reachability_agrees(&plan, &events, duration)?;
    }
    Ok(())
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn audit_held(summary: &Value) -> Result<(), String> {
    let audit = &summary["audit"];
    if audit.is_null() {
        return Err("summary.json has no audit".into());
    }
    if audit["held"] == true {
        return Ok(());
    }
    let violated: Vec<String> = audit["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["status"] == "violated")
        .map(|c| format!("{} {}: {}", c["subject"], c["invariant"], c["statement"]))
        .collect();
    Err(format!(
        "the self-audit was violated: {}",
        violated.join("; ")
    ))
}

fn plan(file: &Path, seed: &str) -> Result<Value, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["plan", "--output", "json", "--seed", seed])
        .arg(file)
        .current_dir(crate::support::workspace_root())
        .output()
        .map_err(|e| format!("harness plan: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "harness plan failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("harness plan's JSON: {e}"))
}

pub fn timeline(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{}: {e}", path.display())))
        .collect()
}

/// Per zone, the pods the run's kube-proxy there reached at wall time `t`.
pub fn reached_at(events: &[Value], t: f64) -> BTreeMap<String, BTreeSet<String>> {
    let mut state = BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e["event"] == "reachability" && e["tS"].as_f64().is_some_and(|s| s <= t))
    {
        let pods = e["pods"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str().map(str::to_owned))
            .collect();
        state.insert(e["zone"].as_str().unwrap_or("").to_owned(), pods);
    }
    state
}

/// Each plan step long enough to settle ends where the plan says: for every zone both know,
/// the pods its clients reach just before the next step (or the end of the load).
fn reachability_agrees(plan: &Value, events: &[Value], duration_wall: f64) -> Result<(), String> {
    let steps = plan["steps"].as_array().cloned().unwrap_or_default();
    let start_of = |s: &Value| s["atS"].as_f64().unwrap_or(0.0);
    for (i, step) in steps.iter().enumerate() {
        let from = start_of(step);
        let to = steps
            .get(i + 1)
            .map(start_of)
            .unwrap_or(duration_wall / TIME_SCALE);
        if to - from < SETTLE_S {
            continue;
        }
        let t = to * TIME_SCALE - BEFORE_NEXT_WALL_S;
        let run = reached_at(events, t);
        let predicted = step["reachableFrom"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (zone, pods) in &predicted {
            let Some(got) = run.get(zone) else { continue };
            let want: BTreeSet<String> = pods
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.as_str().map(str::to_owned))
                .collect();
            if *got != want {
                return Err(format!(
                    "after plan step `{}` (at {from:.0}s, read at {:.1}s of Kubernetes time): clients in {zone} reached {got:?}, the plan predicted {want:?}",
                    step["label"].as_str().unwrap_or("?"),
                    t / TIME_SCALE
                ));
            }
        }
    }
    Ok(())
}
