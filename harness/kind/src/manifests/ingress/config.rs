//! The controller's global ConfigMap (`--configmap`): every key haproxy-ingress v0.16 reads
//! from it that the scenario decides, and the rewrite comment the churn changes. Keys and
//! meanings: `docs/content/en/docs/configuration/keys.md` (v0.16 docs):
//! - `balance-algorithm` (Backend, default `random(2)` since v0.16, PR #1282): the scenario's
//!   `settings.balance()`, as HAProxy's keyword (`roundrobin`, `random(2)`);
//! - `backend-server-naming: pod` (Backend, since v0.8.1): servers are named after their pods,
//!   which is how the runtime reads a server's pod from HAProxy's stats;
//! - `dynamic-scaling` (Global, default `true`) and `backend-server-slots-increment`
//!   (Backend): the scenario's v0.16 slots; `slots-min-free: 0` (Backend, default `6`, since
//!   v0.8) so a reload sizes the backend to the smallest multiple of the increment, as the
//!   harness' model does (harness/core/src/ingress/slots.rs, `plan_slots`) — upstream's default
//!   would keep six more empty slots on every reload;
//! - `http-port` / `https-port` (Frontend, defaults `80`/`443`): [`super::HTTP_PORT`] and
//!   [`super::HTTPS_PORT`], above 1023 for a non-root HAProxy; `healthz-port` (Global, default
//!   `10253`) and `stats-port` (Global, default `1936`) written out as the probes and the
//!   runtime use them;
//! - `timeout-server` (Backend): the scenario's `load.requestTimeout` (data-plane time, not
//!   scaled), in milliseconds (HAProxy's time format);
//! - `ssl-redirect: false` (Path, default `true`): plain HTTP only;
//! - [`super::REWRITE_KEY`] (`config-global`): `# harness rewrite <generation>`.

use std::collections::BTreeMap;

use super::{HAPROXY_HEALTHZ_PORT, HTTP_PORT, HTTPS_PORT, IngressPlan, REWRITE_KEY, STATS_PORT};

/// The comment line [`super::REWRITE_KEY`] holds at `generation`.
pub fn rewrite_comment(generation: u64) -> String {
    format!("# harness rewrite {generation}")
}

/// The ConfigMap's data.
pub fn config_data(plan: &IngressPlan<'_>) -> BTreeMap<String, String> {
    let settings = &plan.ingress.controller;
    let timeout_ms = plan.scenario.load.request_timeout.as_millis();
    let entries = [
        ("backend-server-naming", "pod".to_owned()),
        (
            "backend-server-slots-increment",
            settings.slots_increment.max(1).to_string(),
        ),
        (
            "balance-algorithm",
            settings.balance().haproxy_keyword().to_owned(),
        ),
        (REWRITE_KEY, rewrite_comment(plan.rewrite_generation)),
        ("dynamic-scaling", settings.dynamic_slots().to_string()),
        ("healthz-port", HAPROXY_HEALTHZ_PORT.to_string()),
        ("http-port", HTTP_PORT.to_string()),
        ("https-port", HTTPS_PORT.to_string()),
        ("slots-min-free", "0".to_owned()),
        ("ssl-redirect", "false".to_owned()),
        ("stats-port", STATS_PORT.to_string()),
        ("timeout-server", format!("{timeout_ms}ms")),
    ];
    entries
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}
