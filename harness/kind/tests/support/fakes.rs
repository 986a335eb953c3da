//! Recording fakes of command-line tools (`kind`, `docker`): scripts in a temporary directory
//! that a [`Toolbox`] searches before PATH. Each call appends its exact arguments to a log, and
//! answers with the first scripted response whose words start the call (`kind get clusters`),
//! or with success and no output.

use std::path::{Path, PathBuf};

use harness_kind::exec::Toolbox;

/// The script every fake runs. Arguments are logged separated by the ASCII unit separator, one
/// call per line, written at once.
const SCRIPT: &str = r#"#!/bin/bash
# Recording fake written by harness-kind's tests.
PATH="/usr/bin:/bin:$PATH"
dir="$(cd "$(dirname "$0")" && pwd)"
tool="$(basename "$0")"
# One write per call, so calls made at once (one thread per node) do not interleave.
line="$tool"
for arg in "$@"; do line+=$'\x1f'"$arg"; done
printf '%s\n' "$line" >> "$dir/calls.log"
call="$tool $*"
for response in "$dir"/responses/*; do
  [ -d "$response" ] || continue
  match="$(cat "$response/match")"
  if [ "$call" = "$match" ] || [ "${call#"$match "}" != "$call" ]; then
    cat "$response/stdout"
    cat "$response/stderr" >&2
    exit "$(cat "$response/code")"
  fi
done
exit 0
"#;

pub struct FakeTools {
    dir: tempfile::TempDir,
    responses: usize,
}

impl FakeTools {
    /// Fakes of each of `tools`.
    pub fn new(tools: &[&str]) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("responses")).unwrap();
        std::fs::write(dir.path().join("calls.log"), "").unwrap();
        for tool in tools {
            let path = dir.path().join(tool);
            std::fs::write(&path, SCRIPT).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Self { dir, responses: 0 }
    }

    /// Calls starting with the words `call` (`"docker version"`) print `stdout` and `stderr`
    /// and exit with `code`. Earlier responses win.
    pub fn respond(&mut self, call: &str, stdout: &str, stderr: &str, code: i32) -> &mut Self {
        let dir = self
            .dir
            .path()
            .join("responses")
            .join(format!("{:04}", self.responses));
        self.responses += 1;
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("match"), call).unwrap();
        std::fs::write(dir.join("stdout"), stdout).unwrap();
        std::fs::write(dir.join("stderr"), stderr).unwrap();
        std::fs::write(dir.join("code"), code.to_string()).unwrap();
        self
    }

    /// `kind` and `docker` as a healthy host has them: Docker 24.0.7, kind v0.33.0, and
    /// `kind get clusters` listing `clusters` (none: kind's "No kind clusters found.").
    pub fn kind_and_docker(clusters: &[&str]) -> Self {
        let mut fakes = Self::new(&["kind", "docker"]);
        let listed: String = clusters.iter().map(|c| format!("{c}\n")).collect();
        let none = if clusters.is_empty() {
            "No kind clusters found.\n"
        } else {
            ""
        };
        fakes
            .respond("docker version", "24.0.7\n", "", 0)
            .respond("kind version", "kind v0.33.0 go1.25.1 linux/amd64\n", "", 0)
            .respond("kind get clusters", &listed, none, 0);
        fakes
    }

    /// A toolbox that finds these fakes first.
    pub fn toolbox(&self) -> Toolbox {
        Toolbox::searching_first(self.dir.path())
    }

    /// A toolbox that finds nothing but these fakes.
    pub fn toolbox_alone(&self) -> Toolbox {
        Toolbox::searching_only(&[self.dir.path().to_path_buf()])
    }

    /// Every call so far: the tool, then its arguments.
    pub fn calls(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(self.dir.path().join("calls.log"))
            .unwrap()
            .lines()
            .map(|line| line.split('\x1f').map(str::to_owned).collect())
            .collect()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Removes a fake (the tool is then "not installed", unless PATH has a real one).
    pub fn remove(&self, tool: &str) -> PathBuf {
        let path = self.dir.path().join(tool);
        std::fs::remove_file(&path).unwrap();
        path
    }
}

/// `["kind", "create", ...]` from `"kind create ..."` (words without spaces).
pub fn call(words: &str) -> Vec<String> {
    words.split(' ').map(str::to_owned).collect()
}
