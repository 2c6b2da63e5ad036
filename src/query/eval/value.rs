//! Runtime values of the query language and their semantics.
//!
//! A [`Val`] is a JSON value plus `undefined` (a missing property, distinct from `null`).
//! Composite values are reference-counted so projecting or grouping them does not copy.
//! The rules follow reference/cosmos.md §6.2: equality across types is undefined, `<`-style
//! comparisons work within numbers, strings and booleans only, and sorting uses the type order
//! undefined < null < false < true < numbers < strings < arrays < objects.

use std::cmp::Ordering;
use std::sync::Arc;

use serde_json::Value;

/// An object's members in their original order (objects are small; lookups scan).
pub type Members = Vec<(Arc<str>, Val)>;

#[derive(Debug, Clone, Default)]
pub enum Val {
    #[default]
    Undefined,
    Null,
    Bool(bool),
    Num(f64),
    Str(Arc<str>),
    Arr(Arc<Vec<Val>>),
    Obj(Arc<Members>),
}

impl Val {
    pub fn str(s: impl Into<Arc<str>>) -> Val {
        Val::Str(s.into())
    }

    pub fn arr(items: Vec<Val>) -> Val {
        Val::Arr(Arc::new(items))
    }

    pub fn obj(members: Members) -> Val {
        Val::Obj(Arc::new(members))
    }

