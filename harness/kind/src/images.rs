//! The workload images: one per workload binary, `FROM scratch` with the binary built by cargo
//! on the host, statically linked (`-C target-feature=+crt-static` for a `*-linux-gnu` target:
//! a static-pie with no dynamic loader, checked here), and tagged by the binary's SHA-256 so an
//! image name always means one binary (never `:latest`; pods use `imagePullPolicy: Never`).
//! Nothing is pulled: the build context is a temporary directory holding the binary, an empty
//! `/tmp` and a generated Dockerfile. The list of images is [`WORKLOADS`]; adding a workload
//! binary is one line there.
//!
//! Host names: a static glibc binary cannot load NSS modules, but glibc 2.34+ has the `files`
//! and `dns` sources built in, which is all a container needs (`/etc/hosts` and
//! `/etc/resolv.conf` are provided by Docker and by the kubelet); the container tests resolve
//! container names this way. An IP address never reaches the resolver at all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::exec::{Cmd, ExecError, Toolbox};

/// A workload binary that gets an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    /// Image name under [`REPOSITORY_PREFIX`], and the binary's name.
    pub name: &'static str,
    /// The cargo package that builds it.
    pub package: &'static str,
}

/// Every workload image, in build order.
pub const WORKLOADS: &[Workload] = &[
    Workload {
        name: "flagsvc",
        package: "flagsvc",
    },
    Workload {
        name: "sidecar",
        package: "sidecar",
    },
    Workload {
        name: "loadgen",
        package: "loadgen",
    },
    Workload {
        name: "loadbalancer",
        package: "loadbalancer",
    },
];

/// Image names are `harness/<workload>:sha256-<16 hex digits of the binary's SHA-256>`.
pub const REPOSITORY_PREFIX: &str = "harness/";

/// The cargo profile of image binaries (release, without debug info: see the workspace
/// Cargo.toml).
pub const CARGO_PROFILE: &str = "image";

/// The user the images run as (no /etc/passwd in a scratch image, so numeric).
pub const IMAGE_USER: &str = "65532:65532";

const CARGO_TIMEOUT: Duration = Duration::from_secs(45 * 60);
const DOCKER_BUILD_TIMEOUT: Duration = Duration::from_secs(10 * 60);
const DOCKER_QUERY_TIMEOUT: Duration = Duration::from_secs(60);

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The cargo workspace (the repository root).
    pub workspace: PathBuf,
    /// Rust target triple of the binaries, e.g. `x86_64-unknown-linux-gnu`.
    pub rust_target: String,
    /// `false`: use binaries already in `target/<triple>/image/` (built elsewhere, e.g. in an
    /// arm64 Linux container) instead of running cargo.
    pub run_cargo: bool,
    pub workloads: Vec<Workload>,
}

impl BuildOptions {
    /// Every workload, built by cargo for `rust_target`.
    pub fn new(workspace: impl Into<PathBuf>, rust_target: impl Into<String>) -> Self {
        Self {
            workspace: workspace.into(),
            rust_target: rust_target.into(),
            run_cargo: true,
            workloads: WORKLOADS.to_vec(),
        }
    }
}

/// One built image.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuiltImage {
    pub workload: String,
    /// `harness/flagsvc:sha256-0123456789abcdef`.
    pub image: String,
    /// SHA-256 of the binary, hex.
    pub binary_sha256: String,
    pub binary: PathBuf,
    /// `false` when an image of that name already existed.
    pub built: bool,
}

impl BuiltImage {
    /// The part after `:`.
    pub fn tag(&self) -> &str {
        self.image.rsplit_once(':').map_or("", |(_, tag)| tag)
    }

    /// The part before `:`.
    pub fn repository(&self) -> &str {
        self.image
            .rsplit_once(':')
            .map_or(&self.image, |(repo, _)| repo)
    }
}

/// Why images could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("building the workload binaries failed: {0}")]
    Cargo(#[source] ExecError),
    #[error("cargo reported no binary `{binary}` for package `{package}`; its output:\n{output}")]
    MissingBinary {
        package: String,
        binary: String,
        output: String,
    },
    #[error(
        "{path}: not a statically linked {arch} executable ({reason}); scratch images hold nothing else"
    )]
    NotStatic {
        path: String,
        arch: String,
        reason: String,
    },
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("docker build failed: {0}")]
    Docker(#[source] ExecError),
    #[error(
        "unknown Rust target `{0}` for a Linux image; use x86_64-unknown-linux-gnu or aarch64-unknown-linux-gnu"
    )]
    UnknownTarget(String),
}

