//! Offers: each container's throughput as the service's `offers` resources, which SDKs
//! read (`container.read_offer()`, `get_throughput()`) and replace to change RU/s. An
//! offer's id is its container's rid. Raising throughput past what the ranges can serve
//! splits them, as `container set-throughput` does.

use serde_json::{Value, json};

use super::containers::self_link;
use super::databases::feed_of;
use super::queries::query_spec;
use super::{Context, resource_etag};
use crate::engine::{ContainerInfo, Throughput, query_values};
use crate::error::{Error, Result, StatusCode};
use crate::gateway::call::Call;
use crate::gateway::reply::Reply;

/// A container's offer in the service's shape (version 2 offers; autoscale ones carry
/// their maximum, and report a tenth of it, where they scale down to, as the throughput).
fn document(c: &ContainerInfo) -> Value {
    let content = match (c.throughput.manual, c.throughput.autoscale_max) {
        (_, Some(max)) => json!({
            "offerThroughput": max / 10,
            "offerIsRUPerMinuteThroughputEnabled": false,
            "offerAutopilotSettings": { "maxThroughput": max },
        }),
        (manual, None) => json!({
            "offerThroughput": manual.unwrap_or(0),
            "offerIsRUPerMinuteThroughputEnabled": false,
        }),
    };
    json!({
        "resource": self_link(c),
        "offerType": "Invalid",
        "offerResourceId": c.rid,
        "offerVersion": "V2",
        "content": content,
        "id": c.rid,
        "_rid": c.rid,
        "_self": format!("offers/{}/", c.rid),
        "_etag": resource_etag(&c.rid, c.ts),
        "_ts": c.ts,
    })
}

/// Every container's offer.
fn offers(ctx: &Context) -> Result<Vec<Value>> {
    Ok(ctx
        .backend
        .list_containers(None)?
        .iter()
        .map(document)
        .collect())
}

pub fn list(ctx: &Context) -> Result<Reply> {
    Ok(feed_of("Offers", "", &offers(ctx)?))
}

pub fn query(ctx: &Context, call: &Call) -> Result<Reply> {
    let (sql, params) = query_spec(call)?;
    Ok(feed_of(
        "Offers",
        "",
        &query_values(&sql, &params, &offers(ctx)?)?,
    ))
}

fn find(ctx: &Context, id: &str) -> Result<ContainerInfo> {
    ctx.backend
        .list_containers(None)?
        .into_iter()
        .find(|c| c.rid == id)
        .ok_or_else(|| Error::not_found(format!("offer {id} does not exist")))
}

pub fn read(ctx: &Context, id: &str) -> Result<Reply> {
    Ok(Reply::json(StatusCode::Ok, &document(&find(ctx, id)?)))
}

/// Replaces the throughput: `content.offerThroughput` (manual) or
/// `content.offerAutopilotSettings.maxThroughput` (autoscale).
pub fn replace(ctx: &Context, call: &Call, id: &str) -> Result<Reply> {
    let body = call.json_object()?;
    let c = find(ctx, id)?;
    let content = body
        .get("content")
        .ok_or_else(|| Error::bad_request("an offer needs \"content\" with \"offerThroughput\""))?;
    let autoscale = content
        .get("offerAutopilotSettings")
        .and_then(|a| a.get("maxThroughput"))
        .and_then(Value::as_u64);
    let throughput = match (
        autoscale,
        content.get("offerThroughput").and_then(Value::as_u64),
    ) {
        (Some(max), _) => Throughput::Autoscale(max),
        (None, Some(ru)) => Throughput::Manual(ru),
        (None, None) => {
            return Err(Error::bad_request(
                "the offer's content needs a numeric \"offerThroughput\" or \
                 \"offerAutopilotSettings\": {\"maxThroughput\": N}",
            ));
        }
    };
    let info = ctx.backend.set_throughput(&c.database, &c.id, throughput)?;
    Ok(Reply::json(StatusCode::Ok, &document(&info)))
}
