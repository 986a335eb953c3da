#![allow(dead_code)]
pub mod api_server;
pub mod fakes;
