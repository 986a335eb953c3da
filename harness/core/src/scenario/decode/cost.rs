//! Builds `cost`: the price per GB of cross-zone bytes, 0.01 by default. The schema refuses a
//! negative price; a price that is not a finite number is refused here.

use super::super::diagnostic::Problems;
use super::super::format::CostSpec;
use super::super::model::Cost;
use super::super::path::FieldPath;

pub(super) fn build(spec: Option<&CostSpec>, problems: &mut Problems<'_>) -> Cost {
    let Some(price) = spec.and_then(|s| s.price_per_gb) else {
        return Cost::default();
    };
    if !price.is_finite() || price < 0.0 {
        problems.at(
            &FieldPath::root().key("cost").key("pricePerGb"),
            format!(
                "pricePerGb takes US dollars per GB of 0 or more, such as 0.01, found `{price}`"
            ),
        );
        return Cost::default();
    }
    Cost {
        price_per_gb: price,
    }
}
