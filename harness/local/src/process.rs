//! Child processes of the local target: spawned in their own process group with output logged
//! to a file, their bound addresses read from the `listening key=addr ...` line they print on
//! stdout, stopped like the kubelet stops a container (SIGTERM, then SIGKILL after a grace
//! period), and killed if the handle is dropped, so no process outlives the harness run.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use workload_contract::listening;

use crate::LocalError;

/// What to run.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    /// Name used in errors and log file names (e.g. `pod-3-sidecar`).
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// stderr and any further stdout go here.
    pub log_path: PathBuf,
    /// Wait at most this long for the `listening` line; `None` when the program prints none.
    pub wait_listening: Option<Duration>,
}

/// A running child process.
#[derive(Debug)]
pub struct Supervised {
    pub name: String,
    child: Child,
    /// Addresses from the `listening` line, by key (`http`, `admin`, ...).
    pub addrs: BTreeMap<String, SocketAddr>,
    command_line: String,
}

impl Supervised {
    /// Starts the process and, if asked, waits for its `listening` line.
    pub async fn spawn(spec: ProcessSpec) -> Result<Supervised, LocalError> {
        let command_line = format!(
            "{} {}",
            spec.program.display(),
            spec.args
                .iter()
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let log = std::fs::File::create(&spec.log_path).map_err(|e| LocalError::Io {
            context: format!("creating log file {}", spec.log_path.display()),
            source: e,
        })?;
        let mut command = Command::new(&spec.program);
        command
            .args(&spec.args)
            .envs(spec.env.iter().cloned())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log.try_clone().map_err(|e| {
                LocalError::Io {
                    context: "duplicating log handle".into(),
                    source: e,
                }
            })?))
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| LocalError::Spawn {
            command: command_line.clone(),
            source: e,
        })?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut lines = BufReader::new(stdout).lines();
        let mut addrs = BTreeMap::new();
        if let Some(limit) = spec.wait_listening {
            let first = tokio::time::timeout(limit, lines.next_line()).await;
            let line = match first {
                Ok(Ok(Some(line))) => line,
                Ok(Ok(None)) | Ok(Err(_)) => {
                    let status = child.wait().await.ok();
                    return Err(LocalError::Startup {
                        name: spec.name,
                        command: command_line,
                        detail: format!(
                            "exited ({}) before printing its listening address; see {}",
                            status.map(|s| s.to_string()).unwrap_or_default(),
                            spec.log_path.display()
                        ),
                    });
                }
                Err(_) => {
                    return Err(LocalError::Startup {
                        name: spec.name,
                        command: command_line,
                        detail: format!(
                            "printed no listening address within {limit:?}; see {}",
                            spec.log_path.display()
                        ),
                    });
                }
            };
            addrs = listening::parse(&line).ok_or_else(|| LocalError::Startup {
                name: spec.name.clone(),
                command: command_line.clone(),
                detail: format!("unexpected first line `{line}` (want `listening http=ADDR ...`)"),
            })?;
        }
        // Keep draining stdout into the log so the child never blocks on a full pipe.
        let mut log = tokio::fs::File::from_std(log);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = log.write_all(line.as_bytes()).await;
                let _ = log.write_all(b"\n").await;
            }
        });
        Ok(Supervised {
            name: spec.name,
            child,
            addrs,
            command_line,
        })
    }

    /// The command line, quoted so it can be pasted into a shell.
    pub fn command_line(&self) -> &str {
        &self.command_line
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The address printed under `key`.
    pub fn addr(&self, key: &str) -> Result<SocketAddr, LocalError> {
        self.addrs
            .get(key)
            .copied()
            .ok_or_else(|| LocalError::Startup {
                name: self.name.clone(),
                command: self.command_line.clone(),
                detail: format!("did not report a `{key}` address"),
            })
    }

    /// Sends a signal to the process's whole group (no-op if it already exited), so helper
    /// children (a preStop `sh`, say) get it too.
    pub fn signal(&self, signal: Signal) {
        if let Some(pid) = self.child.id() {
            let _ = kill(Pid::from_raw(-(pid as i32)), signal);
        }
    }

    /// SIGTERM, then SIGKILL if still running after `grace`. Returns true if it exited in time.
    pub async fn terminate(&mut self, grace: Duration) -> bool {
        if self.child.try_wait().ok().flatten().is_some() {
            return true;
        }
        self.signal(Signal::SIGTERM);
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(_) => true,
            Err(_) => {
                self.signal(Signal::SIGKILL);
                let _ = self.child.wait().await;
                false
            }
        }
    }

    /// Waits for the process to exit on its own, at most `limit`.
    pub async fn wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(limit, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
    }

    /// Whether the process has exited.
    pub fn has_exited(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_some()
    }
}

fn shell_quote(arg: &str) -> String {
    if arg
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn startup_failure_names_the_command_and_log() {
        let dir = tempfile::tempdir().unwrap();
        let spec = ProcessSpec {
            name: "broken".into(),
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "echo oops >&2; exit 3".into()],
            env: vec![],
            log_path: dir.path().join("broken.log"),
            wait_listening: Some(Duration::from_secs(5)),
        };
        let err = Supervised::spawn(spec).await.unwrap_err().to_string();
        assert!(err.contains("/bin/sh -c 'echo oops >&2; exit 3'"), "{err}");
        assert!(err.contains("exit status: 3"), "{err}");
        let log = std::fs::read_to_string(dir.path().join("broken.log")).unwrap();
        assert_eq!(log, "oops\n");
    }

    #[tokio::test]
    async fn terminate_escalates_to_sigkill_after_grace() {
        let dir = tempfile::tempdir().unwrap();
        let spec = ProcessSpec {
            name: "stubborn".into(),
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                "trap '' TERM; echo listening http=127.0.0.1:1; sleep 30".into(),
            ],
            env: vec![],
            log_path: dir.path().join("s.log"),
            wait_listening: Some(Duration::from_secs(5)),
        };
        let mut p = Supervised::spawn(spec).await.unwrap();
        assert_eq!(p.addr("http").unwrap().port(), 1);
        let exited_in_grace = p.terminate(Duration::from_millis(300)).await;
        assert!(!exited_in_grace, "TERM is trapped, so SIGKILL was needed");
        assert!(p.has_exited());
    }
}
