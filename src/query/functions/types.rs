//! Placeholder until the types family lands.

use super::FnSpec;

pub const FUNCTIONS: &[FnSpec] = &[];
