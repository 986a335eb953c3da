//! The one way the harness runs `kind`, `docker` and `cargo`: a command value that knows its
//! pasteable command line, run with a deadline, with every failure carrying that command line and
//! the output it printed (after kind's `pkg/exec`, whose `RunError` keeps the command and its
//! output). A [`Toolbox`] may put a directory first on the search path, which is how tests put
//! recording fakes of `kind` and `docker` in front of the real ones.

pub use harness_core::text::shell_quote;
use std::ffi::OsString;
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long a command may run unless it says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Lines of output an error message shows (the fields keep all of it).
const SHOWN_LINES: usize = 40;

/// A command to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmd {
    program: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    env_removed: Vec<String>,
    dir: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
}

impl Cmd {
    pub fn new(program: impl Into<String>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_removed: Vec::new(),
            dir: None,
            stdin: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the command (shown in the command line).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Removes an inherited environment variable (not shown in the command line: a shell a
    /// person pastes into does not have the harness's environment).
    pub fn env_remove(mut self, key: impl Into<String>) -> Self {
        self.env_removed.push(key.into());
        self
    }

    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Bytes written to the command's standard input.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn program(&self) -> &str {
        &self.program
    }

    pub fn get_args(&self) -> &[String] {
        &self.args
    }

    /// The command as one could paste it into a shell: `cd DIR && NAME=value program 'arg 1'`.
    pub fn command_line(&self) -> String {
        let mut parts = Vec::new();
        for (key, value) in &self.env {
            parts.push(format!("{key}={}", shell_quote(value)));
        }
        parts.push(shell_quote(&self.program));
        parts.extend(self.args.iter().map(|a| shell_quote(a)));
        let line = parts.join(" ");
        match &self.dir {
            Some(dir) => format!("cd {} && {line}", shell_quote(&dir.display().to_string())),
            None => line,
        }
    }
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.command_line())
    }
}

/// What a finished command printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
}

/// Why a command did not succeed. Each variant names the command line.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("`{program}` was not found on PATH; it is needed for:\n  {command}")]
    NotFound { program: String, command: String },
    #[error("cannot start:\n  {command}\n{source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("command failed ({status}):\n  {command}\n{}", shown(stdout, stderr))]
    Failed {
        command: String,
        status: String,
        stdout: String,
        stderr: String,
    },
    #[error(
        "command did not finish within {}s and was killed:\n  {command}\n{}",
        timeout.as_secs(),
        shown(stdout, stderr)
    )]
    TimedOut {
        command: String,
        timeout: Duration,
        stdout: String,
        stderr: String,
    },
}

impl ExecError {
    /// The command line the error is about.
    pub fn command(&self) -> &str {
        match self {
            ExecError::NotFound { command, .. }
            | ExecError::Spawn { command, .. }
            | ExecError::Failed { command, .. }
            | ExecError::TimedOut { command, .. } => command,
        }
    }
}

/// The tail of a command's output for an error message.
fn shown(stdout: &str, stderr: &str) -> String {
    let mut text = String::new();
    for (name, stream) in [("stderr", stderr), ("stdout", stdout)] {
        let lines: Vec<&str> = stream.lines().collect();
        if lines.is_empty() {
            continue;
        }
        let skipped = lines.len().saturating_sub(SHOWN_LINES);
        text.push_str(&format!("{name}:\n"));
        if skipped > 0 {
            text.push_str(&format!("  ... ({skipped} earlier lines)\n"));
        }
        for line in &lines[skipped..] {
            text.push_str(&format!("  {line}\n"));
        }
    }
    if text.is_empty() {
        text.push_str("(no output)\n");
    }
    text
}

/// Runs commands, finding programs on `PATH` or on a search path of its own.
#[derive(Debug, Clone, Default)]
pub struct Toolbox {
    /// Replaces `PATH` for lookup and for the commands when set.
    search_path: Option<OsString>,
}

impl Toolbox {
    /// Programs are found on `PATH`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Programs are looked up in `dir` before `PATH` (recording fakes in tests).
    pub fn searching_first(dir: impl Into<PathBuf>) -> Self {
        let mut dirs = vec![dir.into()];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        Self {
            search_path: std::env::join_paths(dirs).ok(),
        }
    }

    /// Programs are looked up only in `dirs` (a machine without some tool, in tests).
    pub fn searching_only(dirs: &[PathBuf]) -> Self {
        Self {
            search_path: std::env::join_paths(dirs).ok(),
        }
    }