    pub fn is_undefined(&self) -> bool {
        matches!(self, Val::Undefined)
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Num(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Val::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Val]> {
        match self {
            Val::Arr(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Members> {
        match self {
            Val::Obj(o) => Some(o),
            _ => None,
        }
    }

    /// `obj.name`; undefined for a missing member or a non-object.
    pub fn get(&self, name: &str) -> Val {
        match self {
            Val::Obj(o) => o
                .iter()
                .find(|(k, _)| &**k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default(),
            _ => Val::Undefined,
        }
    }

    /// `arr[i]`; undefined out of range or for a non-array.
    pub fn index(&self, i: f64) -> Val {
        match self {
            Val::Arr(a) if i >= 0.0 && i.fract() == 0.0 => {
                a.get(i as usize).cloned().unwrap_or_default()
            }
            _ => Val::Undefined,
        }
    }

    /// Only exactly `true` passes a WHERE clause.
    pub fn is_true(&self) -> bool {
        matches!(self, Val::Bool(true))
    }

    /// Position in the service's cross-type sort order.
    pub fn type_order(&self) -> u8 {
        match self {
            Val::Undefined => 0,
            Val::Null => 1,
            Val::Bool(_) => 2,
            Val::Num(_) => 3,
            Val::Str(_) => 4,
            Val::Arr(_) => 5,
            Val::Obj(_) => 6,
        }
    }

    /// The name `typeof`-style messages use.
    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Undefined => "undefined",
            Val::Null => "null",
            Val::Bool(_) => "boolean",
            Val::Num(_) => "number",
            Val::Str(_) => "string",
            Val::Arr(_) => "array",
            Val::Obj(_) => "object",
        }
    }

    /// The value as JSON; `None` for undefined. Undefined members and elements are dropped,
    /// as the service drops them from results. Non-finite numbers have no JSON form and
    /// become undefined too.
    pub fn to_json(&self) -> Option<Value> {
        Some(match self {
            Val::Undefined => return None,
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Num(n) => number_json(*n)?,
            Val::Str(s) => Value::String(String::from(&**s)),
            Val::Arr(a) => Value::Array(a.iter().filter_map(Val::to_json).collect()),
            Val::Obj(o) => Value::Object(
                o.iter()
                    .filter_map(|(k, v)| Some((String::from(&**k), v.to_json()?)))
                    .collect(),
            ),
        })
    }

    /// Whether a NaN or an infinity sits anywhere in the value: JSON has no way to write
    /// one, so such a value can't be a result (see [`Document::from_result`]).
    ///
    /// [`Document::from_result`]: crate::query::read::document::Document::from_result
    pub fn has_non_finite(&self) -> bool {
        match self {
            Val::Num(n) => !n.is_finite(),
            Val::Arr(a) => a.iter().any(Val::has_non_finite),
            Val::Obj(o) => o.iter().any(|(_, v)| v.has_non_finite()),
            _ => false,
        }
    }

    pub fn from_json(v: &Value) -> Val {
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => Val::Num(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => Val::Str(Arc::from(s.as_str())),
            Value::Array(a) => Val::arr(a.iter().map(Val::from_json).collect()),
            Value::Object(o) => Val::obj(
                o.iter()
                    .map(|(k, v)| (Arc::from(k.as_str()), Val::from_json(v)))
                    .collect(),
            ),
        }
    }
}

/// JSON number for a double: whole numbers print as integers, without a fraction or
/// exponent, as the service prints them (its docs show `DateTimeToTicks` as
/// 14320368000000000; see [`whole_number`]).
///
/// [`whole_number`]: crate::store::item::whole_number
pub fn number_json(n: f64) -> Option<Value> {
    match crate::store::item::whole_number(n) {
        Some(i) => Some(Value::from(i)),
        None => serde_json::Number::from_f64(n).map(Value::Number),
    }
}

/// `a = b` with the service's semantics: undefined when either side is undefined or the
/// types differ; deep equality for arrays and objects (member order does not matter).
pub fn sql_eq(a: &Val, b: &Val) -> Option<bool> {
    match (a, b) {
        (Val::Undefined, _) | (_, Val::Undefined) => None,
        _ if a.type_order() != b.type_order() => None,
        _ => Some(deep_eq(a, b)),
    }
}

fn deep_eq(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Num(x), Val::Num(y)) => x == y,
        (Val::Str(x), Val::Str(y)) => x == y,
        (Val::Arr(x), Val::Arr(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| deep_eq(p, q))
        }
        (Val::Obj(x), Val::Obj(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.iter().any(|(k2, v2)| k == k2 && deep_eq(v, v2)))
        }
        _ => false,
    }
}

/// `a != b`: like equality, but undefined for two arrays or two objects
/// (reference/cosmos.md §6.2).
pub fn sql_ne(a: &Val, b: &Val) -> Option<bool> {
    match (a, b) {
        (Val::Arr(_), Val::Arr(_)) | (Val::Obj(_), Val::Obj(_)) => None,
        _ => sql_eq(a, b).map(|x| !x),
    }
}

/// `<`, `<=`, `>`, `>=`: defined for two numbers, two strings (ordinal), two booleans or two
/// nulls; undefined otherwise (other type pairs, arrays, objects).
pub fn sql_cmp(a: &Val, b: &Val) -> Option<Ordering> {
    match (a, b) {
        (Val::Num(x), Val::Num(y)) => x.partial_cmp(y),
        (Val::Str(x), Val::Str(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(y)),
        (Val::Null, Val::Null) => Some(Ordering::Equal),
        _ => None,
    }
}

/// The total order ORDER BY, MIN/MAX and cross-partition merges use: type order first,
/// then values within a type.
pub fn total_cmp(a: &Val, b: &Val) -> Ordering {
    let by_type = a.type_order().cmp(&b.type_order());
    if by_type != Ordering::Equal {
        return by_type;
    }
    match (a, b) {
        (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
        (Val::Num(x), Val::Num(y)) => x.total_cmp(y),
        (Val::Str(x), Val::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Val::Arr(x), Val::Arr(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let o = total_cmp(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Val::Obj(x), Val::Obj(y)) => {
            for ((k1, v1), (k2, v2)) in x.iter().zip(y.iter()) {
                let o = k1.cmp(k2).then_with(|| total_cmp(v1, v2));
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => Ordering::Equal,
    }
}

impl PartialEq for Val {
    /// Structural equality (undefined equals undefined), for tests, DISTINCT and grouping.
    fn eq(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::Undefined, Val::Undefined) => true,
            (Val::Num(x), Val::Num(y)) => x == y || (x.is_nan() && y.is_nan()),
            _ => self.type_order() == other.type_order() && deep_eq(self, other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(j: Value) -> Val {
        Val::from_json(&j)
    }

    #[test]
    fn equality_is_three_valued() {
        assert_eq!(sql_eq(&v(json!(1)), &v(json!(1.0))), Some(true));
        assert_eq!(sql_eq(&v(json!(1)), &v(json!("1"))), None);
        assert_eq!(sql_eq(&Val::Undefined, &Val::Undefined), None);
        assert_eq!(sql_eq(&v(json!(null)), &v(json!(null))), Some(true));
        assert_eq!(
            sql_eq(&v(json!({"a": 1, "b": 2})), &v(json!({"b": 2, "a": 1}))),
            Some(true)
        );
        assert_eq!(sql_eq(&v(json!([1, 2])), &v(json!([2, 1]))), Some(false));
    }

    #[test]
    fn comparisons_need_matching_scalar_types() {
        assert_eq!(sql_cmp(&v(json!(1)), &v(json!(2))), Some(Ordering::Less));
        assert_eq!(
            sql_cmp(&v(json!("a")), &v(json!("B"))),
            Some(Ordering::Greater)
        );
        assert_eq!(sql_cmp(&v(json!(1)), &v(json!("a"))), None);
        assert_eq!(sql_cmp(&v(json!([1])), &v(json!([1]))), None);
    }

    #[test]
    fn total_order_follows_the_type_order() {
        let mut vals = [
            v(json!({"a": 1})),
            v(json!([1])),
            v(json!("s")),
            v(json!(3)),
            v(json!(true)),
            v(json!(false)),
            v(json!(null)),
            Val::Undefined,
        ];
        vals.sort_by(total_cmp);
        let names: Vec<_> = vals.iter().map(Val::type_name).collect();
        assert_eq!(
            names,
            [
                "undefined",
                "null",
                "boolean",
                "boolean",
                "number",
                "string",
                "array",
                "object"
            ]
        );
        assert_eq!(vals[2], Val::Bool(false));
    }

    #[test]
    fn json_round_trip_drops_undefined() {
        let o = Val::obj(vec![
            ("a".into(), Val::Undefined),
            ("b".into(), Val::Num(2.0)),
        ]);
        assert_eq!(o.to_json(), Some(json!({"b": 2})));
        let a = Val::arr(vec![Val::Num(1.5), Val::Undefined, Val::str("x")]);
        assert_eq!(a.to_json(), Some(json!([1.5, "x"])));
        assert_eq!(Val::Undefined.to_json(), None);
        assert_eq!(
            v(json!({"x": [1, {"y": null}]})).to_json(),
            Some(json!({"x": [1, {"y": null}]}))
        );
    }
}
