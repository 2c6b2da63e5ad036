//! Helpers the indexing tests share: policies from paths or JSON, document paths from
//! `/a/0/b`, and the error a rejected policy gives.

use serde_json::Value;

use super::error::PolicyError;
use super::path::PathSegment;
use super::policy::{IndexingPolicy, PathSpec};

pub(super) fn p(s: &str) -> Vec<PathSegment> {
    s.split('/')
        .filter(|part| !part.is_empty())
        .map(|part| match part.parse::<usize>() {
            Ok(i) => PathSegment::Index(i),
            Err(_) => PathSegment::Property(part.to_string()),
        })
        .collect()
}

pub(super) fn policy(included: &[&str], excluded: &[&str]) -> IndexingPolicy {
    IndexingPolicy {
        included_paths: included.iter().map(|s| PathSpec::new(*s)).collect(),
        excluded_paths: excluded.iter().map(|s| PathSpec::new(*s)).collect(),
        ..IndexingPolicy::default()
    }
}

pub(super) fn from_json(v: Value) -> IndexingPolicy {
    serde_json::from_value(v).expect("policy json")
}

pub(super) fn err(policy: &IndexingPolicy) -> PolicyError {
    policy.validate().expect_err("policy should be rejected")
}
