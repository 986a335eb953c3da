//! Schema violations in words: what was expected (from the failing subschema: its pattern's
//! description, its constants or its types) and what the document has.

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value as Json;

use super::super::format::scalars::describe_pattern;
use super::super::suggest::closest;
use super::super::tree::render_json;
use super::{integer_format_range, schema};

/// The subschema holding the keyword that failed.
pub(super) fn failing_subschema(error: &ValidationError<'_>) -> Option<&'static Json> {
    let pointer = error.schema_path().as_str();
    let parent = &pointer[..pointer.rfind('/')?];
    schema().pointer(parent)
}

/// The `const` values of a `oneOf`/`anyOf` whose every branch is a constant (how `schemars`
/// writes an enum with documented variants).
pub(super) fn constant_options(error: &ValidationError<'_>) -> Option<Vec<&'static str>> {
    let branches = schema().pointer(error.schema_path().as_str())?.as_array()?;
    branches.iter().map(|b| b.get("const")?.as_str()).collect()
}

/// A value that is not one of a fixed set of strings.
pub(super) fn one_of_constants(instance: &Json, options: &[&str]) -> String {
    let listed = options.join(", ");
    match instance {
        Json::String(value) => {
            let suggestion = closest(value, options.iter().copied())
                .map(|o| format!("did you mean `{o}`? "))
                .unwrap_or_default();
            format!("unknown value `{value}`; {suggestion}expected one of: {listed}")
        }
        other => format!("expected one of: {listed}, found {}", found(other)),
    }
}

pub(super) fn message(error: &ValidationError<'_>, instance: &Json) -> String {
    let shown = render_json(instance);
    match error.kind() {
        ValidationErrorKind::Type { .. } => format!(
            "expected {}, found {}",
            failing_subschema(error).map_or_else(|| "another type".to_owned(), expected),
            found(instance)
        ),
        ValidationErrorKind::Enum { options } => {
            let options: Vec<&str> = options
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .collect();
            one_of_constants(instance, &options)
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!(
                "expected `{}`, found `{shown}`",
                render_json(expected_value)
            )
        }
        ValidationErrorKind::Pattern { pattern } => match describe_pattern(pattern) {
            Some(description) => format!("invalid value `{shown}`; expected {description}"),
            None => format!("invalid value `{shown}`; expected a value matching `{pattern}`"),
        },
        ValidationErrorKind::Minimum { limit } => {
            format!("{shown} is too small; the minimum is {limit}")
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("{shown} is too small; it must be more than {limit}")
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("{shown} is too large; the maximum is {limit}")
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("{shown} is too large; it must be less than {limit}")
        }
        ValidationErrorKind::MinItems { limit } => {
            format!(
                "needs at least {limit} {}",
                if *limit == 1 { "entry" } else { "entries" }
            )
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("`{shown}` is longer than {limit} characters")
        }
        ValidationErrorKind::MinLength { .. } => "must not be empty".to_owned(),
        _ => error.to_string(),
    }
}

/// The values a whole-number field takes: its own bounds, else its type's.
pub(super) struct IntegerRange {
    min: Json,
    max: Json,
    /// The value is above the type's maximum (else below its minimum).
    too_large: bool,
}

impl IntegerRange {
    /// `99999999999999999999999 is out of range: a whole number from 1 to 4294967295`, or, below
    /// the type's minimum, `-1 is too small; the minimum is 0`; `written` is the value as written.
    pub(super) fn message(&self, written: &str) -> String {
        if self.too_large {
            format!(
                "{written} is out of range: a whole number from {} to {}",
                self.min, self.max
            )
        } else {
            format!("{written} is too small; the minimum is {}", self.min)
        }
    }
}

/// The field's range when `error` is a whole number beyond the bounds of its field's integer
/// type (too large for a `u32`, say), not a bound the field sets itself: such a value cannot
/// be decoded.
pub(super) fn beyond_integer_type(error: &ValidationError<'_>) -> Option<IntegerRange> {
    let (limit, too_large) = match error.kind() {
        ValidationErrorKind::Maximum { limit } => (limit, true),
        ValidationErrorKind::Minimum { limit } => (limit, false),
        _ => return None,
    };
    let subschema = failing_subschema(error)?;
    let (type_min, type_max) = integer_format_range(subschema.get("format")?.as_str()?)?;
    let at_type_bound = if too_large {
        limit == &type_max
    } else {
        limit == &type_min
    };
    at_type_bound.then(|| IntegerRange {
        min: subschema.get("minimum").cloned().unwrap_or(type_min),
        max: subschema.get("maximum").cloned().unwrap_or(type_max),
        too_large,
    })
}

/// What a subschema accepts, in words.
fn expected(subschema: &Json) -> String {
    if let Some(description) = subschema
        .get("pattern")
        .and_then(Json::as_str)
        .and_then(describe_pattern)
    {
        return description.to_owned();
    }
    if let Some(options) = subschema.get("enum") {
        return format!("one of: {}", list(options));
    }
    let types: Vec<&str> = match subschema.get("type") {
        Some(Json::String(t)) => vec![t],
        Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).collect(),
        _ => return "another type".to_owned(),
    };
    let words: Vec<&str> = types
        .iter()
        .map(|t| match *t {
            "object" => "a mapping",
            "array" => "a sequence",
            "string" => "a string",
            "integer" => "a whole number",
            "number" => "a number",
            "boolean" => "true or false",
            other => other,
        })
        .collect();
    words.join(" or ")
}

/// What the document has, in words.
fn found(instance: &Json) -> String {
    match instance {
        Json::Null => "an empty value (null)".to_owned(),
        Json::Bool(b) => format!("boolean `{b}`"),
        Json::Number(n) if n.is_f64() => format!("number `{n}`"),
        Json::Number(n) => format!("whole number `{n}`"),
        Json::String(s) => format!("string `{s}`"),
        Json::Array(_) => "a sequence".to_owned(),
        Json::Object(_) => "a mapping".to_owned(),
    }
}

fn list(options: &Json) -> String {
    match options {
        Json::Array(items) => items.iter().map(render_json).collect::<Vec<_>>().join(", "),
        other => render_json(other).into_owned(),
    }
}
