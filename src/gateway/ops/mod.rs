//! The REST operations, one module per resource: the account, databases, containers and
//! their offers, partition key ranges, documents (point operations and batches), queries,
//! the change feed, and server-side scripts (stored procedures, triggers, UDFs). Each turns a [`Call`] into engine calls and the engine's answer
//! into a [`Reply`]; none of them knows the store or adds RU rules of its own.

mod account;
mod containers;
mod databases;
mod feed;
mod items;
pub use items::{Submitted, submit};
mod offers;
mod queries;
mod ranges;
mod scripts;
mod statistics;

pub use queries::query_spec;

use std::sync::Arc;

use hyper::Method;

use super::call::{Call, header};
use super::reply::Reply;
use super::resource::Resource;
use crate::engine::{Backend, ScriptKind};
use crate::error::{Error, Result, StatusCode};

/// What every operation may need besides the request.
pub struct Context {
    pub backend: Arc<dyn Backend>,
    /// `http` or `https`, for the account document's locations.
    pub scheme: &'static str,
    /// The address the gateway listens on, for clients that send no `Host`.
    pub authority: String,
    /// Whether containers created here enforce their throughput.
    pub enforce_throughput: bool,
}

/// The operation's name as the service's diagnostics name it, for the Requests view.
pub fn operation_name(call: &Call) -> &'static str {
    let m = &call.method;
    match &call.target.resource {
        Resource::Account => "ReadDatabaseAccount",
        Resource::Databases if *m == Method::POST && call.flag(header::IS_QUERY) => {
            "QueryDatabases"
        }
        Resource::Databases if *m == Method::POST => "CreateDatabase",
        Resource::Databases => "ReadDatabaseFeed",
        Resource::Database { .. } if *m == Method::DELETE => "DeleteDatabase",
        Resource::Database { .. } => "ReadDatabase",
        Resource::Containers { .. } if *m == Method::POST && call.flag(header::IS_QUERY) => {
            "QueryContainers"
        }
        Resource::Containers { .. } if *m == Method::POST => "CreateContainer",
        Resource::Containers { .. } => "ReadContainerFeed",
        Resource::Container { .. } if *m == Method::DELETE => "DeleteContainer",
        Resource::Container { .. } if *m == Method::PUT => "ReplaceContainer",
        Resource::Container { .. } => "ReadContainer",
        Resource::Documents { .. } if *m == Method::POST => {
            if call.flag(header::IS_QUERY_PLAN) {
                "QueryPlan"
            } else if call.flag(header::IS_QUERY) || is_query_content(call) {
                "Query"
            } else if call.flag(header::IS_BATCH) {
                "Batch"
            } else if call.flag(header::IS_UPSERT) {
                "Upsert"
            } else {
                "Create"
            }
        }
        Resource::Documents { .. } if feed::is_change_feed(call) => "ChangeFeed",
        Resource::Documents { .. } => "ReadFeed",
        Resource::Document { .. } => match *m {
            Method::PUT => "Replace",
            Method::DELETE => "Delete",
            Method::PATCH => "Patch",
            _ => "Read",
        },
        Resource::PartitionKeyRanges { .. } => "ReadPartitionKeyRangeFeed",
        Resource::Scripts { .. } if *m == Method::POST && call.flag(header::IS_QUERY) => {
            "QueryScripts"
        }
        Resource::Scripts { .. } if *m == Method::POST => "CreateScript",
        Resource::Scripts { .. } => "ReadScriptFeed",
        Resource::Script {
            kind: ScriptKind::StoredProcedure,
            ..
        } if *m == Method::POST => "ExecuteStoredProcedure",
        Resource::Script { .. } => match *m {
            Method::PUT => "ReplaceScript",
            Method::DELETE => "DeleteScript",
            _ => "ReadScript",
        },
        Resource::Offers if *m == Method::POST => "QueryOffers",
        Resource::Offers => "ReadOfferFeed",
        Resource::Offer { .. } if *m == Method::PUT => "ReplaceOffer",
        Resource::Offer { .. } => "ReadOffer",
        Resource::Other { .. } => "Unsupported",
    }
}

/// Runs one authorized request. Blocking: the server calls it off the async workers.
pub fn handle(ctx: &Context, call: &Call) -> Reply {
    match dispatch(ctx, call) {
        Ok(reply) => reply,
        Err(e) => Reply::error(&e),
    }
}

