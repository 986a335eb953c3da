//! `minRoutableTargets` with worked numbers: the load balancer's routable set as pods join and
//! leave it, the count at the window's start, changes at one instant counted once.

use harness_core::measure::{LbRoutable, RunData, Window, min_routable_targets, routable_steps};

fn change(pod: &str, t_s: f64, routable: bool) -> LbRoutable {
    LbRoutable {
        pod: pod.into(),
        t_s,
        routable,
    }
}

fn run(changes: Vec<LbRoutable>) -> RunData {
    RunData {
        duration_s: 30.0,
        lb_routable: changes,
        ..RunData::default()
    }
}

/// Three targets from before the load; at 10 s a rollout swaps a for d at one instant, at
/// 12 s b leaves before e joins at 15 s, at 20 s c leaves for good.
fn rollout() -> Vec<LbRoutable> {
    vec![
        change("a", -2.0, true),
        change("b", -2.0, true),
        change("c", -1.0, true),
        change("a", 10.0, false),
        change("d", 10.0, true),
        change("b", 12.0, false),
        change("e", 15.0, true),
        change("c", 20.0, false),
    ]
}

#[test]
fn steps_count_the_routable_set_after_each_instant() {
    assert_eq!(
        routable_steps(&rollout()),
        vec![
            (-2.0, 2),
            (-1.0, 3),
            (10.0, 3),
            (12.0, 2),
            (15.0, 3),
            (20.0, 2)
        ]
    );
}

#[test]
fn the_fewest_targets_in_the_window() {
    let run = run(rollout());
    let whole = min_routable_targets(
        &run,
        Window {
            from_s: 0.0,
            to_s: 30.0,
        },
    );
    assert_eq!(whole.value, Some(2.0));
    assert!(
        whole.evidence.contains("fewest 2 (at 12.0s)"),
        "{}",
        whole.evidence
    );
    // Before b leaves, a swap at one instant never shows as a dip.
    let before = min_routable_targets(
        &run,
        Window {
            from_s: 0.0,
            to_s: 11.0,
        },
    );
    assert_eq!(before.value, Some(3.0));
    // A window starting inside the dip takes the count at its start.
    let inside = min_routable_targets(
        &run,
        Window {
            from_s: 13.0,
            to_s: 16.0,
        },
    );
    assert_eq!(inside.value, Some(2.0));
    assert!(
        inside
            .evidence
            .starts_with("2 routable targets at the window's start")
    );
}

#[test]
fn nothing_measured_without_a_load_balancer() {
    let measured = min_routable_targets(
        &run(Vec::new()),
        Window {
            from_s: 0.0,
            to_s: 30.0,
        },
    );
    assert_eq!(measured.value, None);
}
