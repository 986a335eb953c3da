//! The real ingress controller's objects (haproxy-ingress v0.16 on kind): golden files for the
//! `v0-16` and `v0-16-default` variants of scenarios/ingress-hot-podding.yaml
//! (`UPDATE_GOLDENS=1 cargo test -p harness-kind --test ingress_manifests` rewrites them after
//! an intended change), which versions run and why the others are refused, the ConfigMap's
//! rewrite generation, the flags per controller settings and time scale, the names read back
//! from HAProxy, and Pod Security "restricted" on the controller's pod.

#[path = "support/files.rs"]
mod files;

use std::time::Duration;

use files::{load, repo};
use harness_core::clock::TimeScale;
use harness_core::ingress::{ControllerVersion, SortEndpointsBy};
use harness_core::scenario::model::Scenario;
use harness_kind::manifests::ingress::{
    self, CONTROLLER, HTTP_PORT, IngressPlan, REWRITE_KEY, SERVICE_PORT, STATS_PORT,
};
use serde_json::Value;

/// A made-up digest: the real one is recorded by `harness pins lock`.
const TEST_IMAGE: &str = "quay.io/jcmoraisjr/haproxy-ingress:v0.16.1@sha256:0000000000000000000000000000000000000000000000000000000000000000";

fn scenario(variant: &str) -> Scenario {
    load("scenarios/ingress-hot-podding.yaml", Some(variant))
}

fn plan(scenario: &Scenario) -> IngressPlan<'_> {
    let scale = TimeScale::new(scenario.time_scale).unwrap();
    IngressPlan::new(scenario, "golden", TEST_IMAGE.to_owned(), scale).unwrap()
}

fn json(object: &Value) -> Value {
    object.clone()
}

fn kind_and_name(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap_or_default();
    format!(
        "{kind} {}",
        object["metadata"]["name"].as_str().unwrap_or("")
    )
}