/// The Rust target triple for binaries run by a Docker engine of architecture `arch` (as
/// `docker version --format {{.Server.Arch}}` prints it: `amd64`, `arm64`).
pub fn rust_target_for_docker_arch(arch: &str) -> Option<&'static str> {
    match arch.trim() {
        "amd64" | "x86_64" => Some("x86_64-unknown-linux-gnu"),
        "arm64" | "aarch64" => Some("aarch64-unknown-linux-gnu"),
        _ => None,
    }
}

/// `docker version --format {{.Server.Arch}}`.
pub fn docker_arch() -> Cmd {
    Cmd::new("docker")
        .args(["version", "--format", "{{.Server.Arch}}"])
        .timeout(DOCKER_QUERY_TIMEOUT)
}

/// `cargo build --profile image --target T -p ... --message-format json-render-diagnostics`
/// with static linking, from the workspace root.
pub fn cargo_build(opts: &BuildOptions) -> Cmd {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Cmd::new(cargo)
        .args(["build", "--profile", CARGO_PROFILE, "--target"])
        .arg(opts.rust_target.clone());
    for workload in &opts.workloads {
        cmd = cmd.args(["-p", workload.package, "--bin", workload.name]);
    }
    cmd.args(["--message-format", "json-render-diagnostics"])
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .current_dir(opts.workspace.clone())
        .timeout(CARGO_TIMEOUT)
}

/// Binary name → path, from cargo's JSON messages.
pub fn cargo_executables(stdout: &str) -> BTreeMap<String, PathBuf> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| {
            let name = m["target"]["name"].as_str()?.to_owned();
            let path = m["executable"].as_str()?;
            Some((name, PathBuf::from(path)))
        })
        .collect()
}

/// Where binaries built for `rust_target` land.
pub fn binary_dir(workspace: &Path, rust_target: &str) -> PathBuf {
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    target_dir.join(rust_target).join(CARGO_PROFILE)
}

/// The image name for a workload binary with this SHA-256.
pub fn image_reference(workload: &str, sha256_hex: &str) -> String {
    format!(
        "{REPOSITORY_PREFIX}{workload}:sha256-{}",
        &sha256_hex[..16.min(sha256_hex.len())]
    )
}

/// The Dockerfile of a workload image: the binary, an empty `/tmp` it may write to, a
/// non-root user.
pub fn dockerfile(binary: &str) -> String {
    format!(
        "FROM scratch\n\
         COPY --chown={IMAGE_USER} tmp/ /tmp/\n\
         COPY {binary} /{binary}\n\
         USER {IMAGE_USER}\n\
         ENTRYPOINT [\"/{binary}\"]\n"
    )
}

/// `docker build --tag IMAGE --label ... CONTEXT`.
pub fn docker_build(image: &str, workload: &str, sha256_hex: &str, context: &Path) -> Cmd {
    Cmd::new("docker")
        .args(["build", "--tag", image])
        .args(["--label", &format!("io.harness.workload={workload}")])
        .args(["--label", &format!("io.harness.binary-sha256={sha256_hex}")])
        .arg(context.display().to_string())
        .timeout(DOCKER_BUILD_TIMEOUT)
}

/// `docker image inspect --format {{.Id}} IMAGE`: succeeds when the image exists.
pub fn docker_image_id(image: &str) -> Cmd {
    Cmd::new("docker")
        .args(["image", "inspect", "--format", "{{.Id}}", image])
        .timeout(DOCKER_QUERY_TIMEOUT)
}

