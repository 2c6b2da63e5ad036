//! placeholder during build
pub mod config;
pub mod http;
pub mod signing;
