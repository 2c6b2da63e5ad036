//! The engine on a real temporary store: items, patch, batch, the change feed, partitioning,
//! time to live and unique keys, search policies, index maintenance and use, compaction,
//! and the sample sets, denormalization and workbench built on it.

mod batch;
mod denormalization;
mod feed;
mod index_maintenance;
mod index_metrics;
mod index_order_by;
mod index_policy_change;
mod index_served;
mod items;
mod partitioning;
mod patch;
mod sample_scripts;
mod samples;
mod scripts;
mod search_policies;
mod store_compact;
mod ttl_unique;
mod workbench;
