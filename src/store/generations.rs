//! The index generations one write transaction maintains.
//!
//! Writes keep the container's current generation and, while a replacement builds, the
//! previous one too. A generation being built is kept only for the items its builder has
//! already passed: it indexes the others itself when it gets to them (and a build from
//! nothing, a bulk load's, has passed none). For those a write computes no entries, only
//! their number, which it is charged for.

use super::catalog::ContainerDef;
use super::epk::Epk;
use super::index::{DocEntries, IndexLayout, Indexed};
use crate::error::{Error, Result};

#[derive(Clone)]
pub(super) struct Generations {
    /// The current policy's first, then (while a replacement builds) the previous one's.
    layouts: Vec<IndexLayout>,
    /// While a replacement builds: the last item key the builder indexed (`None` before
    /// its first batch).
    build_cursor: Option<Option<Vec<u8>>>,
}

impl Generations {
    /// The generations writes to `def` maintain now, compiled.
    pub fn of(def: &ContainerDef) -> Result<Generations> {
        let mut layouts = vec![IndexLayout::current(def)];
        let mut build_cursor = None;
        if let Some(build) = &def.index_build {
            layouts.push(IndexLayout::new(
                def.rid,
                build.previous_generation,
                &build.previous_policy,
                build.previous_string_bytes,
            ));
            build_cursor = Some(match &build.resume_after {
                Some(hex) => Some(
                    Epk::from_hex(hex)
                        .ok_or_else(|| Error::corrupt("index build cursor"))?
                        .0,
                ),
                None => None,
            });
        }
        Ok(Generations {
            layouts,
            build_cursor,
        })
    }

    pub fn layouts(&self) -> &[IndexLayout] {
        &self.layouts
    }

    /// Whether generation `i` keeps the item stored at `key` up to date now: not when it
    /// is being built and its builder has not reached the item yet.
    pub fn maintains(&self, i: usize, key: &[u8]) -> bool {
        let ahead_of_build = i == 0
            && self
                .build_cursor
                .as_ref()
                .is_some_and(|cursor| cursor.as_deref().is_none_or(|c| key > c));
        !ahead_of_build
    }

    /// Whether any generation indexes anything.
    pub fn any_enabled(&self) -> bool {
        self.layouts.iter().any(IndexLayout::enabled)
    }

    /// The index entries of one version of the item stored at `key` (EPK `epk`, id `id`)
    /// in every generation; in one that does not maintain the item, only their number.
    pub fn entries(&self, doc: &impl Indexed, key: &[u8], epk: &Epk, id: &str) -> Vec<DocEntries> {
        self.layouts
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if self.maintains(i, key) {
                    l.entries(doc, epk.as_bytes(), id)
                } else {
                    l.counted(doc)
                }
            })
            .collect()
    }
}
