//! Which pods exist at each point of the timeline, as far as the file alone decides it, for
//! `killPod: { pod: N }`. Pods are numbered in creation order and a replacement gets the next
//! number: `killPod` replaces the pod it kills with a new one, `scale` up adds new ones. Other
//! changes make the names depend on the run — which pods a rollout has replaced by then, which
//! pods were on a removed node, which of the pods created together a scale-down deletes, what
//! an autoscaler decides — and from there on a pod can only be picked (`pick`, `zone`).
//!
//! The live numbers are kept as runs of consecutive numbers, so a scenario of 4 billion
//! replicas costs a few words, not a set of 4 billion entries.

use super::super::model::PodPick;

/// The pod names a point of the timeline has, or why the file cannot tell.
#[derive(Debug, Clone)]
pub(super) struct PodNames {
    live: Runs,
    next: u32,
    /// Set once the names depend on the run: what made them so.
    unknown_since: Option<String>,
}

impl PodNames {
    /// The pods at load start: `pod-0` .. `pod-<replicas-1>`.
    pub fn new(replicas: u32) -> Self {
        Self {
            live: Runs::range(0, replicas),
            next: replicas,
            unknown_since: None,
        }
    }

    /// From here on the names depend on the run, because of `why`.
    pub fn lose_track(&mut self, why: impl Into<String>) {
        if self.unknown_since.is_none() {
            self.unknown_since = Some(why.into());
        }
    }

    /// Checks that `pod-<pod>` exists now, as `killPod` names it (`shown`, at `at`); `Err` is
    /// the problem, naming the pods that do exist (or why they cannot be named).
    pub fn check(&self, pod: u32, shown: &str, at: &str) -> Result<(), String> {
        if let Some(why) = &self.unknown_since {
            return Err(format!(
                "pod `{shown}` cannot be named at {at}: which pods exist then depends on the run \
                 ({why}); pick one instead, e.g. `killPod: {{ pick: oldest }}` or \
                 `killPod: {{ zone: ZONE }}`"
            ));
        }
        if self.live.contains(&pod) {
            return Ok(());
        }
        let replaced = if pod < self.next {
            " (it was killed earlier; its replacement has a new name)"
        } else {
            ""
        };
        Err(format!(
            "pod `{shown}` does not exist at {at}; {}{replaced}",
            self.listing()
        ))
    }

    /// Whether there is certainly no pod now (a pick finds nothing).
    pub fn known_empty(&self) -> bool {
        self.unknown_since.is_none() && self.live.is_empty()
    }

    /// The pods that exist now, in words.
    fn listing(&self) -> String {
        match self.live.len() {
            0 => "there are no pods".to_owned(),
            1 => format!("the only pod is {}", list(&self.live)),
            _ => format!("pods are {}", list(&self.live)),
        }
    }

    /// `pod-<pod>` is killed: a replacement with the next number appears.
    pub fn kill(&mut self, pod: u32) {
        if self.live.remove(&pod) {
            self.add(1);
        }
    }

    /// The oldest or newest pod is killed (of pods created together the lowest or highest
    /// number); with a zone, which pod that is depends on placement.
    pub fn kill_picked(&mut self, pick: PodPick, zone: Option<&str>) {
        if let Some(zone) = zone {
            self.lose_track(format!(
                "which pod a kill picks in zone {zone} depends on placement"
            ));
            return;
        }
        let victim = match pick {
            PodPick::Oldest => self.live.first(),
            PodPick::Newest => self.live.last(),
        };
        if let Some(victim) = victim {
            self.kill(victim);
        }
    }

    /// The Deployment is scaled to `replicas`.
    pub fn scale(&mut self, replicas: u32, at: &str) {
        let live = self.live.len();
        if u64::from(replicas) > live {
            self.add((u64::from(replicas) - live) as u32);
        } else if u64::from(replicas) < live {
            self.lose_track(format!(
                "the scale-down at {at} deletes the not-ready, then the newest pods, and pods \
                 created together are equally new"
            ));
        }
    }

    fn add(&mut self, count: u32) {
        let end = self.next.saturating_add(count);
        self.live.push_range(self.next, end);
        self.next = end;
    }
}

/// Sorted, disjoint, non-adjacent runs `[start, end]` (inclusive) of pod numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Runs(Vec<(u32, u32)>);

impl Runs {
    /// `start .. end` (exclusive end).
    fn range(start: u32, end: u32) -> Self {
        let mut runs = Runs::default();
        runs.push_range(start, end);
        runs
    }

    /// Appends `start .. end` (exclusive), above every number held.
    fn push_range(&mut self, start: u32, end: u32) {
        if start >= end {
            return;
        }
        match self.0.last_mut() {
            Some((_, last)) if *last + 1 == start => *last = end - 1,
            _ => self.0.push((start, end - 1)),
        }
    }

    fn contains(&self, n: &u32) -> bool {
        self.0.iter().any(|&(a, b)| a <= *n && *n <= b)
    }

