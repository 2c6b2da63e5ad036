//! The continuation token: what a page tells the next one about where the query stands.
//!
//! A token is JSON, as the service's are, and only continues the query (text and
//! parameters) and container it was issued for.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::ordered::WalkAfter;
use crate::error::{Error, Result};
use crate::query::eval::value::Val;
use crate::store::epk::Epk;
use crate::store::keys::RangeId;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Token {
    v: u8,
    rid: String,
    /// Hash of the query text and parameters: a token only continues its own query.
    q: u64,
    /// Results already delivered.
    pub(super) skip: usize,
    /// Charge accrued by the previous pages (unrounded).
    pub(super) charged: f64,
    /// Streaming queries resume their scan at this item key (hex) ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    after: Option<String>,
    /// ... skipping this many of its rows (JOINs give an item several rows); when non-zero
    /// the item was loaded, and charged, by the previous page.
    #[serde(default)]
    pub(super) within: usize,
    /// Ranges read in document order that later pages continue: EPK bounds (hex), the
    /// document number to continue at (that of the item the page stopped in or before, which
    /// may be gone by then) and how many of that item's rows were delivered. After a split
    /// each child of such a range continues from there, so a range's children that come after
    /// the one a page stops in keep their own entry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ordered: Vec<(String, String, u64, usize)>,
    /// Results delivered so far (for TOP across pages).
    #[serde(default)]
    pub(super) emitted: u64,
    /// The routed ranges a computed result was first computed over. Its order depends on
    /// them (document order within each, ties by range), so after a split later pages
    /// compute it over these again, each with its children read as one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    layout: Vec<RangeId>,
    /// An ORDER BY the index yields continues after this entry: its value (hex), and the
    /// place of the last result among its ties (range, document). Later pages then read
    /// one page of entries instead of every entry up to theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    walk: Option<(String, usize, u64)>,
    /// The result is still being computed (see `super::background`): at the container's
    /// change sequence given here, over `layout`. Nothing has been delivered or charged yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    computing: Option<u64>,
}

/// Where a streamed page stopped.
#[derive(Debug, Clone)]
pub(super) struct Resume {
    /// The key of the item the next page starts with.
    pub(super) key: Vec<u8>,
    /// How many of that item's rows this page delivered.
    pub(super) within: usize,
    /// The item's document number, when its range is read in document order.
    pub(super) doc: Option<u64>,
    /// The bounds of the range the page stopped in.
    pub(super) range: Option<(Epk, Epk)>,
}

/// A range (or the children it split into) that continues in document order at document
/// number `from`, of whose rows `within` were delivered.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct OrderedSpan {
    pub(super) min: Epk,
    pub(super) max: Epk,
    pub(super) from: u64,
    pub(super) within: usize,
}

impl Resume {
    pub(super) fn at(key: &[u8], within: usize, doc: Option<u64>) -> Resume {
        Resume {
            key: key.to_vec(),
            within,
            doc,
            range: None,
        }
    }
}

impl Token {
    /// Reads the request's token, if any, for the query hashed as `hash` on the container
    /// whose resource id is `rid`.
    pub(super) fn read(text: Option<&str>, rid: &str, hash: u64) -> Result<Option<Token>> {
        let Some(text) = text else { return Ok(None) };
        let token: Token = serde_json::from_str(text).map_err(|e| {
            Error::bad_request(format!(
                "the continuation token is not one this store issued: {e}"
            ))
        })?;
        if token.rid != rid || token.q != hash {
            return Err(Error::bad_request(
                "the continuation token belongs to another query or container; run the query from the start",
            ));
        }
        Ok(Some(token))
    }

    /// The item key a streamed scan resumes at.
    pub(super) fn resume_key(&self) -> Result<Option<Vec<u8>>> {
        self.after
            .as_deref()
            .map(|hex| {
                Epk::from_hex(hex)
                    .map(|e| e.0)
                    .ok_or_else(|| Error::bad_request("the continuation token is damaged"))
            })
            .transpose()
    }

    /// The ranges that continue in document order (see [`Token::ordered`]), in EPK order.
    pub(super) fn ordered_spans(&self) -> Result<Vec<OrderedSpan>> {
        self.ordered
            .iter()
            .map(
                |(min, max, from, within)| match (Epk::from_hex(min), Epk::from_hex(max)) {
                    (Some(min), Some(max)) => Ok(OrderedSpan {
                        min,
                        max,
                        from: *from,
                        within: *within,
                    }),
                    _ => Err(Error::bad_request("the continuation token is damaged")),
                },
            )
            .collect()
    }

