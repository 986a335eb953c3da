//! The cross-zone traffic of two runs: the compared numbers (`crossZoneShare`,
//! `crossZoneBytes`, `crossZoneMonthlyUsd`) and the sentence for the header: `cross-zone bytes
//! −85 % (4.10 MB → 615 kB), about $0.46/month at this rate (base $3.07/month, −$2.61)`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Better;
use crate::measure::{bytes_text, usd_text};
use crate::report::{CrossZoneSummary, Summary};

/// Both runs' cross-zone bytes and their estimated monthly cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrossZoneDelta {
    /// Cross-zone bytes (both directions) of the base's load.
    pub base_bytes: u64,
    pub candidate_bytes: u64,
    /// `candidate / base − 1`; null when the base had none.
    pub bytes_change: Option<f64>,
    /// Each run's estimate at its own rate and price.
    pub base_monthly_usd: Option<f64>,
    pub candidate_monthly_usd: Option<f64>,
    /// The sentence the reports show.
    pub text: String,
}

/// The compared numbers, when either run measured its cross-zone traffic.
pub(super) fn rows(
    base: &Summary,
    candidate: &Summary,
) -> Vec<(String, Option<f64>, Option<f64>, Better)> {
    if base.cross_zone.is_none() && candidate.cross_zone.is_none() {
        return Vec::new();
    }
    let (b, c) = (base.cross_zone.as_ref(), candidate.cross_zone.as_ref());
    let field = |f: fn(&CrossZoneSummary) -> Option<f64>| (b.and_then(f), c.and_then(f));
    let (share, bytes, usd) = (
        field(|z| z.share),
        field(|z| Some(z.bytes as f64)),
        field(|z| z.estimated_monthly_usd),
    );
    vec![
        ("crossZoneShare".into(), share.0, share.1, Better::Lower),
        ("crossZoneBytes".into(), bytes.0, bytes.1, Better::Lower),
        ("crossZoneMonthlyUsd".into(), usd.0, usd.1, Better::Lower),
    ]
}

/// The header's sentence, when both runs measured their cross-zone traffic.
pub(super) fn delta(base: &Summary, candidate: &Summary) -> Option<CrossZoneDelta> {
    let (b, c) = (base.cross_zone.as_ref()?, candidate.cross_zone.as_ref()?);
    let bytes_change = (b.bytes > 0).then(|| c.bytes as f64 / b.bytes as f64 - 1.0);
    let change = match bytes_change {
        Some(ch) => format!("{} ", percent_change(ch)),
        None if c.bytes == 0 => "unchanged at 0 B ".to_owned(),
        None => String::new(),
    };
    let mut text = format!(
        "cross-zone bytes {change}({} → {})",
        bytes_text(b.bytes),
        bytes_text(c.bytes)
    );
    if let Some(usd) = c.estimated_monthly_usd {
        text.push_str(&format!(", about {}/month at this rate", usd_text(usd)));
        if let Some(was) = b.estimated_monthly_usd {
            let diff = usd - was;
            let sign = if diff < 0.0 { "−" } else { "+" };
            text.push_str(&format!(
                " (base {}/month, {sign}{})",
                usd_text(was),
                usd_text(diff.abs())
            ));
        }
    }
    if b.price_per_gb != c.price_per_gb {
        text.push_str(&format!(
            "; priced at ${}/GB in the base and ${}/GB in the candidate",
            b.price_per_gb, c.price_per_gb
        ));
    }
    Some(CrossZoneDelta {
        base_bytes: b.bytes,
        candidate_bytes: c.bytes,
        bytes_change,
        base_monthly_usd: b.estimated_monthly_usd,
        candidate_monthly_usd: c.estimated_monthly_usd,
        text,
    })
}

/// `−85 %`, `+12 %`, `±0 %`.
fn percent_change(change: f64) -> String {
    let pct = (change * 100.0).round();
    if pct == 0.0 {
        "±0 %".to_owned()
    } else if pct < 0.0 {
        format!("−{} %", -pct)
    } else {
        format!("+{pct} %")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::failing_summary;

    fn with_bytes(bytes: u64, seconds: f64) -> Summary {
        let mut s = failing_summary();
        let c = s.cross_zone.as_mut().unwrap();
        c.bytes = bytes;
        c.seconds = seconds;
        c.estimated_monthly_usd = crate::measure::monthly_cost_usd(bytes, seconds, 0.01);
        s
    }

    /// 4.1 MB → 615 kB over the same 40 s: −85 %; at $0.01/GB, 102,500 B/s is $2.66 a month,
    /// 15,375 B/s $0.40.
    #[test]
    fn the_sentence_gives_the_change_and_the_cost_at_this_rate() {
        let (base, candidate) = (with_bytes(4_100_000, 40.0), with_bytes(615_000, 40.0));
        let d = delta(&base, &candidate).unwrap();
        assert_eq!(
            d.text,
            "cross-zone bytes −85 % (4.10 MB → 615 kB), about $0.40/month at this rate (base \
             $2.66/month, −$2.26)"
        );
        assert!((d.bytes_change.unwrap() + 0.85).abs() < 1e-12);
        let r = rows(&base, &candidate);
        assert_eq!(
            r[1],
            (
                "crossZoneBytes".into(),
                Some(4_100_000.0),
                Some(615_000.0),
                Better::Lower
            )
        );
        let mut none = failing_summary();
        none.cross_zone = None;
        assert_eq!(delta(&none, &candidate), None);
        assert!(rows(&none, &none).is_empty());
        assert_eq!(rows(&none, &candidate).len(), 3);
    }
}
