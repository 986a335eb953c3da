// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at quantity.go @009f4971a05d, suffix.go @1402b859889c (suffix table only)).
// staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (`parseQuantityString`,
// `ParseQuantity`, `ScaledValue`/`MilliValue`) and suffix.go (the suffix table).
//! Kubernetes resource quantities ("4", "3500m", "1.5", "2Ki", "1e3") read as CPU millicores
//! the way `Quantity.MilliValue()` reports them.
//!
//! Grammar (upstream's scanner): optional sign, digits with an optional `.` and fraction
//! (`"5."` and `".5"` are accepted, a bare sign reads as zero), then a suffix: a decimal SI
//! suffix (`n u m "" k M G T P E`), a binary SI suffix (`Ki Mi Gi Ti Pi Ei`) or a decimal
//! exponent (`e3`, `E-2`). Upstream stores the value exactly, rounding non-zero magnitudes up
//! to the next nano, and `MilliValue()` is `ceil(value * 1000)`; this parser computes the
//! same millicore number with exact integer arithmetic.

use thiserror::Error;

/// Why a quantity string was rejected (upstream `ErrFormatWrong` / `ErrSuffix` / `ErrNumeric`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum QuantityError {
    #[error("quantity {0:?} is not of the form <number><suffix> (e.g. \"4\", \"3500m\", \"1.5\")")]
    Format(String),
    #[error(
        "quantity {0:?} has an unknown suffix (expected one of n u m k M G T P E Ki Mi Gi Ti Pi Ei or an exponent like e3)"
    )]
    Suffix(String),
    #[error("quantity {0:?} is too large")]
    Overflow(String),
}

/// The pieces upstream's scanner splits a quantity into.
struct Scanned<'a> {
    positive: bool,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

fn scan(s: &str) -> Result<Scanned<'_>, QuantityError> {
    let bytes = s.as_bytes();
    let end = bytes.len();
    let mut pos = 0;
    let mut positive = true;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    // Leading zeros are dropped; running out of input here means the value is zero.
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Scanned {
            positive,
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let num_start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    let num = &s[num_start..pos];
    let mut denom = "";
    if pos < end && bytes[pos] == b'.' {
        pos += 1;
        let denom_start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[denom_start..pos];
    }
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && (bytes[pos] == b'-' || bytes[pos] == b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError::Format(s.to_owned()));
    }
    Ok(Scanned {
        positive,
        num,
        denom,
        suffix: &s[suffix_start..],
    })
}

/// `(base, exponent)` of a suffix: value = number * base^exponent.
fn interpret_suffix(suffix: &str) -> Option<(u32, i32)> {
    let decimal = |e| Some((10, e));
    let binary = |e| Some((2, e));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        s if s.len() > 1 && (s.starts_with('e') || s.starts_with('E')) => {
            s[1..].parse::<i32>().ok().and_then(decimal)
        }
        _ => None,
    }
}

/// Parses a quantity and returns `MilliValue()`: the value in thousandths, rounded up.
/// Negative values follow upstream: the magnitude is first rounded up to a whole nano, then
/// the millis are rounded towards positive infinity.
pub fn parse_cpu_millis(s: &str) -> Result<i64, QuantityError> {
    if s.is_empty() {
        return Err(QuantityError::Format(s.to_owned()));
    }
    let scanned = scan(s)?;
    let (base, exponent) =
        interpret_suffix(scanned.suffix).ok_or_else(|| QuantityError::Suffix(s.to_owned()))?;
    let overflow = || QuantityError::Overflow(s.to_owned());
    let digits = format!("{}{}", scanned.num, scanned.denom);
    let digits = digits.trim_start_matches('0');
    if digits.len() > 36 {
        return Err(overflow());
    }
    let mantissa: u128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| overflow())?
    };
    // value = mantissa * 10^(dec_exp) * 2^(bin_exp)
    let frac_len = i32::try_from(scanned.denom.len()).map_err(|_| overflow())?;
    let (dec_exp, bin_exp) = if base == 10 {
        (exponent - frac_len, 0)
    } else {
        (-frac_len, exponent)
    };
    let scaled = mantissa
        .checked_shl(bin_exp as u32)
        .filter(|v| v >> bin_exp == mantissa)
        .ok_or_else(overflow)?;
    let millis = if scanned.positive {
        // ceil(value * 10^3)
        scale_pow10_ceil(scaled, dec_exp + 3).ok_or_else(overflow)?
    } else {
        // magnitude rounded up to nanos, then -floor(nanos / 10^6)
        let nanos = scale_pow10_ceil(scaled, dec_exp + 9).ok_or_else(overflow)?;
        nanos / 1_000_000
    };
    let millis = i64::try_from(millis).map_err(|_| overflow())?;
    Ok(if scanned.positive { millis } else { -millis })
}