    /// Runs `cmd` to completion; a non-zero exit is an error.
    pub fn output(&self, cmd: &Cmd) -> Result<Output, ExecError> {
        let command_line = cmd.command_line();
        let program = self
            .resolve(&cmd.program)
            .ok_or_else(|| ExecError::NotFound {
                program: cmd.program.clone(),
                command: command_line.clone(),
            })?;
        let mut command = Command::new(&program);
        command
            .args(&cmd.args)
            .stdin(if cmd.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(path) = self.path_env() {
            command.env("PATH", path);
        }
        for key in &cmd.env_removed {
            command.env_remove(key);
        }
        for (key, value) in &cmd.env {
            command.env(key, value);
        }
        if let Some(dir) = &cmd.dir {
            command.current_dir(dir);
        }
        // Its own process group, so that a timeout ends what it started too (docker children of
        // kind, sleep under sh) and their pipes close.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(|source| ExecError::Spawn {
            command: command_line.clone(),
            source,
        })?;
        if let (Some(bytes), Some(mut pipe)) = (cmd.stdin.clone(), child.stdin.take()) {
            thread::spawn(move || pipe.write_all(&bytes));
        }
        let stdout = read_in_background(child.stdout.take());
        let stderr = read_in_background(child.stderr.take());
        let deadline = Instant::now() + cmd.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() >= deadline => {
                    kill_group(child.id());
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => thread::sleep(Duration::from_millis(10)),
                Err(source) => {
                    let _ = child.kill();
                    return Err(ExecError::Spawn {
                        command: command_line,
                        source,
                    });
                }
            }
        };
        let stdout = stdout.join().unwrap_or_default();
        let stderr = stderr.join().unwrap_or_default();
        match status {
            None => Err(ExecError::TimedOut {
                command: command_line,
                timeout: cmd.timeout,
                stdout,
                stderr,
            }),
            Some(status) if status.success() => Ok(Output { stdout, stderr }),
            Some(status) => Err(ExecError::Failed {
                command: command_line,
                status: describe_status(status),
                stdout,
                stderr,
            }),
        }
    }

    /// Where `program` would be run from, if anywhere.
    pub fn resolve(&self, program: &str) -> Option<PathBuf> {
        if program.contains('/') {
            let path = PathBuf::from(program);
            return is_executable(&path).then_some(path);
        }
        let path = self.path_env()?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|candidate| is_executable(candidate))
    }

    fn path_env(&self) -> Option<OsString> {
        self.search_path
            .clone()
            .or_else(|| std::env::var_os("PATH"))
    }
}

/// SIGKILL to the process group the command leads.
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

fn read_in_background<R: Read + Send + 'static>(pipe: Option<R>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "unknown status".to_owned(),
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_can_be_pasted() {
        let cmd = Cmd::new("docker")
            .args(["exec", "node 1", "sh", "-c", "echo 'hi'"])
            .env("RUSTFLAGS", "-C target-feature=+crt-static")
            .current_dir("/tmp/a b");
        assert_eq!(
            cmd.command_line(),
            r#"cd '/tmp/a b' && RUSTFLAGS='-C target-feature=+crt-static' docker exec 'node 1' sh -c 'echo '\''hi'\'''"#
        );
        assert_eq!(shell_quote(""), "''");
        assert_eq!(
            shell_quote("kindest/node:v1@sha256:ab"),
            "kindest/node:v1@sha256:ab"
        );
    }

    #[test]
    fn output_and_failures_carry_the_command() {
        let tools = Toolbox::new();
        let out = tools
            .output(&Cmd::new("sh").args(["-c", "echo out; echo err >&2"]))
            .unwrap();
        assert_eq!(
            (out.stdout.as_str(), out.stderr.as_str()),
            ("out\n", "err\n")
        );

        let err = tools
            .output(&Cmd::new("sh").args(["-c", "echo nope >&2; exit 3"]))
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("exit status 3"), "{text}");
        assert!(text.contains("sh -c 'echo nope >&2; exit 3'"), "{text}");
        assert!(text.contains("  nope"), "{text}");

        let err = tools
            .output(&Cmd::new("harness-no-such-tool").arg("x"))
            .unwrap_err();
        assert!(matches!(err, ExecError::NotFound { .. }), "{err}");
        assert!(err.to_string().contains("harness-no-such-tool x"));
    }

    #[test]
    fn stdin_is_fed_and_slow_commands_are_killed() {
        let tools = Toolbox::new();
        let out = tools.output(&Cmd::new("cat").stdin("fed")).unwrap();
        assert_eq!(out.stdout, "fed");
        let started = Instant::now();
        let err = tools
            .output(
                &Cmd::new("sh")
                    .args(["-c", "echo started; sleep 5"])
                    .timeout(Duration::from_millis(300)),
            )
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(4));
        match err {
            ExecError::TimedOut { stdout, .. } => assert_eq!(stdout, "started\n"),
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn long_output_is_cut_in_the_message_but_kept_whole() {
        let err = Toolbox::new()
            .output(&Cmd::new("sh").args(["-c", "seq 1 100 >&2; exit 1"]))
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("(60 earlier lines)"), "{text}");
        assert!(
            text.contains("  100\n") && !text.contains("  60\n"),
            "{text}"
        );
        let ExecError::Failed { stderr, .. } = err else {
            panic!()
        };
        assert_eq!(stderr.lines().count(), 100);
    }
}
