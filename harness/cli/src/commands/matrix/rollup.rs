//! The roll-up of `harness run --matrix`: one row per cell — its values, its verdict (passed,
//! failed, invalid, infrastructure, interrupted, or not run), the expectations that failed, how
//! it compares with the first cell, its exit code and why — and the line that says which cell
//! made the matrix's exit code. Printed after the last cell and written next to the cells'
//! directories as `matrix.md` and `matrix.json` (`harness-matrix/v1`).
//!
//! The exit code is decided as it always was (`run`): the worst of the cells' own exit codes,
//! then of their comparisons with the first cell, the earliest on a tie; a cell that cannot be
//! started at all (or a comparison that cannot be made) stops the matrix with its own code.

use serde::Serialize;

/// The `schema` of matrix.json.
pub const SCHEMA: &str = "harness-matrix/v1";

/// How the exit code is chosen, in words (matrix.json's `exit.rule`, matrix.md's last line).
pub const RULE: &str = "the matrix exits with the worst exit code of its cells' runs, then of their comparisons with the first cell, the earliest on a tie; a cell that cannot be started, or a comparison that cannot be made, stops the matrix with its own code";

/// A cell's own run, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum CellVerdict {
    /// Every expectation held (exit 0).
    Passed,
    /// An expectation failed (exit 1).
    Failed,
    /// The cell's input was refused (exit 2).
    Invalid,
    /// Something outside the input broke, or the self-audit found the numbers do not
    /// reconcile (exit 3).
    Infrastructure,
    /// Ctrl-C or SIGTERM (exit 3); the matrix runs no further cell.
    Interrupted,
    /// An earlier cell stopped the matrix.
    NotRun,
}

impl CellVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            CellVerdict::Passed => "passed",
            CellVerdict::Failed => "failed",
            CellVerdict::Invalid => "invalid",
            CellVerdict::Infrastructure => "infrastructure",
            CellVerdict::Interrupted => "interrupted",
            CellVerdict::NotRun => "not run",
        }
    }

    /// The exit code of the run alone; `None` when it did not run.
    pub fn code(self) -> Option<i32> {
        match self {
            CellVerdict::Passed => Some(0),
            CellVerdict::Failed => Some(1),
            CellVerdict::Invalid => Some(2),
            CellVerdict::Infrastructure | CellVerdict::Interrupted => Some(3),
            CellVerdict::NotRun => None,
        }
    }
}

/// One axis's value in a cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AxisValue {
    pub path: String,
    pub value: String,
}

/// A cell's comparison with the first cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonRow {
    /// `ok`, `regression`, `incomparable`, or `error` (the comparison could not be made).
    pub verdict: String,
    /// 0 ok, 1 regression, 2 incomparable, 2 or 3 for an error.
    pub exit: i32,
    /// The regressions, the reason the runs cannot be compared, or the error.
    pub detail: Option<String>,
}

/// One cell of the roll-up.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CellRow {
    /// 1-based, as the listing before the runs numbers the cells.
    pub number: usize,
    /// The cell's directory, under the matrix's.
    pub name: String,
    pub values: Vec<AxisValue>,
    pub verdict: CellVerdict,
    /// The expectations that were evaluated and did not hold.
    pub failed_expectations: Vec<String>,
    /// Why the run did not pass (`1 of 3 expectations failed`, the error, `interrupted`); null
    /// when it passed or did not run.
    pub reason: Option<String>,
    /// Against the first cell; null for the first cell and for cells not compared.
    pub comparison: Option<ComparisonRow>,
    /// The cell's part of the exit code: the worse of its run and its comparison; null when
    /// it did not run.
    pub exit: Option<i32>,
}

impl CellRow {
    /// A cell before (or without) its run.
    pub fn not_run(number: usize, name: &str, values: &[(String, String)]) -> Self {
        CellRow {
            number,
            name: name.to_owned(),
            values: values
                .iter()
                .map(|(path, value)| AxisValue {
                    path: path.clone(),
                    value: value.clone(),
                })
                .collect(),
            verdict: CellVerdict::NotRun,
            failed_expectations: Vec::new(),
            reason: None,
            comparison: None,
            exit: None,
        }
    }

