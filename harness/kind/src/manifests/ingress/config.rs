//! The controller's global ConfigMap (`--configmap`): every key haproxy-ingress v0.16 reads
//! from it that the scenario decides, and the rewrite comment the churn changes. Keys, scopes
//! and defaults: `docs/content/en/docs/configuration/keys.md` of the v0.16 branch (the copy that
//! lists `peers-table-global`, added in v0.16.0-alpha.2):
//! - `balance-algorithm` (Backend, default `random(2)` since v0.16, PR #1282): the scenario's
//!   `settings.balance()`, as HAProxy's keyword (`roundrobin`, `random(2)`);
//! - `backend-server-naming: pod` (Backend, default `sequence`): servers are named after their
//!   pods (`pkg/haproxy/types/backend.go`, `AddEndpoint`: the last part of the endpoint's
//!   `targetRef`), which is how the runtime reads a server's pod from HAProxy's stats;
//! - `dynamic-scaling` (Backend, default `true`) and `backend-server-slots-increment` (Backend,
//!   default `1`): the scenario's v0.16 slots;
//! - `slots-min-free: 0` (Backend): v0.16's default too (keys.md's table says `0`, and the
//!   converter's defaults no longer set the key, which reads as 0; `6` was the default of older
//!   releases), written out so the rendered ConfigMap says what the harness' model assumes:
//!   a reload sizes the backend to the smallest multiple of the increment that holds the
//!   endpoints, at least one increment (`pkg/haproxy/dynupdate.go`, `alignSlots`;
//!   harness/core/src/ingress/slots.rs, `plan_slots`);
//! - `http-port` / `https-port` (Frontend, defaults `80`/`443`): [`super::HTTP_PORT`] and
//!   [`super::HTTPS_PORT`], above 1023 for a non-root HAProxy; `healthz-port` (Global, default
//!   `10253`) and `stats-port` (Global, default `1936`) written out as the probes and the
//!   runtime use them;
//! - `timeout-server` (Backend, default `50s`): the scenario's `load.requestTimeout`
//!   (data-plane time, not scaled), in milliseconds (HAProxy's time format);
//! - `ssl-redirect: false` (Path, default `true`): plain HTTP only;
//! - [`super::REWRITE_KEY`] (`config-global`, Global): `# harness rewrite <generation>`.
//!
//! Left at their defaults: `stats-auth` (no auth: the observer reads the stats page without
//! credentials), `bind-ip-addr-stats` / `bind-ip-addr-healthz` (empty: HAProxy binds `:<port>`,
//! every IPv4 address, so the API server's pod proxy reaches them on the pod IP), `use-chroot`
//! and `use-haproxy-user` (both `false`) with `username`/`groupname` unset: no `chroot`, `user`
//! or `group` in `global`, nothing that needs root (`pkg/converters/ingress/annotations/global.go`,
//! `buildGlobalSecurity`: a user is written only when both names are set or
//! `use-haproxy-user` is on).

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
