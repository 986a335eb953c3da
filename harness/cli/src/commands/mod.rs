//! One module per subcommand; each exposes `XArgs` (clap) and `run(XArgs) -> exit::Outcome`.

pub mod compare;
pub mod hints;
pub mod images;
pub mod import;
pub mod kind_config;
mod kind_plan;
pub(crate) mod kube_yaml;
pub mod matrix;
mod out_dir;
pub mod pins;
pub mod plan;
pub mod report;
pub mod run;
mod run_target;
pub mod schema;
mod target;
pub mod validate;
