//! `GET /`: the database account document. Clients read it first; with endpoint discovery
//! on they move to the URLs it lists, so it advertises exactly the scheme, host and port the
//! client used (reference/gateway.md §4).

use serde_json::json;

use super::Context;
use crate::error::StatusCode;
use crate::gateway::call::Call;
use crate::gateway::reply::Reply;

/// One region, named as the emulator names its own.
const REGION: &str = "South Central US";

pub fn read(ctx: &Context, call: &Call) -> Reply {
    let host = call
        .header("host")
        .filter(|h| !h.is_empty())
        .unwrap_or(&ctx.authority);
    let endpoint = format!("{}://{host}/", ctx.scheme);
    let location = json!([{ "name": REGION, "databaseAccountEndpoint": endpoint }]);
    Reply::json(
        StatusCode::Ok,
        &json!({
            "_self": "",
            "id": "cosmoscope",
            "_rid": host,
            "media": "//media/",
            "addresses": "//addresses/",
            "_dbs": "//dbs/",
            "writableLocations": location,
            "readableLocations": location,
            "enableMultipleWriteLocations": false,
            "continuousBackupEnabled": false,
            "enableNRegionSynchronousCommit": false,
            "userReplicationPolicy": {
                "asyncReplication": false, "minReplicaSetSize": 1, "maxReplicasetSize": 4
            },
            "userConsistencyPolicy": { "defaultConsistencyLevel": "Session" },
            "systemReplicationPolicy": { "minReplicaSetSize": 1, "maxReplicasetSize": 4 },
            "readPolicy": { "primaryReadCoefficient": 1, "secondaryReadCoefficient": 1 },
            // A string holding JSON, as the service sends it; the limits are the service's
            // (reference/cosmos.md), and the features the ones this query engine has.
            "queryEngineConfiguration": json!({
                "maxSqlQueryInputLength": 262144,
                "maxJoinsPerSqlQuery": 10,
                "maxLogicalAndPerSqlQuery": 500,
                "maxLogicalOrPerSqlQuery": 500,
                "maxUdfRefPerSqlQuery": 10,
                "maxInExpressionItemsCount": 16000,
                "queryEngineConfigurationVersion": "1",
                "spatialMaxGeometryPointCount": 256,
                "sqlAllowNonFiniteNumbers": false,
                "sqlDisableOptimizationFlags": 0,
                "enableSpatialIndexing": true,
                "maxInMemorySortDocumentCount": 500,
                "maxQueryRequestTimeoutFraction": 0.9,
                "sqlAllowAggregateFunctions": true,
                "sqlAllowGroupByClause": true,
                "sqlAllowLike": true,
                "sqlAllowSubQuery": true,
                "sqlAllowScalarSubQuery": true,
                "sqlAllowTop": true
            })
            .to_string(),
        }),
    )
}
