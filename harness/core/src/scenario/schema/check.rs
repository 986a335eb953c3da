//! The structural check: every schema violation of a document, each turned into a located
//! problem, plus what the later stages need to know (what cannot be decoded, which unknown
//! fields to drop before decoding).

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde_json::Value as Json;

use super::super::diagnostic::Problems;
use super::super::format::scalars::describe_pattern;
use super::super::path::{FieldPath, Segment};
use super::super::suggest::closest;
use super::super::tree::render_json;
use super::messages::{
    beyond_integer_type, constant_options, failing_subschema, message, one_of_constants,
};
use super::validator;

/// What the structural check found besides the problems it reported.
#[derive(Debug, Default)]
pub(crate) struct Structure {
    /// Places whose problems make them impossible to decode (wrong type, missing field, value
    /// outside a fixed set): semantic checks skip whatever contains them.
    broken: Vec<FieldPath>,
    /// Places with any structural problem (decoding failures there are not reported again).
    troubled: Vec<FieldPath>,
    /// Unknown fields (`(mapping path, key)`), to be removed before decoding so that the rest
    /// of their section is still checked.
    pub unknown_fields: Vec<(FieldPath, String)>,
}

impl Structure {
    /// Whether something at or inside `path` cannot be decoded.
    pub fn is_broken(&self, path: &FieldPath) -> bool {
        self.broken.iter().any(|b| b.starts_with(path))
    }

    /// Whether something at or inside `path` had a structural problem.
    pub fn is_troubled(&self, path: &FieldPath) -> bool {
        self.troubled.iter().any(|b| b.starts_with(path))
    }
}

/// Checks `doc` against the schema, reporting every violation. A misspelt required field is
/// reported once, as an unknown field with a suggestion, not also as a missing one.
pub(crate) fn check(doc: &Json, problems: &mut Problems<'_>) -> Structure {
    let errors: Vec<ValidationError<'_>> = validator().iter_errors(doc).collect();
    let missing: Vec<(FieldPath, String)> = errors
        .iter()
        .filter_map(|e| match e.kind() {
            ValidationErrorKind::Required { property } => {
                Some((field_path(e.instance_path()), property.as_str()?.to_owned()))
            }
            _ => None,
        })
        .collect();
    let mut reporter = Reporter {
        problems,
        structure: Structure::default(),
        missing,
        misspelt: Vec::new(),
    };
    for error in errors
        .iter()
        .filter(|e| matches!(e.kind(), ValidationErrorKind::AdditionalProperties { .. }))
    {
        reporter.report(error);
    }
    for error in errors
        .iter()
        .filter(|e| !matches!(e.kind(), ValidationErrorKind::AdditionalProperties { .. }))
    {
        reporter.report(error);
    }
    reporter.structure
}

fn field_path(location: &jsonschema::paths::Location) -> FieldPath {
    location
        .iter()
        .map(|segment| match segment {
            LocationSegment::Property(key) => Segment::Key(key.into_owned()),
            LocationSegment::Index(i) => Segment::Index(i),
        })
        .collect()
}

/// Reports problems and records what they mean for decoding.
struct Reporter<'p, 't> {
    problems: &'p mut Problems<'t>,
    structure: Structure,
    /// Required fields not present: `(mapping path, field)`.
    missing: Vec<(FieldPath, String)>,
    /// Missing required fields already reported as a misspelling.
    misspelt: Vec<(FieldPath, String)>,
}

impl Reporter<'_, '_> {
    fn report(&mut self, error: &ValidationError<'_>) {
        let path = field_path(error.instance_path());
        let instance = error.instance().as_ref();
        let message = match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                self.unknown_fields(error, &path, unexpected);
                return;
            }
            ValidationErrorKind::PropertyNames { error: inner } => {
                let key = render_json(inner.instance()).into_owned();
                let expected = match inner.kind() {
                    ValidationErrorKind::Pattern { pattern } => {
                        describe_pattern(pattern).map(str::to_owned)
                    }
                    _ => None,
                }
                .unwrap_or_else(|| inner.to_string());
                self.problems.at_key(
                    &path,
                    &key,
                    format!("invalid name `{key}`; expected {expected}"),
                );
                self.structure.troubled.push(path);
                return;
            }
            ValidationErrorKind::Required { property } => {
                let field = render_json(property).into_owned();
                if !self.misspelt.contains(&(path.clone(), field.clone())) {
                    self.problems.missing(&path, &field);
                }
                let field_path = path.key(&field);
                self.structure.broken.push(field_path.clone());
                self.structure.troubled.push(field_path);
                return;
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                if let Some(options) = constant_options(error) {
                    one_of_constants(instance, &options)
                } else if let Some(best) = context
                    .iter()
                    .filter(|c| !c.is_empty())
                    .min_by_key(|c| c.len())
                {
                    best.iter().for_each(|e| self.report(e));
                    return;
                } else {
                    error.to_string()
                }
            }
            _ => match beyond_integer_type(error) {
                // The value does not fit its field's type, so it cannot be decoded either.
                Some(range) => {
                    self.structure.broken.push(path.clone());
                    let written = match self.problems.written_number(&path) {
                        Some(digits) => digits.to_owned(),
                        None => render_json(instance).into_owned(),
                    };
                    range.message(&written)
                }
                None => message(error, instance),
            },
        };
        if breaks_decoding(error.kind()) {
            self.structure.broken.push(path.clone());
        }
        self.structure.troubled.push(path.clone());
        self.problems.at(&path, message);
    }

    fn unknown_fields(
        &mut self,
        error: &ValidationError<'_>,
        path: &FieldPath,
        unexpected: &[String],
    ) {
        let allowed: Vec<&str> = failing_subschema(error)
            .and_then(|s| s.get("properties"))
            .and_then(Json::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        for key in unexpected {
            let suggestion = match closest(key, allowed.iter().copied()) {
                Some(field) => {
                    let pair = (path.clone(), field.to_owned());
                    if self.missing.contains(&pair) {
                        self.misspelt.push(pair);
                    }
                    format!("did you mean `{field}`? ")
                }
                None => String::new(),
            };
            let message = format!(
                "unknown field `{key}`; {suggestion}expected one of: {}",
                allowed.join(", ")
            );
            self.problems.at_key(path, key, message);
            self.structure
                .unknown_fields
                .push((path.clone(), key.clone()));
        }
    }
}

/// Whether a problem of this kind leaves a value that cannot be decoded into its type.
fn breaks_decoding(kind: &ValidationErrorKind) -> bool {
    !matches!(
        kind,
        ValidationErrorKind::Pattern { .. }
            | ValidationErrorKind::Minimum { .. }
            | ValidationErrorKind::ExclusiveMinimum { .. }
            | ValidationErrorKind::Maximum { .. }
            | ValidationErrorKind::ExclusiveMaximum { .. }
            | ValidationErrorKind::MaxLength { .. }
            | ValidationErrorKind::MinLength { .. }
    )
}