fn dispatch(ctx: &Context, call: &Call) -> Result<Reply> {
    let m = &call.method;
    match &call.target.resource {
        Resource::Account if *m == Method::GET => Ok(account::read(ctx, call)),
        Resource::Databases if *m == Method::GET => databases::list(ctx),
        Resource::Databases if *m == Method::POST && call.flag(header::IS_QUERY) => {
            databases::query(ctx, call)
        }
        Resource::Databases if *m == Method::POST => databases::create(ctx, call),
        Resource::Database { db } if *m == Method::GET => databases::read(ctx, db),
        Resource::Database { db } if *m == Method::DELETE => databases::delete(ctx, db),
        Resource::Containers { db } if *m == Method::GET => containers::list(ctx, db),
        Resource::Containers { db } if *m == Method::POST && call.flag(header::IS_QUERY) => {
            containers::query(ctx, call, db)
        }
        Resource::Containers { db } if *m == Method::POST => containers::create(ctx, call, db),
        Resource::Container { db, container } => match *m {
            Method::GET => containers::read(ctx, call, db, container),
            Method::PUT => containers::replace(ctx, call, db, container),
            Method::DELETE => containers::delete(ctx, db, container),
            _ => Err(not_allowed(call)),
        },
        Resource::PartitionKeyRanges { db, container } if *m == Method::GET => {
            ranges::list(ctx, call, db, container)
        }
        Resource::Documents { db, container } if *m == Method::POST => match document_post(call) {
            DocumentPost::QueryPlan => queries::plan(ctx, call, db, container),
            DocumentPost::Query => queries::query(ctx, call, db, container),
            DocumentPost::Batch => items::batch(ctx, call, db, container),
            DocumentPost::Write => items::create(ctx, call, db, container),
        },
        Resource::Documents { db, container } if *m == Method::GET => {
            if feed::is_change_feed(call) {
                feed::read(ctx, call, db, container)
            } else {
                queries::read_feed(ctx, call, db, container)
            }
        }
        Resource::Document { db, container, id } => match *m {
            Method::GET => items::read(ctx, call, db, container, id),
            Method::PUT => items::replace(ctx, call, db, container, id),
            Method::DELETE => items::delete(ctx, call, db, container, id),
            Method::PATCH => items::patch(ctx, call, db, container, id),
            _ => Err(not_allowed(call)),
        },
        Resource::Scripts {
            db,
            container,
            kind,
        } => match *m {
            Method::GET => scripts::list(ctx, db, container, *kind),
            Method::POST if call.flag(header::IS_QUERY) || is_query_content(call) => {
                scripts::query(ctx, call, db, container, *kind)
            }
            Method::POST => scripts::create(ctx, call, db, container, *kind),
            _ => Err(not_allowed(call)),
        },
        Resource::Script {
            db,
            container,
            kind,
            id,
        } => match *m {
            Method::GET => scripts::read(ctx, db, container, *kind, id),
            Method::PUT => scripts::replace(ctx, call, db, container, *kind, id),
            Method::DELETE => scripts::delete(ctx, db, container, *kind, id),
            Method::POST if *kind == ScriptKind::StoredProcedure => {
                scripts::execute(ctx, call, db, container, id)
            }
            _ => Err(not_allowed(call)),
        },
        Resource::Offers if *m == Method::GET => offers::list(ctx),
        Resource::Offers if *m == Method::POST => offers::query(ctx, call),
        Resource::Offer { id } if *m == Method::GET => offers::read(ctx, id),
        Resource::Offer { id } if *m == Method::PUT => offers::replace(ctx, call, id),
        Resource::Other {
            resource_type,
            path,
        } => Err(unsupported(resource_type, path)),
        _ => Err(not_allowed(call)),
    }
}

/// What a POST to a container's documents asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DocumentPost {
    QueryPlan,
    Query,
    Batch,
    /// A create, or an upsert (`x-ms-documentdb-is-upsert`).
    Write,
}

fn document_post(call: &Call) -> DocumentPost {
    if call.flag(header::IS_QUERY_PLAN) {
        DocumentPost::QueryPlan
    } else if call.flag(header::IS_QUERY) || is_query_content(call) {
        DocumentPost::Query
    } else if call.flag(header::IS_BATCH) {
        DocumentPost::Batch
    } else {
        DocumentPost::Write
    }
}

/// Queries are POSTs with `application/query+json`, whether or not the client also sends
/// `x-ms-documentdb-isquery`.
fn is_query_content(call: &Call) -> bool {
    call.header(header::CONTENT_TYPE)
        .is_some_and(|c| c.starts_with("application/query+json"))
}

fn not_allowed(call: &Call) -> Error {
    Error::bad_request(format!(
        "{} is not an operation on /{}",
        call.method, call.target.resource_link
    ))
}

fn unsupported(resource_type: &str, path: &str) -> Error {
    let what = match resource_type {
        "users" | "permissions" => "users and permissions (resource tokens)",
        "conflicts" => "conflicts (there is one region, so there are none)",
        "attachments" => "attachments",
        "clientencryptionkeys" => "client encryption keys",
        _ => {
            return Error::not_found(format!(
                "the gateway has no resource at /{path}; it serves dbs, colls, docs, pkranges, \
                 sprocs, triggers, udfs and offers"
            ));
        }
    };
    Error::bad_request(format!(
        "cosmoscope's gateway does not serve {what} yet (/{path})"
    ))
}

/// The `_etag` of a resource that has no write history of its own here (databases,
/// containers, offers): it changes when the resource's timestamp does.
fn resource_etag(rid: &str, ts: i64) -> String {
    format!("\"{rid}-{ts:x}\"")
}

/// 201 for a resource created, as the service answers.
fn created(body: &impl serde::Serialize) -> Reply {
    Reply::json(StatusCode::Created, body)
}
