//! Placeholder until the array family lands.

use super::FnSpec;

pub const FUNCTIONS: &[FnSpec] = &[];
