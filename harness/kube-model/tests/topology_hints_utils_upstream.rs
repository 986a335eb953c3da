//! Cases from upstream's `utils_test.go` (redistribution arithmetic) for the EndpointSlice
//! topology cache, translated to the Rust model.
//! Ported from kubernetes/kubernetes v1.34 staging/src/k8s.io/endpointslice/topologycache/utils_test.go.

use std::collections::BTreeMap;

use kube_model::redistribution::{giving_and_receiving_zones, hints_by_zone, redistribute_hints};
use kube_model::{Allocation, Endpoint, EndpointSlice, Hints};

fn desired(pairs: &[(&str, f64)]) -> BTreeMap<String, Allocation> {
    pairs
        .iter()
        .map(|(z, d)| {
            (
                z.to_string(),
                Allocation {
                    minimum: 0,
                    maximum: 0,
                    desired: *d,
                },
            )
        })
        .collect()
}

fn maximum(pairs: &[(&str, i64)]) -> BTreeMap<String, Allocation> {
    pairs
        .iter()
        .map(|(z, m)| {
            (
                z.to_string(),
                Allocation {
                    minimum: 0,
                    maximum: *m,
                    desired: 0.0,
                },
            )
        })
        .collect()
}

fn ints(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
    pairs.iter().map(|(z, n)| (z.to_string(), *n)).collect()
}

fn uints(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(z, n)| (z.to_string(), *n)).collect()
}

fn ep(zone: &str, hint: Option<Vec<&str>>, ready: Option<bool>) -> Endpoint {
    let mut e = Endpoint::new("10.0.0.1", Some(zone), true);
    e.conditions.ready = ready;
    e.hints = hint.map(|zones| Hints {
        for_zones: zones.into_iter().map(str::to_owned).collect(),
        for_nodes: vec![],
    });
    e
}

