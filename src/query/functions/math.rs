//! Placeholder until the math family lands.

use super::FnSpec;

pub const FUNCTIONS: &[FnSpec] = &[];
