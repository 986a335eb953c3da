//! Scalar value types of the file format (names, durations, CPU quantities, rates, pod
//! references, thresholds): how they are written, and their JSON Schema (type + pattern).
//! Their meaning is parsed later by `scenario::units` and the builders.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// A DNS label: lowercase letters, digits and `-`.
pub const DNS_LABEL_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
/// A Kubernetes node name (a DNS subdomain).
pub const NODE_NAME_PATTERN: &str =
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
/// A Kubernetes label value (zone names are the value of `topology.kubernetes.io/zone`).
pub const ZONE_NAME_PATTERN: &str = "^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$";
/// A timeline entry name: a DNS label that starts with a letter (so `12s` is never a name).
pub const EVENT_NAME_PATTERN: &str = "^[a-z]([-a-z0-9]*[a-z0-9])?$";
/// A `humantime` duration: one or more `<number><unit>` groups, or `0`.
pub const DURATION_PATTERN: &str =
    "^([0-9]+(\\.[0-9]+)? *[a-zA-Zµ]+( *[0-9]+(\\.[0-9]+)? *[a-zA-Zµ]+)*|0)$";
/// A CPU quantity: cores (`4`, `0.5`) or millicores (`3500m`).
pub const CPU_PATTERN: &str = "^[0-9]+(\\.[0-9]+)?m?$";
/// A request rate given as text: `max`, or a ramp `from:to` in requests per second.
pub const RATE_PATTERN: &str = "^(max|[0-9]+(\\.[0-9]+)?:[0-9]+(\\.[0-9]+)?)$";
/// A pod name: `pod-<index>`.
pub const POD_PATTERN: &str = "^pod-[0-9]+$";
/// A request path.
pub const HTTP_PATH_PATTERN: &str = "^/[^ ]*$";
/// A percentage written as text: a whole number followed by `%` (`intstr` percent syntax).
pub const PERCENT_PATTERN: &str = "^[0-9]+%$";

/// What a value matching one of the patterns above looks like, for error messages.
pub fn describe_pattern(pattern: &str) -> Option<&'static str> {
    Some(match pattern {
        DNS_LABEL_PATTERN => {
            "a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"
        }
        NODE_NAME_PATTERN => "a node name: lowercase DNS labels joined by '.'",
        ZONE_NAME_PATTERN => "a zone name: letters, digits, '-', '_' and '.'",
        EVENT_NAME_PATTERN => {
            "a name of lowercase letters, digits and '-' that starts with a letter and does not end with '-'"
        }
        DURATION_PATTERN => "a duration such as \"250ms\", \"30s\", \"1m 30s\" or \"0s\"",
        CPU_PATTERN => "a CPU quantity such as \"4\", \"0.5\" or \"3500m\"",
        RATE_PATTERN => {
            "a rate: a number of requests per second, \"max\", or a ramp \"from:to\" such as \"100:1000\""
        }
        POD_PATTERN => "a pod index such as 3 or a pod name such as \"pod-3\"",
        HTTP_PATH_PATTERN => "a request path starting with '/'",
        PERCENT_PATTERN => "a whole number such as 1 or a percentage such as \"25%\"",
        _ => return None,
    })
}

/// A scalar that may be written as a number or as a string.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Scalar {
    Number(serde_json::Number),
    Text(String),
}

impl std::fmt::Display for Scalar {
    /// As written: `200`, `max`, `pod-3`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Number(n) => write!(f, "{n}"),
            Scalar::Text(t) => f.write_str(t),
        }
    }
}

/// A newtype over a value as written (`$inner`: the text, or a [`Scalar`]), serialized as that
/// value, with its own inline JSON schema.
macro_rules! written_type {
    ($inner:ty, $(#[$doc:meta])* $name:ident, $schema_name:literal, $schema:tt) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> Cow<'static, str> {
                $schema_name.into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!($schema)
            }
        }
    };
}

/// A value written as text.
macro_rules! text_type {
    ($($written:tt)*) => {
        written_type!(String, $($written)*);
    };
}

/// A value written as a number or as text.
macro_rules! scalar_type {
    ($($written:tt)*) => {
        written_type!(Scalar, $($written)*);
    };
}