// Test_getGivingAndReceivingZones, all nine cases.
#[test]
fn giving_and_receiving_zones_upstream_cases() {
    type Case = (
        &'static str,
        Vec<(&'static str, f64)>,
        Vec<(&'static str, i64)>,
        Vec<(&'static str, usize)>,
        Vec<(&'static str, usize)>,
    );
    let cases: Vec<Case> = vec![
        ("empty", vec![], vec![], vec![], vec![]),
        (
            "simple allocation with no need for rebalancing",
            vec![("zone-a", 1.2), ("zone-b", 1.1), ("zone-c", 1.0)],
            vec![("zone-a", 1), ("zone-b", 1), ("zone-c", 1)],
            vec![],
            vec![],
        ),
        (
            "preference for same zone even when giving an extra endpoint would result in slightly better distribution",
            vec![("zone-a", 5.1), ("zone-b", 5.1), ("zone-c", 5.8)],
            vec![("zone-a", 16)],
            vec![("zone-a", 10)],
            vec![("zone-b", 5), ("zone-c", 5)],
        ),
        (
            "when 2 zones need < 1 endpoint, give to zone that needs endpoint most",
            vec![("zone-a", 5.0), ("zone-b", 5.6), ("zone-c", 5.4)],
            vec![("zone-a", 16)],
            vec![("zone-a", 11)],
            vec![("zone-b", 6), ("zone-c", 5)],
        ),
        (
            "when 2 zones have extra endpoints, give from zone with most extra",
            vec![("zone-a", 5.0), ("zone-b", 5.6), ("zone-c", 5.4)],
            vec![("zone-b", 8), ("zone-c", 8)],
            vec![("zone-b", 2), ("zone-c", 3)],
            vec![("zone-a", 5)],
        ),
        (
            "ensure function can handle unexpected data (more allocated than allocations)",
            vec![("zone-a", 5.0), ("zone-b", 5.0), ("zone-c", 5.0)],
            vec![("zone-a", 6), ("zone-b", 6), ("zone-c", 6)],
            vec![],
            vec![],
        ),
        (
            "ensure function can handle unexpected data (negative allocations)",
            vec![("zone-a", -5.0), ("zone-b", -5.0), ("zone-c", -5.0)],
            vec![("zone-a", 6), ("zone-b", 6), ("zone-c", 6)],
            vec![],
            vec![],
        ),
        (
            "ensure function can handle unexpected data (negative allocated)",
            vec![("zone-a", 5.0), ("zone-b", 5.0), ("zone-c", 5.0)],
            vec![("zone-a", -4), ("zone-b", -3), ("zone-c", -2)],
            vec![],
            vec![],
        ),
        (
            "ensure function can handle unexpected data (negative for 1 zone)",
            vec![("zone-a", 5.0), ("zone-b", 5.0), ("zone-c", 5.0)],
            vec![("zone-a", -40), ("zone-b", 20), ("zone-c", 20)],
            vec![("zone-b", 15), ("zone-c", 15)],
            vec![("zone-a", 30)],
        ),
    ];
    for (name, allocations, allocated, want_giving, want_receiving) in cases {
        let (giving, receiving) =
            giving_and_receiving_zones(&desired(&allocations), &ints(&allocated));
        assert_eq!(giving, uints(&want_giving), "{name}: giving");
        assert_eq!(receiving, uints(&want_receiving), "{name}: receiving");
    }
}

// Test_redistributeHints, all three cases.
#[test]
fn redistribute_hints_upstream_cases() {
    let a = || ep("zone-a", Some(vec!["zone-a"]), Some(true));
    type Case = (
        &'static str,
        Vec<Endpoint>,
        Vec<(&'static str, usize)>,
        Vec<(&'static str, usize)>,
        Vec<(&'static str, i64)>,
    );
    let cases: Vec<Case> = vec![
        ("empty", vec![], vec![], vec![], vec![]),
        (
            "single endpoint",
            vec![a()],
            vec![("zone-a", 1)],
            vec![("zone-b", 1)],
            vec![("zone-a", -1), ("zone-b", 1)],
        ),
        (
            "endpoints from 1 zone redistributed to 2 other zones",
            vec![a(), a(), a()],
            vec![("zone-a", 2)],
            vec![("zone-b", 1), ("zone-c", 1)],
            vec![("zone-a", -2), ("zone-b", 1), ("zone-c", 1)],
        ),
    ];
    for (name, endpoints, giving, receiving, want) in cases {
        let mut slices = [EndpointSlice::new("s", endpoints)];
        let (mut giving, mut receiving) = (uints(&giving), uints(&receiving));
        let changes = redistribute_hints(slices.iter_mut(), &mut giving, &mut receiving);
        assert_eq!(changes, ints(&want), "{name}");
        // Deterministic choice: receiving zones are served in name order.
        if name.starts_with("endpoints from 1 zone") {
            let got: Vec<&[String]> = slices[0]
                .endpoints
                .iter()
                .map(Endpoint::for_zones)
                .collect();
            assert_eq!(
                got,
                vec![
                    &["zone-b".to_owned()][..],
                    &["zone-c".to_owned()][..],
                    &["zone-a".to_owned()][..]
                ]
            );
        }
    }
}

// Test_getHintsByZone, all eight cases.
#[test]
fn hints_by_zone_upstream_cases() {
    let t = Some(true);
    type Case = (
        &'static str,
        Vec<Endpoint>,
        Vec<(&'static str, i64)>,
        Vec<(&'static str, i64)>,
        Option<Vec<(&'static str, i64)>>,
    );
    let cases: Vec<Case> = vec![
        ("empty", vec![], vec![], vec![], Some(vec![])),
        (
            "single zone hint",
            vec![ep("zone-a", Some(vec!["zone-a"]), t)],
            vec![("zone-a", 3)],
            vec![("zone-a", 1)],
            Some(vec![("zone-a", 1)]),
        ),
        (
            "single zone hint with 1 unready endpoint and 1 unknown endpoint",
            vec![
                ep("zone-a", Some(vec!["zone-a"]), t),
                ep("zone-a", Some(vec!["zone-a"]), Some(false)),
                ep("zone-a", Some(vec!["zone-a"]), None),
            ],
            vec![("zone-a", 3)],
            vec![("zone-a", 1)],
            Some(vec![("zone-a", 1)]),
        ),
        (
            "multiple zone hints",
            vec![
                ep("zone-a", Some(vec!["zone-a"]), t),
                ep("zone-a", Some(vec!["zone-b"]), t),
                ep("zone-b", Some(vec!["zone-b"]), t),
            ],
            vec![("zone-a", 3), ("zone-b", 3), ("zone-c", 3)],
            vec![("zone-a", 1), ("zone-b", 1), ("zone-c", 1)],
            Some(vec![("zone-a", 1), ("zone-b", 2)]),
        ),
        (
            "invalid by zones that no longer requires any allocations",
            vec![ep("zone-a", Some(vec!["zone-non-existent"]), t)],
            vec![("zone-a", 3)],
            vec![("zone-a", 1), ("zone-b", 1), ("zone-c", 1)],
            None,
        ),
        (
            "invalid by endpoints with nil hints",
            vec![ep("zone-a", None, t)],
            vec![("zone-a", 3)],
            vec![],
            None,
        ),
        (
            "invalid by endpoint with no hints",
            vec![ep("zone-a", Some(vec![]), t)],
            vec![("zone-a", 3)],
            vec![],
            None,
        ),
        (
            "invalid by hints that would make minimum allocations impossible",
            vec![
                ep("zone-a", Some(vec!["zone-a"]), t),
                ep("zone-a", Some(vec!["zone-a"]), t),
            ],
            vec![("zone-a", 2)],
            vec![("zone-a", 1)],
            None,
        ),
    ];
    for (name, endpoints, allocations, allocated, want) in cases {
        let slice = EndpointSlice::new("s", endpoints);
        let got = hints_by_zone(&slice, &ints(&allocated), &maximum(&allocations));
        assert_eq!(got, want.map(|w| ints(&w)), "{name}");
    }
}
