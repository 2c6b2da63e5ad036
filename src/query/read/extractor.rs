//! Reading the demanded parts of an item: a partial demand scans the stored text
//! ([`super::lazy`]), a whole-item demand parses it in one serde pass ([`super::extract`]).

use crate::query::eval::value::Val;
use crate::query::read::demand::Demand;
use crate::query::read::extract::extract;
use crate::query::read::lazy::{self, Plan};
use crate::store::item::MemberDirectory;

/// Builds partial items for one query. Whole-item demands use one serde pass; partial
/// demands scan the item's text for just the demanded members ([`lazy`]), skipping
/// the rest without parsing it and stopping once every demanded member is found (perf.md:
/// a lazy field read is ~0.5 µs per 1 KB item, a full parse several µs).
pub struct Extractor {
    demand: Demand,
    plan: Option<Plan>,
    /// When nothing is demanded (a `SELECT *` whose filter an index lookup answered): the
    /// empty object every item gives, shared rather than built per item.
    nothing: Option<Val>,
}

impl Extractor {
    pub fn new(demand: Demand) -> Extractor {
        let (plan, nothing) = match &demand {
            Demand::Some(children) if children.is_empty() => (None, Some(Val::obj(Vec::new()))),
            Demand::Some(children) => (Some(Plan::new(children)), None),
            Demand::All => (None, None),
        };
        Extractor {
            demand,
            plan,
            nothing,
        }
    }

    /// The item as the query sees it.
    #[cfg(test)]
    pub fn extract(&self, json: &[u8]) -> Result<Val, String> {
        self.extract_stored(json, None)
    }

    /// Starts loading what [`Self::extract_stored`] will read of this stored item into the
    /// CPU's cache.
    pub fn prefetch(&self, directory: &MemberDirectory) {
        if let Some(plan) = &self.plan {
            lazy::prefetch(directory, plan);
        }
    }

    /// [`Self::extract`] of a stored item, read through its member directory when it has
    /// one.
    pub fn extract_stored(
        &self,
        json: &[u8],
        directory: Option<&MemberDirectory>,
    ) -> Result<Val, String> {
        if let Some(nothing) = &self.nothing {
            return Ok(nothing.clone());
        }
        if let Some(plan) = &self.plan
            && let Some(v) = lazy::stored_object(json, directory, plan)
        {
            return Ok(v);
        }
        extract(json, &self.demand).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::read::demand::of_query;
    use crate::query::syntax::ast::Query;
    use serde_json::json;

    fn parse(sql: &str) -> Query {
        crate::query::syntax::parser::parse(sql).unwrap()
    }

    #[test]
    fn extraction_projects_each_element_of_an_iterated_array() {
        // Extraction projects each element and keeps the others as they are.
        let doc = br#"{"id":"a","details":[{"qty":5,"sku":"x","big":[1,2]},7,{"sku":"y"}],"z":1}"#;
        let d = of_query(
            &parse("SELECT VALUE COUNT(1) FROM c JOIN d IN c.details WHERE d.qty > 4"),
            "c",
        );
        let expected = json!({"details": [{"qty": 5}, 7, {}]});
        assert_eq!(extract(doc, &d).unwrap().to_json().unwrap(), expected);
        assert_eq!(
            Extractor::new(d).extract(doc).unwrap().to_json().unwrap(),
            expected
        );
    }

    #[test]
    fn nothing_demanded_is_an_empty_object() {
        let d = of_query(&parse("SELECT VALUE COUNT(1) FROM c"), "c");
        let extractor = Extractor::new(d);
        for doc in [&br#"{"id":"a","n":1}"#[..], br#"{"id":"b"}"#] {
            assert_eq!(extractor.extract(doc).unwrap().to_json(), Some(json!({})));
        }
    }

    #[test]
    fn extraction_keeps_only_the_demand() {
        let doc = json!({"id": "a", "big": {"x": [1, 2, 3]}, "shipTo": {"city": "Oslo", "zip": "0150"}, "tags": ["t"]});
        let bytes = serde_json::to_vec(&doc).unwrap();
        let d = of_query(
            &parse("SELECT c.id FROM c WHERE c.shipTo.city = 'Oslo' AND ARRAY_LENGTH(c.tags) > 0"),
            "c",
        );
        let v = extract(&bytes, &d).unwrap();
        assert_eq!(
            v.to_json().unwrap(),
            json!({"id": "a", "shipTo": {"city": "Oslo"}, "tags": ["t"]})
        );
        let fast = Extractor::new(d.clone()).extract(&bytes).unwrap();
        assert_eq!(
            fast.to_json().unwrap(),
            json!({"id": "a", "shipTo": {"city": "Oslo"}, "tags": ["t"]})
        );
        let missing = Extractor::new(d).extract(br#"{"id": "b"}"#).unwrap();
        assert_eq!(missing.get("shipTo").get("city"), Val::Undefined);
        let all = extract(&bytes, &Demand::All).unwrap();
        assert_eq!(all.to_json().unwrap(), doc);
        assert!(extract(b"{\"a\": ", &Demand::All).is_err());
    }
}
