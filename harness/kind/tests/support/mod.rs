#![allow(dead_code)]
pub mod api_server;
pub mod fake_cluster;
pub mod fakes;