/// Builds (or finds up to date) every image in `opts`.
pub fn build_images(tools: &Toolbox, opts: &BuildOptions) -> Result<Vec<BuiltImage>, ImageError> {
    let machine = elf_machine_for(&opts.rust_target)?;
    let executables = if opts.run_cargo {
        let out = tools
            .output(&cargo_build(opts))
            .map_err(ImageError::Cargo)?;
        (cargo_executables(&out.stdout), out.stderr)
    } else {
        let dir = binary_dir(&opts.workspace, &opts.rust_target);
        let found = opts
            .workloads
            .iter()
            .map(|w| (w.name.to_owned(), dir.join(w.name)))
            .collect();
        (found, String::new())
    };
    let (executables, cargo_log) = executables;
    let mut images = Vec::new();
    for workload in &opts.workloads {
        let binary =
            executables
                .get(workload.name)
                .cloned()
                .ok_or_else(|| ImageError::MissingBinary {
                    package: workload.package.to_owned(),
                    binary: workload.name.to_owned(),
                    output: cargo_log.clone(),
                })?;
        let bytes = std::fs::read(&binary).map_err(|source| ImageError::Io {
            path: binary.display().to_string(),
            source,
        })?;
        check_static(&bytes, machine).map_err(|reason| ImageError::NotStatic {
            path: binary.display().to_string(),
            arch: opts.rust_target.clone(),
            reason,
        })?;
        let sha256 = format!("{:x}", Sha256::digest(&bytes));
        let image = image_reference(workload.name, &sha256);
        let exists = tools.output(&docker_image_id(&image)).is_ok();
        if !exists {
            build_one(tools, workload.name, &image, &sha256, &binary)?;
        }
        images.push(BuiltImage {
            workload: workload.name.to_owned(),
            image,
            binary_sha256: sha256,
            binary,
            built: !exists,
        });
    }
    Ok(images)
}

fn build_one(
    tools: &Toolbox,
    name: &str,
    image: &str,
    sha256: &str,
    binary: &Path,
) -> Result<(), ImageError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| ImageError::Io { path, source }
    };
    let context = tempfile::Builder::new()
        .prefix("harness-image-")
        .tempdir()
        .map_err(io(Path::new("a temporary directory")))?;
    let dir = context.path();
    std::fs::create_dir(dir.join("tmp")).map_err(io(&dir.join("tmp")))?;
    std::fs::copy(binary, dir.join(name)).map_err(io(binary))?;
    std::fs::write(dir.join("Dockerfile"), dockerfile(name)).map_err(io(dir))?;
    tools
        .output(&docker_build(image, name, sha256, dir))
        .map_err(ImageError::Docker)?;
    Ok(())
}

/// The ELF `e_machine` of binaries for a Rust target.
fn elf_machine_for(rust_target: &str) -> Result<u16, ImageError> {
    if !rust_target.ends_with("-linux-gnu") && !rust_target.ends_with("-linux-musl") {
        return Err(ImageError::UnknownTarget(rust_target.to_owned()));
    }
    match rust_target.split('-').next() {
        Some("x86_64") => Ok(62),
        Some("aarch64") => Ok(183),
        _ => Err(ImageError::UnknownTarget(rust_target.to_owned())),
    }
}