/// `value * 10^exp` for a non-negative value, rounding a fractional result up.
fn scale_pow10_ceil(value: u128, exp: i32) -> Option<u128> {
    if exp >= 0 {
        let factor = 10u128.checked_pow(exp.unsigned_abs())?;
        value.checked_mul(factor)
    } else {
        let Some(divisor) = 10u128.checked_pow(exp.unsigned_abs()) else {
            // The divisor exceeds any representable value: the result is below one.
            return Some(u128::from(value != 0));
        };
        Some(value / divisor + u128::from(!value.is_multiple_of(divisor)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_milli_forms() {
        assert_eq!(parse_cpu_millis("4"), Ok(4000));
        assert_eq!(parse_cpu_millis("3500m"), Ok(3500));
        assert_eq!(parse_cpu_millis("1.5"), Ok(1500));
        assert_eq!(parse_cpu_millis("0"), Ok(0));
        assert_eq!(parse_cpu_millis("+2"), Ok(2000));
        assert_eq!(parse_cpu_millis("007"), Ok(7000));
    }

    #[test]
    fn upstream_number_shapes() {
        // <number> ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
        assert_eq!(parse_cpu_millis(".5"), Ok(500));
        assert_eq!(parse_cpu_millis("5."), Ok(5000));
        assert_eq!(parse_cpu_millis("1.G"), Ok(1_000_000_000_000));
        // upstream's scanner reads a bare sign as zero
        assert_eq!(parse_cpu_millis("-"), Ok(0));
    }

    #[test]
    fn sub_milli_values_round_up_like_milli_value() {
        assert_eq!(parse_cpu_millis("0.1m"), Ok(1));
        assert_eq!(parse_cpu_millis("100u"), Ok(1));
        assert_eq!(parse_cpu_millis("1n"), Ok(1));
        assert_eq!(parse_cpu_millis("1.0005"), Ok(1001));
        assert_eq!(parse_cpu_millis("3999999n"), Ok(4));
    }

    #[test]
    fn decimal_binary_and_exponent_suffixes() {
        assert_eq!(parse_cpu_millis("2k"), Ok(2_000_000));
        assert_eq!(parse_cpu_millis("1Ki"), Ok(1_024_000));
        assert_eq!(parse_cpu_millis("1.5Ki"), Ok(1_536_000));
        assert_eq!(parse_cpu_millis("1e3"), Ok(1_000_000));
        assert_eq!(parse_cpu_millis("2E-3"), Ok(2));
        assert_eq!(parse_cpu_millis("15e-1"), Ok(1500));
        // "E" alone is exa, not an exponent
        assert_eq!(
            parse_cpu_millis("1E"),
            Err(QuantityError::Overflow("1E".into()))
        );
    }

    #[test]
    fn negative_values_round_towards_positive_infinity() {
        assert_eq!(parse_cpu_millis("-1"), Ok(-1000));
        assert_eq!(parse_cpu_millis("-1500m"), Ok(-1500));
        assert_eq!(parse_cpu_millis("-0.5m"), Ok(0));
    }

    #[test]
    fn rejects_malformed_input() {
        assert_eq!(
            parse_cpu_millis(""),
            Err(QuantityError::Format(String::new()))
        );
        assert_eq!(
            parse_cpu_millis("abc"),
            Err(QuantityError::Format("abc".into()))
        );
        assert_eq!(
            parse_cpu_millis("1 m"),
            Err(QuantityError::Format("1 m".into()))
        );
        assert_eq!(
            parse_cpu_millis("1.5.5"),
            Err(QuantityError::Format("1.5.5".into()))
        );
        assert_eq!(
            parse_cpu_millis("1Qi"),
            Err(QuantityError::Format("1Qi".into()))
        );
        assert_eq!(
            parse_cpu_millis("1i"),
            Err(QuantityError::Suffix("1i".into()))
        );
        assert_eq!(
            parse_cpu_millis("1e"),
            Err(QuantityError::Suffix("1e".into()))
        );
        assert_eq!(
            parse_cpu_millis("1m3"),
            Err(QuantityError::Suffix("1m3".into()))
        );
        assert_eq!(
            parse_cpu_millis("1Kib"),
            Err(QuantityError::Format("1Kib".into()))
        );
    }

    // The `invalid` list of TestQuantityParse in upstream quantity_test.go.
    #[test]
    fn upstream_invalid_quantities() {
        for bad in [
            "1.1.M",
            "1+1.0M",
            "0.1mi",
            "0.1am",
            "aoeu",
            ".5i",
            "1i",
            "-3.01i",
            "-3.01e-",
            "1e4294967297",
            " 1",
            "1 ",
        ] {
            assert!(parse_cpu_millis(bad).is_err(), "{bad:?} parsed");
        }
    }

    // Upstream's scanner reads a missing number as 0, so a bare suffix is a valid zero there.
    #[test]
    fn bare_suffix_is_zero_like_upstream() {
        assert_eq!(parse_cpu_millis("m"), Ok(0));
        assert_eq!(parse_cpu_millis("Ki"), Ok(0));
    }

    #[test]
    fn huge_values_overflow_instead_of_wrapping() {
        assert!(matches!(
            parse_cpu_millis("1e40"),
            Err(QuantityError::Overflow(_))
        ));
        assert!(matches!(
            parse_cpu_millis("99999999999999999999"),
            Err(QuantityError::Overflow(_))
        ));
    }
}
