#![allow(dead_code)]
pub mod api_server;
pub mod docker;
pub mod fake_cluster;
pub mod fakes;
pub mod files;
pub mod kind_run;
pub mod watchers;
