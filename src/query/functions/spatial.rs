//! Placeholder until the spatial family lands.

use super::FnSpec;

pub const FUNCTIONS: &[FnSpec] = &[];