#[test]
fn the_objects_match_the_golden_files() {
    let update = std::env::var_os("UPDATE_GOLDENS").is_some();
    let mut differ = Vec::new();
    for (variant, golden) in [
        ("v0-16", "ingress-hot-podding-v0-16.yaml"),
        ("v0-16-default", "ingress-hot-podding-v0-16-default.yaml"),
    ] {
        let s = scenario(variant);
        let text = harness_kind::manifests::values_to_yaml(&ingress::objects(&plan(&s)));
        let path = repo("harness/kind/tests/golden").join(golden);
        if update {
            std::fs::write(&path, &text).unwrap();
        }
        if std::fs::read_to_string(&path).unwrap_or_default() != text {
            differ.push(format!("{golden} differs; rendered:\n{text}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn objects_come_in_apply_order_with_per_run_cluster_names() {
    let s = scenario("v0-16");
    let objects = ingress::objects(&plan(&s));
    let names: Vec<String> = objects.iter().map(kind_and_name).collect();
    assert_eq!(
        names,
        [
            "ServiceAccount haproxy-ingress",
            "ClusterRole haproxy-ingress-harness-golden",
            "ClusterRoleBinding haproxy-ingress-harness-golden",
            "Role haproxy-ingress",
            "RoleBinding haproxy-ingress",
            "ConfigMap haproxy-ingress",
            "IngressClass harness-haproxy-harness-golden",
            "Ingress flagsvc",
            "Service haproxy-ingress",
            "StatefulSet haproxy-ingress",
        ]
    );
    for object in &objects {
        let v = json(object);
        assert!(v["apiVersion"].is_string() && v["kind"].is_string(), "{v}");
        assert_eq!(v["metadata"]["labels"]["harness/run-id"], "golden", "{v}");
        let cluster_scoped = matches!(
            v["kind"].as_str(),
            Some("ClusterRole" | "ClusterRoleBinding" | "IngressClass")
        );
        assert_eq!(v["metadata"]["namespace"].is_null(), cluster_scoped, "{v}");
        if !cluster_scoped {
            assert_eq!(v["metadata"]["namespace"], "harness-golden");
        }
    }
    let by_kind = |kind: &str| {
        objects
            .iter()
            .map(json)
            .find(|v| v["kind"] == kind)
            .unwrap()
    };
    // The IngressClass is claimed by this run's controller only.
    let class = by_kind("IngressClass");
    assert_eq!(
        class["spec"]["controller"],
        "haproxy-ingress.github.io/controller/harness-golden"
    );
    let sts = by_kind("StatefulSet");
    let args: Vec<&str> = sts["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        args.contains(&"--controller-class=harness-golden"),
        "{args:?}"
    );
    // The Ingress sends `/` to the scenario's Service port through the run's class.
    let ing = by_kind("Ingress");
    assert_eq!(ing["apiVersion"], "networking.k8s.io/v1");
    assert_eq!(
        ing["spec"]["ingressClassName"],
        "harness-haproxy-harness-golden"
    );
    let path = &ing["spec"]["rules"][0]["http"]["paths"][0];
    assert_eq!(path["path"], "/");
    assert_eq!(path["pathType"], "Prefix");
    assert_eq!(path["backend"]["service"]["name"], "flagsvc");
    assert_eq!(path["backend"]["service"]["port"]["number"], 80);
    // The ClusterIP Service generators send to.
    let svc = by_kind("Service");
    assert_eq!(svc["spec"]["type"], "ClusterIP");
    assert_eq!(svc["spec"]["ports"][0]["port"], i64::from(SERVICE_PORT));
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], i64::from(HTTP_PORT));
    assert_eq!(
        svc["spec"]["selector"],
        sts["spec"]["selector"]["matchLabels"]
    );
    // One controller pod per ingress replica, started together.
    assert_eq!(sts["spec"]["replicas"], 8);
    assert_eq!(sts["spec"]["podManagementPolicy"], "Parallel");
    assert_eq!(ingress::pod_name(3), "haproxy-ingress-3");
    // The RBAC binds the controller's ServiceAccount.
    let crb = by_kind("ClusterRoleBinding");
    assert_eq!(crb["roleRef"]["name"], "haproxy-ingress-harness-golden");
    assert_eq!(crb["subjects"][0]["name"], CONTROLLER);
    assert_eq!(crb["subjects"][0]["namespace"], "harness-golden");
    let cr = by_kind("ClusterRole");
    let grants = |resource: &str, verb: &str| {
        cr["rules"].as_array().unwrap().iter().any(|r| {
            r["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x == resource)
                && r["verbs"].as_array().unwrap().iter().any(|x| x == verb)
        })
    };
    for (resource, verb) in [
        ("endpointslices", "watch"),
        ("ingressclasses", "watch"),
        ("ingresses", "list"),
        ("services", "get"),
        ("pods", "get"),
        ("configmaps", "watch"),
        ("namespaces", "list"),
    ] {
        assert!(grants(resource, verb), "{resource} {verb}");
    }
    assert!(
        !grants("gateways", "watch"),
        "--watch-gateway=false needs no Gateway API"
    );
}

#[test]
fn only_v0_16_runs_on_kind_and_the_refusal_says_what_to_use() {
    let base = scenario("v0-16").ingress.unwrap().controller;
    for version in [
        ControllerVersion::V0_6,
        ControllerVersion::V0_7,
        ControllerVersion::V0_8,
        ControllerVersion::V0_11,
        ControllerVersion::V0_16,
    ] {
        let mut settings = base;
        settings.version = version;
        match ingress::kind_support(&settings) {
            Ok(pin) => {
                assert_eq!(version, ControllerVersion::V0_16);
                assert_eq!(pin.name, "haproxy-ingress");
                assert_eq!(pin.version, "v0.16.1");
                assert_eq!(pin.image, "quay.io/jcmoraisjr/haproxy-ingress");
                // Not resolved where this was written: a run refuses until `pins lock`.
                let err = pin
                    .require_digest("harness/kind/third-party.yaml")
                    .unwrap_err();
                assert!(err.to_string().contains("harness pins lock"), "{err}");
            }
            Err(reason) => {
                assert_ne!(version, ControllerVersion::V0_16);
                for needle in [
                    format!("ingress.version {version}"),
                    "networking.k8s.io/v1beta1".to_owned(),
                    "Kubernetes stopped serving both in v1.22".to_owned(),
                    "v1.34.11".to_owned(),
                    "`ingress.version: v0.16`".to_owned(),
                    "`balanceAlgorithm: roundrobin`".to_owned(),
                    "`sortEndpointsBy: ip`".to_owned(),
                    "`sortEndpointsBy: random`".to_owned(),
                    "`v0-16-roundrobin-ip`".to_owned(),
                    "`v0-16-roundrobin-random`".to_owned(),
                ] {
                    assert!(reason.contains(&needle), "{needle} not in: {reason}");
                }
            }
        }
    }
}

#[test]
fn a_new_generation_changes_only_the_rewrite_key() {
    let s = scenario("v0-16");
    let first = plan(&s);
    let before = ingress::config_map(&first).data.unwrap();
    let after = ingress::config_map(&first.at_generation(7)).data.unwrap();
    assert_eq!(before[REWRITE_KEY], "# harness rewrite 0");
    assert_eq!(after[REWRITE_KEY], "# harness rewrite 7");
    let changed: Vec<&String> = before
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert_eq!(changed, [REWRITE_KEY]);
    assert_eq!(before.len(), after.len());
    // The generation is also what the full object list carries.
    let objects = ingress::objects(&first.at_generation(7));
    let cm = objects
        .iter()
        .map(json)
        .find(|v| v["kind"] == "ConfigMap")
        .unwrap();
    assert_eq!(cm["data"][REWRITE_KEY], "# harness rewrite 7");
}

#[test]
fn the_config_map_carries_the_scenarios_settings() {
    let s = scenario("v0-16-default");
    let data = ingress::config_map(&plan(&s)).data.unwrap();
    let expected = [
        ("backend-server-naming", "pod"),
        (
            "backend-server-slots-increment",
            &s.ingress
                .as_ref()
                .unwrap()
                .controller
                .slots_increment
                .to_string(),
        ),
        ("balance-algorithm", "random(2)"),
        ("dynamic-scaling", "true"),
        ("http-port", "8080"),
        ("slots-min-free", "0"),
        ("ssl-redirect", "false"),
        ("stats-port", &STATS_PORT.to_string()),
        ("timeout-server", "3000ms"),
    ];
    for (key, value) in expected {
        assert_eq!(data.get(key).map(String::as_str), Some(value), "{key}");
    }
    // Another request timeout and slot increment reach the keys.
    let mut other = s.clone();
    other.load.request_timeout = Duration::from_millis(1500);
    other.ingress.as_mut().unwrap().controller.slots_increment = 4;
    let data = ingress::config_map(&plan(&other)).data.unwrap();
    assert_eq!(data["timeout-server"], "1500ms");
    assert_eq!(data["backend-server-slots-increment"], "4");
}

fn args_of(s: &Scenario) -> Vec<String> {
    ingress::controller_args(&plan(s))
}

#[test]
fn flags_follow_the_controller_settings() {
    let s = scenario("v0-16");
    let args = args_of(&s);
    assert_eq!(
        args,
        [
            "--configmap=harness-golden/haproxy-ingress",
            "--watch-namespace=harness-golden",
            "--controller-class=harness-golden",
            "--update-status=false",
            "--watch-gateway=false",
            "--rate-limit-update=5",
            "--sort-endpoints-by=random",
        ]
    );
    // The defaults: no sort flag at all.
    let default = args_of(&scenario("v0-16-default"));
    assert!(
        !default.iter().any(|a| a.starts_with("--sort")),
        "{default:?}"
    );
    // Each setting its flag.
    let mut s = scenario("v0-16-default");
    let controller = &mut s.ingress.as_mut().unwrap().controller;
    controller.sort_endpoints_by = Some(SortEndpointsBy::Ip);
    controller.sort_backends = true;
    let args = args_of(&s);
    assert!(
        args.contains(&"--sort-endpoints-by=ip".to_owned()),
        "{args:?}"
    );
    assert!(args.contains(&"--sort-backends".to_owned()), "{args:?}");
}

#[test]
fn the_update_rate_follows_the_churn_within_the_documented_bounds() {
    let s = scenario("v0-16");
    let ing = s.ingress.clone().unwrap();
    let scale = |f: f64| TimeScale::new(f).unwrap();
    // 0.5/s of Kubernetes time is 5/s at a tenth; a rewrite every 0.6 s needs 3.34/s.
    assert_eq!(ingress::rate_limit_update(&ing, scale(0.1)), 5.0);
    // At real time the churn decides: a rewrite every 6 s needs 0.34/s.
    assert_eq!(ingress::rate_limit_update(&ing, scale(1.0)), 0.5);
    let mut fast = ing.clone();
    fast.rewrite_interval = Some(Duration::from_millis(500));
    assert_eq!(ingress::rate_limit_update(&fast, scale(1.0)), 4.0);
    // Faster than the controller allows: capped at its maximum of 10.
    fast.rewrite_interval = Some(Duration::from_millis(100));
    assert_eq!(ingress::rate_limit_update(&fast, scale(1.0)), 10.0);
    // No churn: the upstream default, scaled.
    let mut quiet = ing;
    quiet.rewrite_interval = None;
    assert_eq!(ingress::rate_limit_update(&quiet, scale(1.0)), 0.5);
    assert_eq!(ingress::rate_limit_update(&quiet, scale(0.25)), 2.0);
}

#[test]
fn names_read_back_from_haproxy() {
    assert_eq!(
        ingress::backend_name("harness-r1", "flagsvc", 8081),
        "harness-r1_flagsvc_8081"
    );
    assert_eq!(
        ingress::backend_name("harness-r1", "flagsvc", "http"),
        "harness-r1_flagsvc_http"
    );
    let s = scenario("v0-16");
    // The Service targets the sidecar's port.
    assert_eq!(
        ingress::service_backend(&plan(&s)),
        "harness-golden_flagsvc_8081"
    );
    assert_eq!(ingress::empty_slot_name(0), "srv001");
    assert_eq!(ingress::empty_slot_name(31), "srv032");
    assert_eq!(ingress::EMPTY_SLOT_ADDR, "127.0.0.1:1023");
    assert_eq!(ingress::STATS_CSV_PATH, "/;csv");
}

#[test]
fn the_controller_pod_meets_pod_security_restricted() {
    let s = scenario("v0-16");
    let objects = ingress::objects(&plan(&s));
    let sts = objects
        .iter()
        .map(json)
        .find(|v| v["kind"] == "StatefulSet")
        .unwrap();
    let pod = &sts["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    assert_eq!(pod["serviceAccountName"], CONTROLLER);
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    assert_eq!(c["image"], TEST_IMAGE);
    let sc = &c["securityContext"];
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["capabilities"]["drop"], serde_json::json!(["ALL"]));
    assert!(sc["capabilities"]["add"].is_null());
    assert_eq!(sc["runAsNonRoot"], true);
    assert!(sc["runAsUser"].as_i64().unwrap() > 0);
    assert!(pod["volumes"].is_null(), "no hostPath or any other volume");
    assert!(pod["hostNetwork"].is_null());
    // Every listener is above 1023: nothing needs NET_BIND_SERVICE.
    for port in c["ports"].as_array().unwrap() {
        assert!(port["containerPort"].as_i64().unwrap() > 1023, "{port}");
    }
    // The controller needs its own pod's name and namespace.
    let env: Vec<(&str, &str)> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap(),
                e["valueFrom"]["fieldRef"]["fieldPath"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        env,
        [
            ("POD_NAME", "metadata.name"),
            ("POD_NAMESPACE", "metadata.namespace")
        ]
    );
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/healthz");
}

#[test]
fn a_scenario_without_ingress_has_no_plan() {
    let s = load("scenarios/topology-skew.yaml", None);
    assert!(IngressPlan::new(&s, "r", TEST_IMAGE.to_owned(), TimeScale::REAL).is_none());
}