    /// Records the cell's own run.
    pub fn ran(&mut self, verdict: CellVerdict, failed: Vec<String>, reason: Option<String>) {
        self.verdict = verdict;
        self.failed_expectations = failed;
        self.reason = reason;
        self.exit = verdict.code();
    }

    /// Records the comparison with the first cell.
    pub fn compared(&mut self, comparison: ComparisonRow) {
        self.exit = Some(self.exit.unwrap_or(0).max(comparison.exit));
        self.comparison = Some(comparison);
    }

    /// The reason column: the run's reason, then the comparison's, when either has one.
    fn why(&self) -> Option<String> {
        let compared = self
            .comparison
            .as_ref()
            .filter(|c| c.exit > 0)
            .map(|c| match &c.detail {
                Some(detail) => format!("{}: {detail}", c.verdict),
                None => c.verdict.clone(),
            });
        let parts: Vec<String> = self.reason.iter().cloned().chain(compared).collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Where the exit code came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    Run,
    Comparison,
}

/// A cell that stopped the matrix: it could not be started, or its comparison not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    /// Index into the cells.
    pub cell: usize,
    pub by: Source,
}

/// The matrix's exit code and the cell it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExitLine {
    pub code: i32,
    /// The deciding cell's directory name; null for exit 0.
    pub cell: Option<String>,
    /// Its run or its comparison; null for exit 0.
    pub from: Option<Source>,
    /// What happened there, in words.
    pub reason: String,
    /// [`RULE`].
    pub rule: &'static str,
}

impl ExitLine {
    /// `exit 1: from cell ingress.version-v0.11 (expectation 'p99' failed)`.
    pub fn text(&self) -> String {
        match &self.cell {
            Some(cell) => format!("exit {}: from cell {cell} ({})", self.code, self.reason),
            None => format!("exit {}: {}", self.code, self.reason),
        }
    }
}

/// The whole roll-up, as matrix.json has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rollup {
    pub schema: &'static str,
    pub scenario: String,
    /// The scenario file, as given.
    pub file: String,
    /// The axes' paths, in the order given.
    pub axes: Vec<String>,
    pub cells: Vec<CellRow>,
    pub exit: ExitLine,
}

impl Rollup {
    pub fn new(
        scenario: &str,
        file: &str,
        axes: Vec<String>,
        cells: Vec<CellRow>,
        stop: Option<Stop>,
    ) -> Self {
        let exit = decide(&cells, stop);
        Rollup {
            schema: SCHEMA,
            scenario: scenario.to_owned(),
            file: file.to_owned(),
            axes,
            cells,
            exit,
        }
    }
}