/// Checks that `elf` is a 64-bit little-endian executable for `machine` without a program
/// interpreter (`PT_INTERP`): it runs with nothing else in the image.
pub fn check_static(elf: &[u8], machine: u16) -> Result<(), String> {
    const PT_INTERP: u32 = 3;
    let u16_at = |at: usize| {
        elf.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| {
        elf.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |at: usize| {
        elf.get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    if elf.get(..4) != Some(b"\x7fELF".as_slice())
        || elf.get(4) != Some(&2)
        || elf.get(5) != Some(&1)
    {
        return Err("not a 64-bit little-endian ELF file".to_owned());
    }
    let found = u16_at(18).ok_or("truncated ELF header")?;
    if found != machine {
        return Err(format!("built for ELF machine {found}, expected {machine}"));
    }
    let phoff = u64_at(32).ok_or("truncated ELF header")? as usize;
    let phentsize = usize::from(u16_at(54).ok_or("truncated ELF header")?);
    let phnum = usize::from(u16_at(56).ok_or("truncated ELF header")?);
    for i in 0..phnum {
        let p_type = u32_at(phoff + i * phentsize).ok_or("truncated program headers")?;
        if p_type == PT_INTERP {
            return Err(
                "it names a dynamic loader (PT_INTERP): dynamically linked; build with RUSTFLAGS='-C target-feature=+crt-static' and --target"
                    .to_owned(),
            );
        }
    }
    Ok(())
}

/// The file `harness images` writes: which image each workload is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// `harness-images/v1`.
    pub schema: String,
    pub rust_target: String,
    pub images: Vec<BuiltImage>,
}

impl Manifest {
    pub const SCHEMA: &'static str = "harness-images/v1";

    /// The tag of [`Manifest::unbuilt`]'s images.
    pub const UNBUILT_TAG: &'static str = "unbuilt";

    /// Stand-ins for a dry run on a machine without `make images`: every workload as
    /// `harness/<workload>:unbuilt` (no binary, nothing built). A run never uses them: it
    /// needs the content tags `make images` writes.
    pub fn unbuilt() -> Self {
        let images = WORKLOADS
            .iter()
            .map(|w| BuiltImage {
                workload: w.name.to_owned(),
                image: format!("{REPOSITORY_PREFIX}{}:{}", w.name, Self::UNBUILT_TAG),
                binary_sha256: String::new(),
                binary: PathBuf::new(),
                built: false,
            })
            .collect();
        Self::new("unbuilt", images)
    }

    pub fn new(rust_target: &str, images: Vec<BuiltImage>) -> Self {
        Self {
            schema: Self::SCHEMA.to_owned(),
            rust_target: rust_target.to_owned(),
            images,
        }
    }

    /// The image of `workload`.
    pub fn image(&self, workload: &str) -> Option<&BuiltImage> {
        self.images.iter().find(|i| i.workload == workload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_named_by_binary_content() {
        let sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(
            image_reference("flagsvc", sha),
            "harness/flagsvc:sha256-0123456789abcdef"
        );
        let built = BuiltImage {
            workload: "flagsvc".into(),
            image: image_reference("flagsvc", sha),
            binary_sha256: sha.into(),
            binary: PathBuf::from("/x"),
            built: true,
        };
        assert_eq!(built.repository(), "harness/flagsvc");
        assert_eq!(built.tag(), "sha256-0123456789abcdef");
    }

    #[test]
    fn the_cargo_command_builds_static_binaries_for_the_target() {
        let mut opts = BuildOptions::new("/repo", "x86_64-unknown-linux-gnu");
        opts.workloads.truncate(2);
        let line = cargo_build(&opts).command_line();
        assert!(
            line.starts_with("cd /repo && RUSTFLAGS='-C target-feature=+crt-static' "),
            "{line}"
        );
        assert!(
            line.ends_with(
                "build --profile image --target x86_64-unknown-linux-gnu -p flagsvc --bin flagsvc \
                 -p sidecar --bin sidecar --message-format json-render-diagnostics"
            ),
            "{line}"
        );
    }

    #[test]
    fn cargo_messages_name_the_executables() {
        let stdout = r#"{"reason":"compiler-artifact","target":{"name":"tokio","kind":["lib"]},"executable":null}
{"reason":"compiler-artifact","target":{"name":"flagsvc","kind":["bin"]},"executable":"/repo/target/x86_64-unknown-linux-gnu/image/flagsvc"}
{"reason":"build-finished","success":true}"#;
        assert_eq!(
            cargo_executables(stdout),
            BTreeMap::from([(
                "flagsvc".to_owned(),
                PathBuf::from("/repo/target/x86_64-unknown-linux-gnu/image/flagsvc")
            )])
        );
    }

    #[test]
    fn the_dockerfile_pulls_nothing() {
        let text = dockerfile("loadgen");
        assert!(text.starts_with("FROM scratch\n"));
        assert!(text.contains("ENTRYPOINT [\"/loadgen\"]"));
        assert_eq!(text.matches("FROM").count(), 1);
    }

    #[test]
    fn dynamically_linked_binaries_are_refused() {
        // This test binary is a normal (dynamic) Linux executable.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let machine =
            elf_machine_for(&format!("{}-unknown-linux-gnu", std::env::consts::ARCH)).unwrap();
        let err = check_static(&me, machine).unwrap_err();
        assert!(err.contains("PT_INTERP"), "{err}");
        assert!(check_static(b"#!/bin/sh\n", machine).is_err());
        let other = if machine == 62 { 183 } else { 62 };
        assert!(
            check_static(&me, other)
                .unwrap_err()
                .contains("ELF machine")
        );
        assert!(matches!(
            elf_machine_for("x86_64-apple-darwin"),
            Err(ImageError::UnknownTarget(_))
        ));
        assert_eq!(
            rust_target_for_docker_arch("arm64\n"),
            Some("aarch64-unknown-linux-gnu")
        );
    }
}
