//! Child processes of the local target: spawned in their own process group with output logged
//! to a file, their bound addresses read from the `listening key=addr ...` line they print on
//! stdout, stopped like the kubelet stops a container (SIGTERM, then SIGKILL after a grace
//! period), and killed if the handle is dropped, so no process outlives the harness run.
//!
//! Dropping the handle needs the harness to live; when it is killed outright (SIGKILL, the OOM
//! killer) nothing of it runs. On Linux each child therefore asks the kernel for a parent-death
//! signal ([`die_with_parent`]): SIGKILL when the harness goes, however it goes (SIGTERM for a
//! child that must write something on its way out: [`Supervised::spawn_with_death_signal`]).

use harness_core::text::shell_quote;
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
    /// Starts the process and, if asked, waits for its `listening` line. It is killed
    /// (SIGKILL) if the harness dies.
    pub async fn spawn(spec: ProcessSpec) -> Result<Supervised, LocalError> {
        Self::spawn_with_death_signal(spec, Signal::SIGKILL).await
    }

    /// As [`Supervised::spawn`], with `death_signal` sent to the process when the harness dies
    /// (SIGTERM for a process that must write something on its way out, as loadgen its report).
    pub async fn spawn_with_death_signal(
        spec: ProcessSpec,
        death_signal: Signal,
    ) -> Result<Supervised, LocalError> {
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
        die_with_parent_by(&mut command, death_signal);
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

/// Makes the process `command` starts receive SIGKILL when the harness dies (Linux
/// `PR_SET_PDEATHSIG`; elsewhere nothing is added). Any child the harness starts should go
/// through this or [`die_with_parent_by`] (the spawns in [`Supervised`] do).
///
/// Two details of the kernel's rule matter. The signal is sent when the *thread* that forked
/// the child exits, not the process: spawn from the async runtime's worker threads (they live
/// as long as the runtime) or the main thread, never from a short-lived thread such as a
/// `spawn_blocking` one. And a parent that dies between the fork and the `prctl` call sends
/// nothing, so the child checks that its parent is still the harness and fails the exec if not.
pub fn die_with_parent(command: &mut Command) {
    die_with_parent_by(command, Signal::SIGKILL);
}

/// As [`die_with_parent`], with `signal` instead of SIGKILL.
pub fn die_with_parent_by(command: &mut Command, signal: Signal) {
    #[cfg(target_os = "linux")]
    {
        let harness = nix::unistd::Pid::from_raw(std::process::id() as i32);
        let hook = move || -> std::io::Result<()> {
            // Only async-signal-safe calls, no allocation: this runs between fork and exec.
            nix::sys::prctl::set_pdeathsig(signal)
                .map_err(|e| std::io::Error::from_raw_os_error(e as i32))?;
            if nix::unistd::getppid() != harness {
                // The harness died before the prctl: it will never signal us.
                return Err(std::io::Error::from_raw_os_error(
                    nix::errno::Errno::ESRCH as i32,
                ));
            }
            Ok(())
        };
        // SAFETY: the hook runs in the forked child before exec, where only async-signal-safe
        // functions may be called. It calls prctl(2) and getppid(2) (both async-signal-safe
        // system calls) and builds an io::Error from an errno, which does not allocate; it
        // touches no lock and no memory shared with other threads.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(hook);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (command, signal);
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

    /// The parent-death signal fires when the thread that forked the child exits; a thread
    /// standing in for a killed harness shows it without killing the test process. The handle
    /// is leaked, so kill-on-drop plays no part.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_child_dies_with_the_thread_that_started_it() {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("sleeper.log");
        let pid = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let spec = ProcessSpec {
                    name: "sleeper".into(),
                    program: "/bin/sh".into(),
                    args: vec![
                        "-c".into(),
                        "echo listening http=127.0.0.1:1; exec sleep 60".into(),
                    ],
                    env: vec![],
                    log_path,
                    wait_listening: Some(Duration::from_secs(5)),
                };
                let p = Supervised::spawn(spec).await.unwrap();
                let pid = p.pid().unwrap();
                std::mem::forget(p);
                pid
            })
        })
        .join()
        .unwrap();
        // Gone (or a zombie nobody reaps yet) within 5 s of its parent thread's exit.
        let stat = format!("/proc/{pid}/stat");
        let dead = (0..100).any(|_| {
            let state = std::fs::read_to_string(&stat).ok().and_then(|s| {
                s.rsplit(')')
                    .next()
                    .map(|r| r.trim_start().starts_with('Z'))
            });
            if state.unwrap_or(true) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
            false
        });
        assert!(dead, "pid {pid} outlived the thread that started it");
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
