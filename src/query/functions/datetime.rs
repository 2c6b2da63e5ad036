//! Placeholder until the datetime family lands.

use super::FnSpec;

pub const FUNCTIONS: &[FnSpec] = &[];
