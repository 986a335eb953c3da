//! Usage errors as clap reports them, with the harness's own tips: an unknown flag on a
//! command that runs a scenario (`harness run FILE --duration 10s`) is most often a scenario
//! value, which `--set PATH=VALUE` changes, not something to pass after `--` as clap suggests.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Subcommands that take a scenario file and `--set`.
const WITH_SET: [&str; 2] = ["run", "plan"];

/// Replaces clap's tips of an unknown flag given to `run` or `plan` (in `argv`, the command
/// line without the program) with one pointing at `--set`; other errors are left as they are.
pub fn with_tips(mut error: clap::Error, argv: &[String]) -> clap::Error {
    if error.kind() != ErrorKind::UnknownArgument
        || !argv.first().is_some_and(|s| WITH_SET.contains(&s.as_str()))
    {
        return error;
    }
    let Some(ContextValue::String(flag)) = error.get(ContextKind::InvalidArg).cloned() else {
        return error;
    };
    // `--seed -1`: a negative number after an option is read as a flag of its own.
    let option_before = argv
        .iter()
        .position(|a| *a == flag)
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| argv.get(i))
        .filter(|prev| prev.starts_with("--") && !prev.contains('='));
    if let Some(option) = option_before.filter(|_| is_negative_number(&flag)) {
        error.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![negative_tip(option, &flag).into()]),
        );
        return error;
    }
    // `--duration 10s`: the word after the flag is most likely its value.
    let next = argv
        .iter()
        .position(|a| *a == flag)
        .and_then(|i| argv.get(i + 1))
        .filter(|v| !v.starts_with('-'));
    let flag = match (flag.contains('='), next) {
        (false, Some(value)) => format!("{flag}={value}"),
        _ => flag,
    };
    let tip = set_tip(&flag);
    error.insert(
        ContextKind::Suggested,
        ContextValue::StyledStrs(vec![tip.into()]),
    );
    error
}

/// `-1`, `-0.5`.
fn is_negative_number(word: &str) -> bool {
    word.strip_prefix('-')
        .is_some_and(|rest| !rest.is_empty() && rest.parse::<f64>().is_ok())
}

/// The tip for a negative number given to `option`.
fn negative_tip(option: &str, value: &str) -> String {
    format!(
        "`{option} {value}`: {option} takes a number of zero or more (a negative number reads as a flag of its own), e.g. `{option} 7`"
    )
}

/// The tip for `flag` (`--duration`, `--request-timeout=3s`).
fn set_tip(flag: &str) -> String {
    let (name, value) = match flag.trim_start_matches('-').split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (flag.trim_start_matches('-'), None),
    };
    let key = camel_case(name);
    let value = value.unwrap_or("VALUE");
    match harness_core::scenario::paths_named(&key).as_slice() {
        [] => "to change a value of the scenario for this run, use `--set PATH=VALUE` (repeatable; e.g. `--set load.duration=10s`)".to_string(),
        [path] => format!(
            "to change the scenario's `{path}` for this run, use `--set {path}={value}`"
        ),
        paths => format!(
            "to change a scenario value for this run, use `--set PATH={value}` with one of: {}",
            paths.join(", ")
        ),
    }
}

/// `request-timeout` → `requestTimeout`.
fn camel_case(kebab: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in kebab.chars() {
        if c == '-' || c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_scenario_fields_at_set() {
        assert_eq!(
            set_tip("--duration"),
            "to change the scenario's `load.duration` for this run, use `--set load.duration=VALUE`"
        );
        assert_eq!(
            set_tip("--request-timeout=3s"),
            "to change the scenario's `load.requestTimeout` for this run, use `--set load.requestTimeout=3s`"
        );
        assert!(set_tip("--frobnicate").contains("`--set PATH=VALUE`"));
    }

    #[test]
    fn a_negative_number_after_an_option_is_named_as_such() {
        assert!(is_negative_number("-1") && is_negative_number("-0.5"));
        assert!(
            !is_negative_number("-x") && !is_negative_number("-") && !is_negative_number("--set")
        );
        let argv: Vec<String> = ["run", "s.yaml", "--seed", "-1"].map(String::from).to_vec();
        let error = <crate::Cli as clap::Parser>::try_parse_from(
            std::iter::once("harness".to_owned()).chain(argv.clone()),
        )
        .unwrap_err();
        let text = with_tips(error, &argv).to_string();
        assert!(
            text.contains("`--seed -1`: --seed takes a number of zero or more"),
            "{text}"
        );
        assert!(!text.contains("--set PATH=VALUE"), "{text}");
    }
}