text_type!(
    /// A DNS label.
    DnsLabel, "DnsLabel", { "type": "string", "pattern": DNS_LABEL_PATTERN, "maxLength": 63 }
);
text_type!(
    /// A node name.
    NodeName, "NodeName", { "type": "string", "pattern": NODE_NAME_PATTERN, "maxLength": 253 }
);
text_type!(
    /// A zone name.
    ZoneName, "ZoneName", { "type": "string", "pattern": ZONE_NAME_PATTERN, "maxLength": 63 }
);
text_type!(
    /// A timeline entry name.
    EventName, "EventName", { "type": "string", "pattern": EVENT_NAME_PATTERN, "maxLength": 63 }
);
text_type!(
    /// A duration written as text (`humantime` syntax).
    DurationText, "Duration", { "type": "string", "pattern": DURATION_PATTERN }
);
text_type!(
    /// An HTTP request path.
    HttpPath, "HttpPath", { "type": "string", "pattern": HTTP_PATH_PATTERN }
);
text_type!(
    /// A window bound: `start`, `end`, a timeline entry name, any of those followed by `+D` or
    /// `-D`, or a bare duration `D` after load start.
    WindowBound, "WindowBound", { "type": "string", "minLength": 1 }
);
scalar_type!(
    /// A CPU quantity: a number of cores or a Kubernetes quantity string.
    CpuText, "CpuQuantity", { "type": ["number", "string"], "minimum": 0, "pattern": CPU_PATTERN }
);
scalar_type!(
    /// A request rate: a number of requests per second, `max`, or a ramp `from:to`.
    RateText, "Rate", { "type": ["number", "string"], "exclusiveMinimum": 0, "pattern": RATE_PATTERN }
);
scalar_type!(
    /// A pod: its index, or its name `pod-<index>`.
    PodRefText, "PodRef", { "type": ["integer", "string"], "minimum": 0, "pattern": POD_PATTERN }
);
scalar_type!(
    /// A number of pods, or a percentage of the desired replica count such as `"25%"`
    /// (Kubernetes' `IntOrString`).
    IntOrPercentText, "IntOrPercent", { "type": ["integer", "string"], "minimum": 0, "pattern": PERCENT_PATTERN }
);
scalar_type!(
    /// A threshold: a number; for rates also a percentage such as `"1%"`; for latency and
    /// other time metrics a duration such as `"500ms"`. Which one a metric takes is checked
    /// with the metric.
    ThresholdText, "Threshold", { "type": ["number", "string"], "minLength": 1 }
);

impl DurationText {
    /// A default value written the way a user would.
    pub fn of(text: &str) -> Self {
        Self(text.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        let schema = serde_json::json!({ "type": "string", "pattern": pattern });
        jsonschema::is_valid(&schema, &serde_json::json!(text))
    }

    #[test]
    fn duration_pattern_accepts_humantime_forms() {
        for ok in ["250ms", "30s", "0s", "0", "1m 30s", "1.5s", "2h37min"] {
            assert!(matches(DURATION_PATTERN, ok), "{ok}");
        }
        for bad in ["", "20", "ms", "fast", "-1s", "1s,2s"] {
            assert!(!matches(DURATION_PATTERN, bad), "{bad}");
        }
    }

    #[test]
    fn rate_cpu_and_pod_patterns() {
        assert!(matches(RATE_PATTERN, "max") && matches(RATE_PATTERN, "100:1000.5"));
        assert!(!matches(RATE_PATTERN, "100") && !matches(RATE_PATTERN, "100-200"));
        assert!(matches(CPU_PATTERN, "3500m") && matches(CPU_PATTERN, "0.5"));
        assert!(!matches(CPU_PATTERN, "4 cores") && !matches(CPU_PATTERN, "4Gi"));
        assert!(matches(POD_PATTERN, "pod-12") && !matches(POD_PATTERN, "pod-"));
        assert!(matches(PERCENT_PATTERN, "25%") && matches(PERCENT_PATTERN, "0%"));
        assert!(!matches(PERCENT_PATTERN, "25.5%") && !matches(PERCENT_PATTERN, "25"));
    }

    #[test]
    fn name_patterns() {
        assert!(matches(DNS_LABEL_PATTERN, "topology-skew"));
        assert!(!matches(DNS_LABEL_PATTERN, "Topology") && !matches(DNS_LABEL_PATTERN, "a-"));
        assert!(matches(EVENT_NAME_PATTERN, "node-change") && !matches(EVENT_NAME_PATTERN, "12s"));
        assert!(matches(NODE_NAME_PATTERN, "ip-10-0-1-2.ec2.internal"));
        assert!(matches(ZONE_NAME_PATTERN, "ap-northeast-2a"));
    }

    #[test]
    fn every_pattern_has_a_description() {
        for p in [
            DNS_LABEL_PATTERN,
            NODE_NAME_PATTERN,
            ZONE_NAME_PATTERN,
            EVENT_NAME_PATTERN,
            DURATION_PATTERN,
            CPU_PATTERN,
            RATE_PATTERN,
            POD_PATTERN,
            HTTP_PATH_PATTERN,
            PERCENT_PATTERN,
        ] {
            assert!(describe_pattern(p).is_some(), "{p}");
        }
    }
}