    /// The ranges a computed result was first computed over (empty for a streamed scan).
    pub(super) fn layout(&self) -> &[RangeId] {
        &self.layout
    }

    /// The change sequence of a result still being computed, if this token waits for one
    /// (see [`Token::computing`]).
    pub(super) fn computing(&self) -> Option<u64> {
        self.computing
    }

    /// The token of a page that delivered nothing because its result is still being
    /// computed at change sequence `version` over the ranges `layout`: the next page picks
    /// the result up where the computation left it.
    pub(super) fn waiting(
        previous: Option<&Token>,
        (rid, hash): (&str, u64),
        version: u64,
        layout: &[RangeId],
    ) -> String {
        let token = Token {
            v: 1,
            rid: rid.to_string(),
            q: hash,
            skip: 0,
            charged: 0.0,
            after: None,
            within: 0,
            ordered: Vec::new(),
            emitted: 0,
            layout: match previous {
                Some(t) if !t.layout.is_empty() => t.layout.clone(),
                _ => layout.to_vec(),
            },
            walk: None,
            computing: Some(version),
        };
        serde_json::to_string(&token).unwrap_or_default()
    }

    /// Where an ORDER BY walk resumes (see [`Token::walk`]).
    pub(super) fn walk_after(&self) -> Result<Option<WalkAfter>> {
        self.walk
            .as_ref()
            .map(|(hex, range, doc)| {
                Epk::from_hex(hex)
                    .map(|value| WalkAfter {
                        value: value.0,
                        tie: (*range, *doc),
                    })
                    .ok_or_else(|| Error::bad_request("the continuation token is damaged"))
            })
            .transpose()
    }

    /// The token for the page after this one, which follows `previous` (none on the first
    /// page), started at result `skip` of a computed result (0 for a streamed scan, which
    /// resumes at `resume` instead) over the ranges `layout`, delivered `delivered` results
    /// and brought the unrounded charge to `charged`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn next(
        previous: Option<&Token>,
        (rid, hash): (&str, u64),
        skip: usize,
        delivered: usize,
        charged: f64,
        resume: Option<&Resume>,
        (layout, walk): (&[RangeId], Option<&WalkAfter>),
    ) -> String {
        let token = Token {
            v: 1,
            rid: rid.to_string(),
            q: hash,
            skip: skip.saturating_add(delivered),
            charged,
            after: resume.map(|r| Epk(r.key.clone()).to_hex()),
            within: resume.map_or(0, |r| r.within),
            ordered: resume
                .map(|r| ordered_after(previous, r))
                .unwrap_or_default(),
            emitted: previous
                .map_or(0, |t| t.emitted)
                .saturating_add(delivered as u64),
            layout: match previous {
                Some(t) if !t.layout.is_empty() => t.layout.clone(),
                _ => layout.to_vec(),
            },
            walk: walk.map(|w| (Epk(w.value.clone()).to_hex(), w.tie.0, w.tie.1)),
            computing: None,
        };
        serde_json::to_string(&token).unwrap_or_default()
    }
}

/// The document-order entries of the token after a page that stopped at `resume`: the range
/// it stopped in if that is read in document order, then what is left, past that range, of
/// the previous token's entries (the later children of a range that split).
fn ordered_after(previous: Option<&Token>, resume: &Resume) -> Vec<(String, String, u64, usize)> {
    let Some((min, max)) = &resume.range else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(doc) = resume.doc {
        out.push((min.to_hex(), max.to_hex(), doc, resume.within));
    }
    let earlier = previous
        .and_then(|t| t.ordered_spans().ok())
        .unwrap_or_default();
    for span in earlier {
        if span.max > *max {
            out.push((
                std::cmp::max(&span.min, max).to_hex(),
                span.max.to_hex(),
                span.from,
                span.within,
            ));
        }
    }
    out
}

/// Hash of a query's text and parameters (in name order).
pub(super) fn query_hash(text: &str, params: &HashMap<String, Val>) -> u64 {
    let mut names: Vec<_> = params.iter().collect();
    names.sort_by(|a, b| a.0.cmp(b.0));
    let mut buf = text.as_bytes().to_vec();
    for (k, v) in names {
        buf.extend_from_slice(k.as_bytes());
        buf.extend_from_slice(
            v.to_json()
                .map(|j| j.to_string())
                .unwrap_or_default()
                .as_bytes(),
        );
    }
    crate::store::murmur3::hash128(&buf, 0).0
}
