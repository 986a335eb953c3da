//! One ingress replica's real `haproxy`: started through [`crate::process`] (its own process
//! group, killed with the run) in master-worker mode (`-W`, master CLI on `-S`), reloaded
//! hitlessly through the master CLI's `reload` (a fresh worker takes new connections, the old
//! one finishes its requests), restarted by stopping and starting it (connections drop, a
//! fresh process starts round-robin at the first server), and updated through the runtime API
//! on the stats socket (`set server`). Its configuration and logs live in the run directory;
//! its UNIX sockets in a short temporary directory (a socket path must fit in 108 bytes).

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::LocalError;
use crate::process::{ProcessSpec, Supervised};

/// How long a fresh HAProxy may take until its stats socket answers.
const STARTUP_LIMIT: Duration = Duration::from_secs(10);
/// How long one command on a UNIX socket may take.
const CLI_LIMIT: Duration = Duration::from_secs(3);
/// The stop half of a restart: HAProxy exits at SIGTERM at once; SIGKILL after this.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Where Debian and Ubuntu install `haproxy`, which a non-root user's PATH often lacks.
const SBIN_DIRS: [&str; 2] = ["/usr/sbin", "/usr/local/sbin"];

/// The program to run instead of searching (`HARNESS_HAPROXY=/path/to/haproxy`); when it is
/// not a file, no HAProxy is found.
pub const HAPROXY_ENV: &str = "HARNESS_HAPROXY";