/// Which cell made the exit code, by [`RULE`].
pub fn decide(cells: &[CellRow], stop: Option<Stop>) -> ExitLine {
    let base = cells.first().map_or("", |c| c.name.as_str());
    let said = |index: usize, by: Source| -> (i32, String) {
        let cell = &cells[index];
        match by {
            Source::Run => {
                let reason = match (cell.verdict, cell.failed_expectations.as_slice()) {
                    (CellVerdict::Failed, [one]) => format!("expectation '{one}' failed"),
                    (CellVerdict::Failed, many) if !many.is_empty() => format!(
                        "expectations {} failed",
                        many.iter()
                            .map(|n| format!("'{n}'"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    _ => cell
                        .reason
                        .clone()
                        .unwrap_or_else(|| cell.verdict.as_str().to_owned()),
                };
                (cell.verdict.code().unwrap_or(0), reason)
            }
            Source::Comparison => {
                let Some(c) = &cell.comparison else {
                    return (0, String::new());
                };
                let against = match c.verdict.as_str() {
                    "regression" => format!("regression against {base}"),
                    "incomparable" => format!("not comparable with {base}"),
                    other => format!("comparison with {base}: {other}"),
                };
                let reason = match &c.detail {
                    Some(detail) => format!("{against}: {detail}"),
                    None => against,
                };
                (c.exit, reason)
            }
        }
    };
    let chosen = match stop {
        Some(stop) => Some((stop.cell, stop.by)),
        None => {
            let mut worst: Option<(usize, Source, i32)> = None;
            let runs = cells
                .iter()
                .enumerate()
                .filter_map(|(i, c)| Some((i, Source::Run, c.verdict.code()?)));
            let comparisons = cells
                .iter()
                .enumerate()
                .filter_map(|(i, c)| Some((i, Source::Comparison, c.comparison.as_ref()?.exit)));
            for (i, by, code) in runs.chain(comparisons) {
                if code > worst.map_or(0, |w| w.2) {
                    worst = Some((i, by, code));
                }
            }
            worst.map(|(i, by, _)| (i, by))
        }
    };
    match chosen {
        Some((index, by)) => {
            let (code, mut reason) = said(index, by);
            if stop.is_some() {
                reason.push_str("; the matrix stopped there");
            }
            ExitLine {
                code,
                cell: Some(cells[index].name.clone()),
                from: Some(by),
                reason,
                rule: RULE,
            }
        }
        None => ExitLine {
            code: 0,
            cell: None,
            from: None,
            reason: if cells.len() > 1 {
                format!("every cell passed and none regressed against {base}")
            } else {
                "the cell passed".to_owned()
            },
            rule: RULE,
        },
    }
}

/// The column headers and each cell's row, as text.
fn table(rollup: &Rollup, link: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let base = rollup.cells.first().map_or(1, |c| c.number);
    let mut header = vec!["#".to_owned(), "cell".to_owned()];
    header.extend(rollup.axes.iter().cloned());
    header.extend(
        [
            "verdict",
            "failed expectations",
            &format!("vs cell {base}"),
            "exit",
            "reason",
        ]
        .map(str::to_owned),
    );
    let rows = rollup
        .cells
        .iter()
        .map(|cell| {
            let mut row = vec![
                cell.number.to_string(),
                if link {
                    format!("[{0}]({0}/report.html)", cell.name)
                } else {
                    cell.name.clone()
                },
            ];
            row.extend(cell.values.iter().map(|v| v.value.clone()));
            row.push(cell.verdict.as_str().to_owned());
            row.push(if cell.failed_expectations.is_empty() {
                "-".to_owned()
            } else {
                cell.failed_expectations.join(", ")
            });
            row.push(match (&cell.comparison, cell.number == base) {
                (Some(c), _) => c.verdict.clone(),
                (None, true) if cell.verdict != CellVerdict::NotRun => "(base)".to_owned(),
                (None, _) => "-".to_owned(),
            });
            row.push(cell.exit.map_or_else(|| "-".to_owned(), |c| c.to_string()));
            row.push(cell.why().unwrap_or_else(|| "-".to_owned()));
            row
        })
        .collect();
    (header, rows)
}

/// The roll-up for the terminal: aligned columns, then the exit line.
pub fn render_text(rollup: &Rollup) -> String {
    let (header, rows) = table(rollup, false);
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let last = cells.len() - 1;
        let mut text = String::from(" ");
        for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            text.push(' ');
            text.push_str(cell);
            if i < last {
                text.push_str(&" ".repeat(width - cell.chars().count() + 1));
            }
        }
        text.push('\n');
        text
    };
    let mut out = format!(
        "matrix of {}: {} {}\n",
        rollup.file,
        rollup.cells.len(),
        if rollup.cells.len() == 1 {
            "cell"
        } else {
            "cells"
        }
    );
    out.push_str(&line(&header));
    for row in &rows {
        out.push_str(&line(row));
    }
    out.push_str(&rollup.exit.text());
    out.push('\n');
    out
}

/// matrix.md: the same table, each cell linked to its report, the exit line and the rule.
pub fn render_markdown(rollup: &Rollup) -> String {
    let (header, rows) = table(rollup, true);
    let escape = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    let row = |cells: &[String]| {
        let inner: Vec<String> = cells.iter().map(|c| escape(c)).collect();
        format!("| {} |\n", inner.join(" | "))
    };
    let mut out = format!(
        "# Matrix: {}\n\n`{}`, {} {} over {}.\n\n",
        rollup.scenario,
        rollup.file,
        rollup.cells.len(),
        if rollup.cells.len() == 1 {
            "cell"
        } else {
            "cells"
        },
        rollup
            .axes
            .iter()
            .map(|a| format!("`{a}`"))
            .collect::<Vec<_>>()
            .join(" × ")
    );
    out.push_str(&row(&header));
    out.push_str(&row(&vec!["---".to_owned(); header.len()]));
    for cells in &rows {
        out.push_str(&row(cells));
    }
    out.push_str(&format!(
        "\n**{}**\n\nHow: {}.\n",
        escape(&rollup.exit.text()),
        RULE
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(v: &str) -> Vec<(String, String)> {
        vec![("ingress.version".to_owned(), v.to_owned())]
    }

    /// Three cells: the base passed; v0.11 failed `p99` and regressed against the base; v0.16
    /// passed but its comparison regressed.
    fn three() -> Vec<CellRow> {
        let mut base = CellRow::not_run(1, "ingress.version-v0.6", &values("v0.6"));
        base.ran(CellVerdict::Passed, Vec::new(), None);
        let mut failed = CellRow::not_run(2, "ingress.version-v0.11", &values("v0.11"));
        failed.ran(
            CellVerdict::Failed,
            vec!["p99".to_owned()],
            Some("1 of 2 expectations failed".to_owned()),
        );
        failed.compared(ComparisonRow {
            verdict: "regression".to_owned(),
            exit: 1,
            detail: Some("errorRate 0.0100 → 0.0500 (+0.0400 > 0.0100)".to_owned()),
        });
        let mut regressed = CellRow::not_run(3, "ingress.version-v0.16", &values("v0.16"));
        regressed.ran(CellVerdict::Passed, Vec::new(), None);
        regressed.compared(ComparisonRow {
            verdict: "regression".to_owned(),
            exit: 1,
            detail: Some("firstPositionsShare 0.20 → 0.31 (+0.11 > 0.02)".to_owned()),
        });
        vec![base, failed, regressed]
    }

    /// The roll-up of [`three`], uninterrupted.
    fn three_cells() -> Rollup {
        Rollup::new(
            "hot-podding",
            "scenarios/x.yaml",
            vec!["ingress.version".to_owned()],
            three(),
            None,
        )
    }

    #[test]
    fn the_earliest_worst_run_decides_before_any_comparison() {
        let rollup = three_cells();
        assert_eq!(
            rollup.exit.text(),
            "exit 1: from cell ingress.version-v0.11 (expectation 'p99' failed)"
        );
        assert_eq!(rollup.exit.from, Some(Source::Run));
        assert_eq!(
            render_text(&rollup),
            "matrix of scenarios/x.yaml: 3 cells
  #  cell                   ingress.version  verdict  failed expectations  vs cell 1   exit  reason
  1  ingress.version-v0.6   v0.6             passed   -                    (base)      0     -
  2  ingress.version-v0.11  v0.11            failed   p99                  regression  1     1 of 2 expectations failed; regression: errorRate 0.0100 → 0.0500 (+0.0400 > 0.0100)
  3  ingress.version-v0.16  v0.16            passed   -                    regression  1     regression: firstPositionsShare 0.20 → 0.31 (+0.11 > 0.02)
exit 1: from cell ingress.version-v0.11 (expectation 'p99' failed)
"
        );
    }

    #[test]
    fn a_worse_comparison_beats_a_failed_run_and_a_later_one_does_not_beat_an_equal() {
        let mut cells = three();
        // v0.16 cannot be compared (exit 2): worse than v0.11's failed expectation.
        cells[2].comparison = None;
        cells[2].exit = Some(0);
        cells[2].compared(ComparisonRow {
            verdict: "incomparable".to_owned(),
            exit: 2,
            detail: Some("the expectations differ".to_owned()),
        });
        let exit = decide(&cells, None);
        assert_eq!(
            exit.text(),
            "exit 2: from cell ingress.version-v0.16 (not comparable with ingress.version-v0.6: the expectations differ)"
        );
        assert_eq!(exit.from, Some(Source::Comparison));
        assert_eq!(cells[2].exit, Some(2));
        // Two runs with the same code: the earlier one decides.
        let mut cells = three();
        cells[2].ran(
            CellVerdict::Failed,
            vec!["a".to_owned(), "b".to_owned()],
            None,
        );
        assert_eq!(
            decide(&cells, None).cell.as_deref(),
            Some("ingress.version-v0.11")
        );
        cells[1].ran(CellVerdict::Passed, Vec::new(), None);
        cells[1].comparison = None;
        assert_eq!(
            decide(&cells, None).text(),
            "exit 1: from cell ingress.version-v0.16 (expectations 'a', 'b' failed)"
        );
    }

    #[test]
    fn every_cell_passing_is_exit_0_from_no_cell() {
        let mut cells = three();
        cells.truncate(1);
        let mut other = CellRow::not_run(2, "ingress.version-v0.16", &values("v0.16"));
        other.ran(CellVerdict::Passed, Vec::new(), None);
        other.compared(ComparisonRow {
            verdict: "ok".to_owned(),
            exit: 0,
            detail: None,
        });
        cells.push(other);
        let exit = decide(&cells, None);
        assert_eq!(
            exit.text(),
            "exit 0: every cell passed and none regressed against ingress.version-v0.6"
        );
        assert_eq!((exit.cell, exit.from), (None, None));
    }

    #[test]
    fn a_cell_that_cannot_start_stops_the_matrix_with_its_own_code() {
        let mut cells = three();
        // The base ran and its run broke (3); the second could not start (2): the matrix
        // stopped there and exits 2, as it always did.
        cells[0].ran(
            CellVerdict::Infrastructure,
            Vec::new(),
            Some("deploy failed".to_owned()),
        );
        cells[1] = CellRow::not_run(2, "ingress.version-v0.11", &values("v0.11"));
        cells[1].ran(
            CellVerdict::Invalid,
            Vec::new(),
            Some("haproxy not found".to_owned()),
        );
        cells[2] = CellRow::not_run(3, "ingress.version-v0.16", &values("v0.16"));
        let rollup = Rollup::new(
            "hot-podding",
            "x.yaml",
            vec!["ingress.version".to_owned()],
            cells,
            Some(Stop {
                cell: 1,
                by: Source::Run,
            }),
        );
        assert_eq!(
            rollup.exit.text(),
            "exit 2: from cell ingress.version-v0.11 (haproxy not found; the matrix stopped there)"
        );
        let text = render_text(&rollup);
        assert!(
            text.contains("  3  ingress.version-v0.16  v0.16            not run         -                    -          -     -\n"),
            "{text}"
        );
        let json = serde_json::to_value(&rollup).unwrap();
        assert_eq!(json["schema"], "harness-matrix/v1");
        assert_eq!(json["cells"][2]["verdict"], "notRun");
        assert_eq!(json["cells"][2]["exit"], serde_json::Value::Null);
        assert_eq!(
            json["cells"][1]["failedExpectations"],
            serde_json::json!([])
        );
        assert_eq!(json["exit"]["code"], 2);
        assert_eq!(json["exit"]["from"], "run");
    }

    #[test]
    fn markdown_links_each_cell_to_its_report_and_states_the_rule() {
        let rollup = three_cells();
        let md = render_markdown(&rollup);
        assert!(md.starts_with("# Matrix: hot-podding\n\n`scenarios/x.yaml`, 3 cells over `ingress.version`.\n\n| # | cell | ingress.version | verdict | failed expectations | vs cell 1 | exit | reason |\n| --- |"), "{md}");
        assert!(
            md.contains("| 2 | [ingress.version-v0.11](ingress.version-v0.11/report.html) | v0.11 | failed | p99 | regression | 1 | 1 of 2 expectations failed; regression: errorRate 0.0100 → 0.0500 (+0.0400 > 0.0100) |\n"),
            "{md}"
        );
        assert!(
            md.ends_with(&format!(
                "\n**exit 1: from cell ingress.version-v0.11 (expectation 'p99' failed)**\n\nHow: {RULE}.\n"
            )),
            "{md}"
        );
    }
}
