//! Checks that `kind` and `docker` are installed, new enough, and that the Docker daemon
//! answers — before anything is created — and says what to install when they are not.

use crate::exec::{Cmd, ExecError, Toolbox};
use crate::lifecycle::SHORT_TIMEOUT;
use crate::pins::{MIN_DOCKER_ENGINE_VERSION, MIN_KIND_VERSION, Version};

const INSTALL_KIND: &str = "install kind v0.33.0 or newer: https://kind.sigs.k8s.io/docs/user/quick-start/#installation \
     (for example `go install sigs.k8s.io/kind@v0.33.0`, or the release binary for your platform)";
const INSTALL_DOCKER: &str = "install Docker Engine 20.10 or newer (https://docs.docker.com/engine/install/; \
     Docker Desktop on macOS and Windows) and start it";

/// The versions found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolVersions {
    pub kind: Version,
    /// The Docker Engine (daemon), not the client.
    pub docker_engine: Version,
}

/// Why the tools are not usable.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("`{tool}` is not installed (not found on PATH): {hint}")]
    Missing {
        tool: &'static str,
        hint: &'static str,
    },
    #[error("{tool} {found} is too old; the kind target needs {min} or newer: {hint}")]
    TooOld {
        tool: &'static str,
        found: Version,
        min: Version,
        hint: &'static str,
    },
    #[error("the Docker daemon does not answer ({hint}):\n{source}")]
    DaemonDown {
        hint: &'static str,
        source: ExecError,
    },
    #[error("cannot read the {tool} version from `{command}` output: {output:?}")]
    Unreadable {
        tool: &'static str,
        command: String,
        output: String,
    },
    #[error(transparent)]
    Exec(ExecError),
}

/// `kind version` (prints `kind v0.33.0 go1.25.1 linux/amd64`).
pub fn kind_version() -> Cmd {
    Cmd::new("kind").arg("version").timeout(SHORT_TIMEOUT)
}

/// `docker version --format {{.Server.Version}}`: asks the daemon, so it fails when none runs.
pub fn docker_engine_version() -> Cmd {
    Cmd::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .timeout(SHORT_TIMEOUT)
}

/// Checks kind and the Docker Engine against the pinned minimums.
pub fn check(tools: &Toolbox) -> Result<ToolVersions, ToolError> {
    let docker_engine = check_docker(tools)?;
    let kind = version_of(tools, kind_version(), "kind", INSTALL_KIND, |e| {
        ToolError::Exec(e)
    })?;
    at_least("kind", kind, MIN_KIND_VERSION, INSTALL_KIND)?;
    Ok(ToolVersions {
        kind,
        docker_engine,
    })
}

/// Checks the Docker Engine alone (what image builds and container tests need).
pub fn check_docker(tools: &Toolbox) -> Result<Version, ToolError> {
    let engine = version_of(
        tools,
        docker_engine_version(),
        "docker",
        INSTALL_DOCKER,
        |e| ToolError::DaemonDown {
            hint: INSTALL_DOCKER,
            source: e,
        },
    )?;
    at_least(
        "Docker Engine",
        engine,
        MIN_DOCKER_ENGINE_VERSION,
        INSTALL_DOCKER,
    )?;
    Ok(engine)
}

fn at_least(
    tool: &'static str,
    found: Version,
    min: Version,
    hint: &'static str,
) -> Result<(), ToolError> {
    if found < min {
        return Err(ToolError::TooOld {
            tool,
            found,
            min,
            hint,
        });
    }
    Ok(())
}

fn version_of(
    tools: &Toolbox,
    cmd: Cmd,
    tool: &'static str,
    hint: &'static str,
    on_failure: impl FnOnce(ExecError) -> ToolError,
) -> Result<Version, ToolError> {
    let out = match tools.output(&cmd) {
        Ok(out) => out,
        Err(ExecError::NotFound { .. }) => return Err(ToolError::Missing { tool, hint }),
        Err(e) => return Err(on_failure(e)),
    };
    Version::find_in(&out.stdout).ok_or_else(|| ToolError::Unreadable {
        tool,
        command: cmd.command_line(),
        output: out.stdout,
    })
}
