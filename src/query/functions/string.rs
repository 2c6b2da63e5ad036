//! Placeholder until the string family lands.

use super::FnSpec;

pub const FUNCTIONS: &[FnSpec] = &[];