    fn remove(&mut self, n: &u32) -> bool {
        let Some(i) = self.0.iter().position(|&(a, b)| a <= *n && *n <= b) else {
            return false;
        };
        let (a, b) = self.0[i];
        match (a == *n, b == *n) {
            (true, true) => {
                self.0.remove(i);
            }
            (true, false) => self.0[i].0 = n + 1,
            (false, true) => self.0[i].1 = n - 1,
            (false, false) => {
                self.0[i].1 = n - 1;
                self.0.insert(i + 1, (n + 1, b));
            }
        }
        true
    }

    fn first(&self) -> Option<u32> {
        self.0.first().map(|r| r.0)
    }

    fn last(&self) -> Option<u32> {
        self.0.last().map(|r| r.1)
    }

    fn len(&self) -> u64 {
        self.0.iter().map(|&(a, b)| u64::from(b - a) + 1).sum()
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `pod-0 .. pod-3, pod-5`: runs of consecutive numbers shortened.
fn list(pods: &Runs) -> String {
    pods.0
        .iter()
        .map(|&(a, b)| match b - a {
            0 => format!("pod-{a}"),
            1 => format!("pod-{a}, pod-{b}"),
            _ => format!("pod-{a} .. pod-{b}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kills_and_scale_ups_take_the_next_numbers() {
        let mut names = PodNames::new(4);
        assert_eq!(names.check(3, "3", "1s"), Ok(()));
        names.kill(3);
        assert_eq!(
            names.check(3, "pod-3", "2s"),
            Err(
                "pod `pod-3` does not exist at 2s; pods are pod-0 .. pod-2, pod-4 (it was \
                 killed earlier; its replacement has a new name)"
                    .into()
            )
        );
        names.kill_picked(PodPick::Oldest, None);
        names.scale(5, "20s");
        assert_eq!(list(&names.live), "pod-1, pod-2, pod-4 .. pod-6");
        assert_eq!(
            names.check(9, "9", "30s"),
            Err("pod `9` does not exist at 30s; pods are pod-1, pod-2, pod-4 .. pod-6".into())
        );
        names.kill_picked(PodPick::Newest, None);
        assert_eq!(list(&names.live), "pod-1, pod-2, pod-4, pod-5, pod-7");
    }

    #[test]
    fn four_billion_replicas_cost_one_run() {
        let replicas = u32::MAX - 10;
        let mut names = PodNames::new(replicas);
        assert_eq!(names.live.0, vec![(0, replicas - 1)]);
        assert_eq!(names.check(4_000_000_000, "4000000000", "1s"), Ok(()));
        names.kill(7);
        // The replacement takes the next number: still one pod per replica, in two runs.
        assert_eq!(names.live.len(), u64::from(replicas));
        assert_eq!(names.live.0, vec![(0, 6), (8, replicas)]);
        assert!(names.check(7, "7", "2s").is_err());
    }

    proptest::proptest! {
        /// Runs behave as the set of numbers they stand for, whatever kills and additions.
        #[test]
        fn runs_are_the_set_they_stand_for(
            start in 0u32..50,
            ops in proptest::collection::vec((proptest::bool::ANY, 0u32..80), 0..60),
        ) {
            let mut runs = Runs::range(0, start);
            let mut set: std::collections::BTreeSet<u32> = (0..start).collect();
            let mut next = start;
            for (add, n) in ops {
                if add {
                    let count = n % 5;
                    runs.push_range(next, next + count);
                    set.extend(next..next + count);
                    next += count;
                } else {
                    proptest::prop_assert_eq!(runs.remove(&n), set.remove(&n));
                }
                proptest::prop_assert_eq!(runs.len(), set.len() as u64);
                proptest::prop_assert_eq!(runs.first(), set.first().copied());
                proptest::prop_assert_eq!(runs.last(), set.last().copied());
                for k in 0..next + 2 {
                    proptest::prop_assert_eq!(runs.contains(&k), set.contains(&k));
                }
                // Runs stay sorted, disjoint and non-adjacent.
                for w in runs.0.windows(2) {
                    proptest::prop_assert!(w[0].1 + 1 < w[1].0);
                }
            }
        }
    }

    #[test]
    fn after_a_scale_down_names_are_no_longer_known() {
        let mut names = PodNames::new(2);
        names.scale(0, "5s");
        assert!(
            !names.known_empty(),
            "which pods is unknown, not that there are none"
        );
        let e = names.check(0, "0", "6s").unwrap_err();
        assert!(
            e.starts_with("pod `0` cannot be named at 6s: which pods exist then depends on the run (the scale-down at 5s"),
            "{e}"
        );
        assert!(
            e.ends_with("`killPod: { pick: oldest }` or `killPod: { zone: ZONE }`"),
            "{e}"
        );
        assert_eq!(
            PodNames::new(1).check(1, "1", "1s"),
            Err("pod `1` does not exist at 1s; the only pod is pod-0".into())
        );
        assert!(PodNames::new(0).known_empty());
    }
}
