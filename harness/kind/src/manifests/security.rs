//! The security settings that make every pod of a run meet the Pod Security Standard
//! "restricted" (upstream `staging/src/k8s.io/pod-security-admission/policy/`, checks
//! `runAsNonRoot`, `allowPrivilegeEscalation`, `capabilities_restricted`, `seccompProfile_restricted`
//! of v1.34): a numeric non-root user (the images' `65532`), no privilege escalation, every
//! capability dropped, the runtime's default seccomp profile. The root filesystem is read-only
//! too (not required by the standard, but the scratch images write nothing outside `/tmp`,
//! which is an `emptyDir`).

use k8s_openapi::api::core::v1::{
    Capabilities, EmptyDirVolumeSource, PodSecurityContext, SeccompProfile, SecurityContext,
    Volume, VolumeMount,
};

/// The images' user and group (see `images::IMAGE_USER`).
pub const USER_ID: i64 = 65532;

/// The writable scratch directory every container gets.
pub const TMP_VOLUME: &str = "tmp";

fn seccomp() -> SeccompProfile {
    SeccompProfile {
        type_: "RuntimeDefault".to_owned(),
        ..Default::default()
    }
}

/// The pod-level context.
pub fn pod() -> PodSecurityContext {
    PodSecurityContext {
        run_as_non_root: Some(true),
        run_as_user: Some(USER_ID),
        run_as_group: Some(USER_ID),
        seccomp_profile: Some(seccomp()),
        ..Default::default()
    }
}

/// The context of each container.
pub fn container() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_owned()]),
            ..Default::default()
        }),
        read_only_root_filesystem: Some(true),
        run_as_non_root: Some(true),
        run_as_user: Some(USER_ID),
        run_as_group: Some(USER_ID),
        seccomp_profile: Some(seccomp()),
        ..Default::default()
    }
}

/// `/tmp` as an `emptyDir`, the one place a container may write.
pub fn tmp_volume() -> Volume {
    Volume {
        name: TMP_VOLUME.to_owned(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    }
}

pub fn tmp_mount() -> VolumeMount {
    VolumeMount {
        name: TMP_VOLUME.to_owned(),
        mount_path: "/tmp".to_owned(),
        ..Default::default()
    }
}