/// `$HARNESS_HAPROXY` if set, else `haproxy` on PATH, else in the sbin directories, if
/// anywhere.
pub fn find_haproxy() -> Option<PathBuf> {
    if let Some(chosen) = std::env::var_os(HAPROXY_ENV) {
        let chosen = PathBuf::from(chosen);
        return chosen.is_file().then_some(chosen);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(SBIN_DIRS.iter().map(PathBuf::from))
        .map(|dir| dir.join("haproxy"))
        .find(|p| p.is_file())
}

/// One replica's process and files.
#[derive(Debug)]
pub struct HaproxyReplica {
    pub name: String,
    program: PathBuf,
    /// Configuration and logs (in the run directory).
    dir: PathBuf,
    pub config_path: PathBuf,
    pub stats_socket: PathBuf,
    master_socket: PathBuf,
    process: Option<Supervised>,
    /// Processes started so far (each start logs to its own file).
    starts: u32,
}

impl HaproxyReplica {
    /// `dir` holds the configuration and logs, `sockets` the UNIX sockets.
    pub fn new(
        name: &str,
        program: PathBuf,
        dir: &Path,
        sockets: &Path,
    ) -> Result<Self, LocalError> {
        std::fs::create_dir_all(dir).map_err(|e| LocalError::Io {
            context: format!("creating {}", dir.display()),
            source: e,
        })?;
        Ok(Self {
            name: name.to_owned(),
            program,
            dir: dir.to_path_buf(),
            config_path: dir.join("haproxy.cfg"),
            stats_socket: sockets.join(format!("{name}.sock")),
            master_socket: sockets.join(format!("{name}-master.sock")),
            process: None,
            starts: 0,
        })
    }

    /// Writes the configuration the next start or reload reads; every version is kept too
    /// (`haproxy.cfg.N`), so a run shows what each render listed.
    pub fn write_config(&self, text: &str, render: u64) -> Result<(), LocalError> {
        let write = |path: PathBuf| {
            std::fs::write(&path, text).map_err(|e| LocalError::Io {
                context: format!("writing {}", path.display()),
                source: e,
            })
        };
        write(self.dir.join(format!("haproxy.cfg.{render}")))?;
        write(self.config_path.clone())
    }

    /// Starts HAProxy and waits until its worker answers on the stats socket.
    pub async fn start(&mut self) -> Result<(), LocalError> {
        self.starts += 1;
        let log_path = self.dir.join(format!("haproxy-{}.log", self.starts));
        let process = Supervised::spawn(ProcessSpec {
            name: self.name.clone(),
            program: self.program.clone(),
            args: vec![
                "-W".into(),
                "-S".into(),
                self.master_socket.display().to_string(),
                "-f".into(),
                self.config_path.display().to_string(),
            ],
            env: vec![],
            log_path: log_path.clone(),
            wait_listening: None,
        })
        .await?;
        let command = process.command_line().to_owned();
        self.process = Some(process);
        self.wait_worker(None, STARTUP_LIMIT)
            .await
            .map_err(|detail| LocalError::Startup {
                name: self.name.clone(),
                command,
                detail: format!("{detail}; see {}", log_path.display()),
            })
            .map(|_| ())
    }

    /// A hitless reload through the master CLI; returns once a new worker answers.
    pub async fn reload(&mut self) -> Result<(), LocalError> {
        let before = self.worker_pid().await;
        let command = self.command_line();
        // The master binds its CLI a moment after the first worker answers: retry a refused
        // connection for a bounded while.
        let mut sent = cli(&self.master_socket, "reload").await;
        for _ in 0..100 {
            match &sent {
                Err(e)
                    if e.kind() == std::io::ErrorKind::ConnectionRefused
                        || e.kind() == std::io::ErrorKind::NotFound =>
                {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    sent = cli(&self.master_socket, "reload").await;
                }
                _ => break,
            }
        }
        // The master re-executes itself on `reload` and may drop the CLI connection
        // abruptly: a reset means the command arrived; the new worker confirms it below.
        if matches!(&sent, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset) {
            sent = Ok(String::new());
        }
        sent.map_err(|e| LocalError::Io {
            context: format!(
                "reloading {} through {}",
                self.name,
                self.master_socket.display()
            ),
            source: e,
        })?;
        self.wait_worker(before, STARTUP_LIMIT)
            .await
            .map_err(|detail| LocalError::Startup {
                name: self.name.clone(),
                command,
                detail: format!("reload: {detail}; see the logs in {}", self.dir.display()),
            })
            .map(|_| ())
    }

    /// Stop, then start: what the controller does when a reload fails.
    pub async fn restart(&mut self) -> Result<(), LocalError> {
        self.stop(STOP_GRACE).await;
        self.start().await
    }

    /// Stops HAProxy (SIGTERM to its group, SIGKILL after `grace`).
    pub async fn stop(&mut self, grace: Duration) {
        if let Some(mut p) = self.process.take() {
            p.terminate(grace).await;
        }
    }

    /// Runs runtime-API commands on the worker's stats socket; an answer other than empty or
    /// HAProxy's "no need to change" notes is an error.
    pub async fn runtime(&self, commands: &[String]) -> Result<(), LocalError> {
        for command in commands {
            let answer = cli(&self.stats_socket, command)
                .await
                .map_err(|e| LocalError::Io {
                    context: format!("runtime API of {}: `{command}`", self.name),
                    source: e,
                })?;
            let answer = answer.trim();
            let fine = answer.is_empty()
                || answer.starts_with("no need to change")
                || answer.contains("changed from");
            if !fine {
                return Err(LocalError::Io {
                    context: format!("runtime API of {}: `{command}`", self.name),
                    source: std::io::Error::other(answer.to_owned()),
                });
            }
        }
        Ok(())
    }

    fn command_line(&self) -> String {
        self.process
            .as_ref()
            .map(|p| p.command_line().to_owned())
            .unwrap_or_default()
    }

    /// The current worker's PID, from `show info`.
    pub async fn worker_pid(&self) -> Option<u32> {
        let info = cli(&self.stats_socket, "show info").await.ok()?;
        info.lines()
            .find_map(|l| l.strip_prefix("Pid: "))
            .and_then(|p| p.trim().parse().ok())
    }

    /// Waits until a worker other than `old` answers; bounded by `limit`.
    async fn wait_worker(&mut self, old: Option<u32>, limit: Duration) -> Result<u32, String> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(pid) = self.worker_pid().await
                && Some(pid) != old
            {
                return Ok(pid);
            }
            if self.process.as_mut().is_none_or(|p| p.has_exited()) {
                return Err("haproxy exited".into());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(format!("no new worker answered within {limit:?}"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// One command on an HAProxy CLI socket; the answer until the socket closes.
pub async fn cli(socket: &Path, command: &str) -> std::io::Result<String> {
    let exchange = async {
        let mut stream = UnixStream::connect(socket).await?;
        stream.write_all(command.as_bytes()).await?;
        stream.write_all(b"\n").await?;
        let mut out = String::new();
        stream.read_to_string(&mut out).await?;
        Ok(out)
    };
    tokio::time::timeout(CLI_LIMIT, exchange)
        .await
        .unwrap_or_else(|_| {
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no answer",
            ))
        })
}
