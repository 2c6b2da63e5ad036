//! What a request's path names: a resource or a feed of them, and the resource type and
//! link its signature covers (reference/gateway.md §1).
//!
//! Paths are made of `type/id` pairs (`dbs/D/colls/C/docs/I`); an odd number of segments is
//! a feed (`dbs/D/colls/C/docs`). Clients collapse or add slashes freely (Python ends every
//! URL with `/`) and percent-encode ids, so segments are split on `/`, empty ones dropped,
//! and each decoded before matching.

use super::auth::percent_decode;
use crate::engine::ScriptKind;

/// A resource or feed the gateway serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    /// `GET /`: the account document.
    Account,
    Databases,
    Database {
        db: String,
    },
    Containers {
        db: String,
    },
    Container {
        db: String,
        container: String,
    },
    Documents {
        db: String,
        container: String,
    },
    Document {
        db: String,
        container: String,
        id: String,
    },
    PartitionKeyRanges {
        db: String,
        container: String,
    },
    /// A container's stored procedures, triggers or user-defined functions.
    Scripts {
        db: String,
        container: String,
        kind: ScriptKind,
    },
    Script {
        db: String,
        container: String,
        kind: ScriptKind,
        id: String,
    },
    Offers,
    Offer {
        id: String,
    },
    /// A well-formed path to something the gateway does not serve (users, permissions,
    /// attachments...): signed like any other, answered 404 or 400.
    Other {
        resource_type: String,
        path: String,
    },
}

/// A parsed request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub resource: Resource,
    /// The resource type the signature covers (`dbs`, `colls`, `docs`, ... or "").
    pub resource_type: String,
    /// The resource link the signature covers.
    pub resource_link: String,
}

impl Target {
    /// Parses a request path (without the query string); `None` when it is not valid
    /// percent-encoding or UTF-8.
    pub fn parse(path: &str) -> Option<Target> {
        let segments = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(percent_decode)
            .collect::<Option<Vec<String>>>()?;
        let (resource_type, resource_link) = match segments.len() {
            0 => (String::new(), String::new()),
            n if n % 2 == 1 => (segments[n - 1].clone(), segments[..n - 1].join("/")),
            n => (segments[n - 2].clone(), segments.join("/")),
        };
        let resource = resource_of(&segments).unwrap_or_else(|| Resource::Other {
            resource_type: resource_type.clone(),
            path: segments.join("/"),
        });
        Some(Target {
            resource,
            resource_type,
            resource_link,
        })
    }
}

fn resource_of(s: &[String]) -> Option<Resource> {
    let seg: Vec<&str> = s.iter().map(String::as_str).collect();
    let own = |i: usize| s[i].clone();
    Some(match seg.as_slice() {
        [] => Resource::Account,
        ["dbs"] => Resource::Databases,
        ["dbs", _] => Resource::Database { db: own(1) },
        ["dbs", _, "colls"] => Resource::Containers { db: own(1) },
        ["dbs", _, "colls", _] => Resource::Container {
            db: own(1),
            container: own(3),
        },
        ["dbs", _, "colls", _, "docs"] => Resource::Documents {
            db: own(1),
            container: own(3),
        },
        ["dbs", _, "colls", _, "docs", _] => Resource::Document {
            db: own(1),
            container: own(3),
            id: own(5),
        },
        ["dbs", _, "colls", _, "pkranges"] => Resource::PartitionKeyRanges {
            db: own(1),
            container: own(3),
        },
        ["dbs", _, "colls", _, kind] => Resource::Scripts {
            db: own(1),
            container: own(3),
            kind: script_kind(kind)?,
        },
        ["dbs", _, "colls", _, kind, _] => Resource::Script {
            db: own(1),
            container: own(3),
            kind: script_kind(kind)?,
            id: own(5),
        },
        ["offers"] => Resource::Offers,
        ["offers", _] => Resource::Offer { id: own(1) },
        _ => return None,
    })
}

fn script_kind(segment: &str) -> Option<ScriptKind> {
    match segment {
        "sprocs" => Some(ScriptKind::StoredProcedure),
        "triggers" => Some(ScriptKind::Trigger),
        "udfs" => Some(ScriptKind::UserDefinedFunction),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(path: &str) -> (Resource, String, String) {
        let t = Target::parse(path).unwrap();
        (t.resource, t.resource_type, t.resource_link)
    }

    #[test]
    fn feeds_and_resources_sign_as_documented() {
        assert_eq!(t("/"), (Resource::Account, "".into(), "".into()));
        assert_eq!(t("/dbs"), (Resource::Databases, "dbs".into(), "".into()));
        assert_eq!(
            t("/dbs/MyDb/colls/MyColl/docs/"),
            (
                Resource::Documents {
                    db: "MyDb".into(),
                    container: "MyColl".into()
                },
                "docs".into(),
                "dbs/MyDb/colls/MyColl".into()
            )
        );
        assert_eq!(
            t("//dbs/MyDb/colls/MyColl/docs/Item%201/"),
            (
                Resource::Document {
                    db: "MyDb".into(),
                    container: "MyColl".into(),
                    id: "Item 1".into()
                },
                "docs".into(),
                "dbs/MyDb/colls/MyColl/docs/Item 1".into()
            )
        );
        assert_eq!(
            t("/dbs/D/colls/C/pkranges").1,
            "pkranges",
            "pkranges is a feed of the container"
        );
        assert_eq!(t("/offers/AbC1").0, Resource::Offer { id: "AbC1".into() });
    }

    #[test]
    fn unknown_paths_keep_their_signing_info() {
        let (r, ty, link) = t("/dbs/D/users/U");
        assert!(matches!(r, Resource::Other { .. }));
        assert_eq!((ty.as_str(), link.as_str()), ("users", "dbs/D/users/U"));
        let (r, ty, link) = t("/dbs/D/colls/C/sprocs/S");
        assert!(matches!(r, Resource::Script { .. }));
        assert_eq!(
            (ty.as_str(), link.as_str()),
            ("sprocs", "dbs/D/colls/C/sprocs/S")
        );
        assert!(Target::parse("/dbs/%zz").is_none());
        assert!(Target::parse("/dbs/%C3%28").is_none(), "invalid UTF-8");
    }
}
