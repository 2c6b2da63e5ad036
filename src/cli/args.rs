//! Command-line syntax (clap): every subcommand, flag and its help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "cosmoscope",
    version,
    about = "Explore partitioned JSON data on an embedded store that behaves like Azure Cosmos DB for NoSQL",
    long_about = "Explore partitioned JSON data on an embedded store that behaves like Azure Cosmos DB \
                  for NoSQL: partition keys, physical partitions that split, RU charges and a change feed.\n\n\
                  Without a subcommand, prints the store's status; on first launch, an empty store is \
                  first given the bundled sample sets (see `cosmoscope sample list`). Every subcommand prints JSON on stdout \
                  (NDJSON for streams); errors are {\"error\": {...}} with exit status 1 (request) or 2 (usage).",
    after_help = "Names are DATABASE/CONTAINER. Partition key values are JSON: --pk '\"c-42\"', --pk 5, \
                  --pk '[\"a\",\"b\"]' for hierarchical keys, --pk '{}' for the undefined key."
)]
pub struct Cli {
    /// Data directory of the store [default: $COSMOSCOPE_DATA_DIR or the platform data directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Open the explorer with the gateway (the Cosmos DB REST API, for applications on the
    /// SDKs) serving on ADDR in the same process, its requests live in view 6
    /// [default ADDR: 127.0.0.1:8081]. Clients sign with $COSMOSCOPE_GATEWAY_KEY, or else
    /// the emulator's well-known key (loopback addresses only)
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:8081"
    )]
    pub serve: Option<std::net::SocketAddr>,

    /// The explorer's gateway (--serve or the palette's action) serves HTTPS, with the
    /// self-signed certificate kept in the data directory
    #[arg(long)]
    pub serve_tls: bool,

    /// Containers created through the explorer's gateway enforce their throughput with
    /// 429s, as the service does
    #[arg(long)]
    pub serve_enforce_throughput: bool,

    /// When the explorer's writes, and its gateway's, reach the disk (as `serve --sync`)
    #[arg(long, value_enum, value_name = "WHEN")]
    pub serve_sync: Option<SyncMode>,

    /// Leave the mouse to the terminal (its own text selection) instead of clicking and
    /// scrolling in the explorer
    #[arg(long)]
    pub no_mouse: bool,

    #[command(flatten)]
    pub remote: RemoteArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// Parses the process's arguments. A negative number is a value wherever it stands
    /// (`--pk -5`, `--default-ttl -1`), never taken for an unknown flag: where a value
    /// cannot be negative (`--throughput -1`), its parser says so.
    pub fn parse_args() -> Result<Cli, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let matches = allow_negative_numbers(Cli::command()).try_get_matches()?;
        Cli::from_arg_matches(&matches)
    }
}

/// `cmd` and every subcommand taking negative numbers as values.
fn allow_negative_numbers(cmd: clap::Command) -> clap::Command {
    cmd.allow_negative_numbers(true)
        .mut_subcommands(allow_negative_numbers)
}

/// A remote account to open instead of the data directory (given before the subcommand).
#[derive(Debug, Clone, Args)]
pub struct RemoteArgs {
    /// Open the account at URL (`https://ACCOUNT.documents.azure.com:443/`, the emulator, or
    /// `cosmoscope serve`) instead of the data directory; sign with --key
    #[arg(long, env = "COSMOS_ENDPOINT", value_name = "URL")]
    pub endpoint: Option<String>,

    /// The account key for --endpoint (prefer $COSMOS_KEY: a key on the command line stays
    /// in the shell's history)
    #[arg(
        long = "key",
        env = "COSMOS_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub account_key: Option<crate::engine::remote::Secret>,

    /// The account as the portal's connection string: 'AccountEndpoint=URL;AccountKey=KEY;'
    #[arg(
        long,
        env = "COSMOS_CONNECTION_STRING",
        hide_env_values = true,
        value_name = "TEXT",
        conflicts_with = "endpoint"
    )]
    pub connection_string: Option<crate::engine::remote::Secret>,

    /// Trust the certificates in this PEM file besides the system's (for `cosmoscope serve
    /// --tls`, whose certificate path it prints)
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,

    /// Allow writes to the remote account (remote sessions are read-only without it)
    #[arg(long)]
    pub read_write: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create, delete or list databases
    #[command(subcommand)]
    Db(DbCommand),
    /// Create, inspect, change or delete containers
    #[command(subcommand)]
    Container(ContainerCommand),
    /// Point operations on one item
    #[command(subcommand)]
    Item(ItemCommand),
    /// Run a transactional batch read from stdin: a JSON array of up to 100 operations on one
    /// logical partition, all applied or none
    #[command(
        after_help = "Operations: {\"operationType\": \"Create\"|\"Upsert\"|\"Replace\"|\"Read\"|\"Delete\"|\"Patch\",                       \"id\"?, \"resourceBody\"?, \"ifMatch\"?}. Create/Upsert/Replace take the item as                       resourceBody; Read/Delete/Patch take an id; Patch takes its operations as resourceBody.                       A failed batch prints every result (the failing one with its status, the others 424)                       and exits with status 1."
    )]
    Batch {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// The batch's logical partition (JSON)
        #[arg(long, value_name = "JSON")]
        pk: String,
    },
    /// Upsert items from JSON-array or NDJSON files ("-" reads stdin)
    ///
    /// Every record of every file is checked before any is written. The records are then
    /// written in item-key order across all the files (so the items are appended and their
    /// pages fill whole), each item numbered (`_rid`) by its first record's place in the
    /// input; when an item appears more than once, its last record wins.
    Import {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// JSON-array or NDJSON files, "-" for stdin
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Items per transaction: larger batches import faster; a crash loses at most the
        /// open one. An import of more than one batch into an empty container builds the
        /// container's index once, sorted, at its end (queries scan until then)
        #[arg(long, value_name = "N", default_value_t = crate::engine::IMPORT_BATCH_ITEMS as u64, value_parser = clap::value_parser!(u64).range(1..))]
        batch_items: u64,
        /// Keep the free pages the import leaves in the data file. By default a large
        /// import is followed by compaction when no other process has the store open, since
        /// a large free list slows every later write
        #[arg(long)]
        no_compact: bool,
    },
    /// Print every item of a container, or of one logical partition, as NDJSON
    Export {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// Only this logical partition (JSON)
        #[arg(long, value_name = "JSON")]
        pk: Option<String>,
    },
    /// Run a NoSQL query: documents, continuation, charge, routing and per-partition metrics
    Query {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// The query text, e.g. "SELECT * FROM c WHERE c.customerId = @id", or "-" to read
        /// it from stdin. Text that starts with "-" (a "-- comment" line) goes after a "--"
        /// argument, as any such value does
        #[arg(required_unless_present = "file", conflicts_with = "file")]
        sql: Option<String>,
        /// Read the query text from FILE (for long queries; the service takes up to 512 KB)
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        /// A parameter value: --param @id='"c-42"' (repeatable)
        #[arg(long = "param", value_name = "@name=JSON")]
        params: Vec<String>,
        /// Run in one logical partition (or hierarchical prefix) given as JSON
        #[arg(long, value_name = "JSON")]
        pk: Option<String>,
        /// Results per page, or -1 for no item limit (the SDKs' MaxItemCount = -1); a page
        /// also ends before it would pass 4 MB, as the service's do
        #[arg(
            long,
            default_value_t = 100,
            value_name = "N",
            allow_negative_numbers = true
        )]
        max_items: i64,
        /// Resume after a previous page
        #[arg(long, value_name = "TOKEN")]
        continuation: Option<String>,
        /// Read every page
        #[arg(long)]
        all: bool,
    },
    /// Read the change feed (one page, --all pages, or --follow to stream NDJSON)
    Feed(FeedArgs),
    /// Physical partitions with statistics and load, and the largest and hottest logical partitions
    Partitions {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// How many of the largest and hottest logical partitions to list
        #[arg(long, default_value_t = 10)]
        top: usize,
        /// Seconds of per-second RU history to include
        #[arg(long, default_value_t = 600)]
        window: u64,
        /// Instead: list the logical partitions of this physical partition, a page at a time
        #[arg(long, value_name = "ID")]
        range: Option<u32>,
        /// With --range: logical partitions per page
        #[arg(long, default_value_t = 100, requires = "range")]
        limit: usize,
        /// With --range: continue after this EPK (the previous page's "next")
        #[arg(long, value_name = "EPK", requires = "range")]
        after: Option<String>,
    },
    /// Bundled sample data sets: list them, or load one into its own database
    #[command(subcommand)]
    Sample(SampleCommand),
    /// Compare data models: run an access-pattern suite against each of its designs and
    /// print a table (median RU, latency, requests, partitions touched per pattern)
    #[command(
        after_help = "NAME is a bundled suite (blog: the ten patterns of the blogging platform in designs v1, v2, v3; \
                      webstore: the store's pages in the relational and denormalized designs) or a suite file \
                      (TOML, or JSON; see sample-data/suites/). Missing designs are loaded from their sample sets \
                      first; their change feed processors run meanwhile, with leases in DATABASE/leases."
    )]
    Workbench(WorkbenchArgs),
    /// Run a live mixed workload (reads far more than writes) against a sample design, with
    /// its change feed processors, until the duration ends or Ctrl-C
    #[command(
        after_help = "NAME is a sample set: blog-v1, blog-v2, blog-v3, webstore or webstore-relational (loaded \
                      first if its database is missing). A one-line live summary goes to stderr on a terminal; \
                      the final report is JSON on stdout. Another process following the feed \
                      (`cosmoscope feed blog-v3/posts --from now --follow`) sees the changes live."
    )]
    Simulate(SimulateArgs),
    /// Advise on a partition key: place the container's items under today's key and
    /// candidate keys, replay a workload on a copy with each, and rank them with reasons
    #[command(
        after_help = "CANDIDATES is a comma-separated list: /a (one path), [/a,/b] (hierarchical, 2-3 levels), \
                      /a+/b (synthetic: the values joined with -), /a suffix 10 buckets (synthetic: the value \
                      and a suffix .1 to .10 from the item id's hash). Without --candidates, the properties in \
                      every item with many distinct values that the workload's queries filter on by equality \
                      are proposed. The WORKLOAD is a bundled suite (blog, webstore: the patterns of the design \
                      on this database), a suite file, or a workload file of weighted queries and point \
                      operations (see the README); without it, the bundled suite with a design on this \
                      database, if any. Each candidate is replayed on a temporary copy of the container, \
                      deleted afterwards."
    )]
    Advise(AdviseArgs),
    /// The effective partition key (EPK) of a partition key value and the range that owns it
    Epk {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// Partition key value (JSON); a shorter array is a hierarchical prefix
        value: String,
    },
    /// Rewrite the data file without its free pages and with full ones, a third smaller
    /// after a bulk load (needs no other process to have the store open)
    Compact,
    /// What the data file holds: each part (items, indexes, change feed, statistics, ...)
    /// with its entries and size, its free pages, and the items' own JSON bytes beside them
    Stats,
    /// Verify the whole store: the data file's structure, every item's JSON, statistics
    /// against a recount, indexes against a rebuild, the change feed. Exits 3 when anything
    /// is wrong
    Check,
    /// Serve the Azure Cosmos DB for NoSQL REST API (gateway mode) on this store, for
    /// applications using the official SDKs; runs until Ctrl-C
    Serve(ServeArgs),
    /// Stored procedures of a container: create, replace, read, list, delete, execute
    #[command(subcommand)]
    Sproc(SprocCommand),
    /// Pre- and post-triggers of a container, named on item writes with --pre-trigger and
    /// --post-trigger
    #[command(subcommand)]
    Trigger(TriggerCommand),
    /// User-defined functions of a container, called in queries as udf.NAME(...)
    #[command(subcommand)]
    Udf(ScriptCommand),
}

/// A script's JavaScript function, from FILE or stdin.
#[derive(Debug, Args)]
pub struct ScriptSource {
    /// The container, as DATABASE/CONTAINER
    pub target: String,
    /// The script's id in the container
    pub name: String,
    /// The JavaScript function (`function name(...) {...}`); stdin when absent or "-"
    pub file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ScriptName {
    /// The container, as DATABASE/CONTAINER
    pub target: String,
    /// The script's id in the container
    pub name: String,
}

/// What every stored procedure and user-defined function command does.
#[derive(Debug, Subcommand)]
pub enum ScriptCommand {
    /// Create it (409 if the name is taken; 400 if it does not compile)
    Create(ScriptSource),
    /// Replace its body
    Replace(ScriptSource),
    /// Print it: id, body and system properties
    Read(ScriptName),
    /// Print the container's, by id
    List {
        /// The container, as DATABASE/CONTAINER
        target: String,
    },
    /// Delete it
    Delete(ScriptName),
}

#[derive(Debug, Subcommand)]
pub enum SprocCommand {
    #[command(flatten)]
    Resource(ScriptCommand),
    /// Run a stored procedure in one logical partition, as one transaction; prints its
    /// response body, charge and (with --log) its console.log output
    Execute {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// The stored procedure's id
        name: String,
        /// The logical partition it runs in (JSON)
        #[arg(long, value_name = "JSON")]
        pk: String,
        /// A parameter (JSON), in order (repeatable)
        #[arg(long = "param", value_name = "JSON", allow_hyphen_values = true)]
        params: Vec<String>,
        /// Print the script's console.log output
        #[arg(long)]
        log: bool,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TriggerTypeArg {
    Pre,
    Post,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TriggerOperationArg {
    All,
    Create,
    Replace,
    Delete,
    Upsert,
}

#[derive(Debug, Args)]
pub struct TriggerSource {
    #[command(flatten)]
    pub source: ScriptSource,
    /// When it runs: before (pre) or after (post) the write that names it
    #[arg(long = "type", value_enum)]
    pub trigger_type: TriggerTypeArg,
    /// The writes it may be named on
    #[arg(long, value_enum, default_value_t = TriggerOperationArg::All)]
    pub operation: TriggerOperationArg,
}

#[derive(Debug, Subcommand)]
pub enum TriggerCommand {
    /// Create a trigger (409 if the name is taken; 400 if it does not compile)
    Create(TriggerSource),
    /// Replace a trigger's body, type and operation
    Replace(TriggerSource),
    /// Print it: id, body, type, operation and system properties
    Read(ScriptName),
    /// Print the container's triggers, by id
    List {
        /// The container, as DATABASE/CONTAINER
        target: String,
    },
    /// Delete it
    Delete(ScriptName),
}

/// Triggers an item write names (at most one of each, as the service allows).
#[derive(Debug, Args, Default)]
pub struct TriggerFlags {
    /// Run this pre-trigger before the write, in its transaction
    #[arg(long, value_name = "NAME")]
    pub pre_trigger: Option<String>,
    /// Run this post-trigger after the write, in its transaction
    #[arg(long, value_name = "NAME")]
    pub post_trigger: Option<String>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free one. Anything but a loopback address needs
    /// --key
    #[arg(long, default_value = "127.0.0.1:8081", value_name = "ADDR")]
    pub addr: std::net::SocketAddr,
    /// Account key clients sign requests with (base64) [default: the emulator's well-known key]
    #[arg(
        long,
        env = "COSMOSCOPE_GATEWAY_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub key: Option<String>,
    /// Serve HTTPS with a self-signed certificate for localhost, kept in the data directory
    #[arg(long)]
    pub tls: bool,
    /// Containers created through the gateway enforce their throughput with 429s, as the
    /// service does (off by default, as in the emulator)
    #[arg(long)]
    pub enforce_throughput: bool,
    /// When writes reach the disk: `commit` flushes each one before answering; `periodic`
    /// flushes every 100 ms, for an application's tests: several times the concurrent
    /// writes, and a crash of cosmoscope loses nothing, but an OS crash or power loss can
    /// lose the last 100 ms and damage the data file
    #[arg(long, value_enum, default_value_t = SyncMode::Commit, value_name = "WHEN")]
    pub sync: SyncMode,
}

/// `serve --sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SyncMode {
    Commit,
    Periodic,
}

impl SyncMode {
    pub fn durability(self) -> crate::engine::Durability {
        match self {
            SyncMode::Commit => crate::engine::Durability::EveryCommit,
            SyncMode::Periodic => crate::engine::Durability::Periodic,
        }
    }
}

#[derive(Debug, Args)]
pub struct WorkbenchArgs {
    /// A bundled suite (blog, webstore) or a suite file
    #[arg(value_name = "NAME|FILE")]
    pub suite: String,
    /// Scale of the sample sets loaded for missing designs
    #[arg(long, default_value_t = 1.0, value_name = "N")]
    pub scale: f64,
    /// Runs of each pattern on each design, each with different parameters
    #[arg(long, default_value_t = crate::workbench::DEFAULT_ITERATIONS, value_name = "N")]
    pub iterations: usize,
    /// Seed of the parameters drawn (and of sample sets loaded)
    #[arg(long, default_value_t = crate::samples::DEFAULT_SEED, value_name = "N")]
    pub seed: u64,
    /// Only these patterns (repeatable)
    #[arg(long = "pattern", value_name = "ID")]
    pub patterns: Vec<String>,
    /// Also project the table to N times today's data and throughput: physical partitions
    /// by the service's split rules, each charge recomputed from its counted work
    #[arg(long, value_name = "N")]
    pub project: Option<f64>,
    /// Print the report as JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AdviseArgs {
    /// The container, as DATABASE/CONTAINER
    pub target: String,
    /// A bundled suite (blog, webstore), a suite file, a workload file, or `recorded`: the
    /// queries and point operations the gateway served on the container
    #[arg(long, value_name = "SUITE|FILE|recorded")]
    pub workload: Option<String>,
    /// Candidate keys, comma-separated (repeatable): /a, [/a,/b], /a+/b, "/a suffix N buckets"
    #[arg(long, value_name = "KEYS", allow_hyphen_values = true)]
    pub candidates: Vec<String>,
    /// Requests per second the workload's weights are scaled to
    #[arg(long, default_value_t = crate::advisor::workload::DEFAULT_RATE, value_name = "OPS")]
    pub rate: f64,
    /// Runs of each pattern on each candidate, each with different parameters
    #[arg(long, default_value_t = crate::advisor::DEFAULT_ITERATIONS, value_name = "N")]
    pub iterations: usize,
    /// Seed of the parameters drawn
    #[arg(long, default_value_t = crate::samples::DEFAULT_SEED, value_name = "N")]
    pub seed: u64,
    /// Also project each candidate to N times today's data, throughput and request rate
    #[arg(long, value_name = "N")]
    pub project: Option<f64>,
    /// Print the advice as JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The sample set to drive
    #[arg(value_name = "NAME")]
    pub set: String,
    /// Target operations per second (0: as fast as the store answers)
    #[arg(long, default_value_t = crate::simulate::DEFAULT_RATE, value_name = "OPS")]
    pub rate: f64,
    /// Stop after this many seconds [default: run until Ctrl-C]
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Stop after this many operations
    #[arg(long, value_name = "N")]
    pub operations: Option<u64>,
    /// Share of writes sent to one logical partition (0 to 1), to make a hot partition
    #[arg(long, default_value_t = 0.0, value_name = "FRACTION")]
    pub hot_key: f64,
    /// Seed of the workload (and of the sample set if it is loaded)
    #[arg(long, default_value_t = crate::samples::DEFAULT_SEED, value_name = "N")]
    pub seed: u64,
    /// Scale of the sample set if it is loaded
    #[arg(long, default_value_t = 1.0, value_name = "N")]
    pub scale: f64,
    /// Do not run the change feed processors
    #[arg(long)]
    pub no_processors: bool,
    /// Clients sending at once, each paced to its share of the rate (one client's rate is
    /// capped by each operation's latency)
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub clients: usize,
}

#[derive(Debug, Subcommand)]
pub enum SampleCommand {
    /// One JSON line per bundled set: name, description, databases, containers and item counts
    List,
    /// Create a set's database and containers and fill them (409 if the database exists)
    Load {
        /// The set, as `sample list` names it (e.g. blog-v3)
        name: String,
        /// Item counts grow linearly with the scale; 1 is what first launch loads
        #[arg(long, default_value_t = 1.0, value_name = "N")]
        scale: f64,
        /// Generator seed: the same seed and scale give byte-identical items
        #[arg(long, default_value_t = crate::samples::DEFAULT_SEED, value_name = "N")]
        seed: u64,
    },
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Create a database
    Create {
        /// The database's name
        name: String,
    },
    /// Delete a database with all its containers
    Delete {
        /// The database's name
        name: String,
    },
    /// List databases
    List,
}

#[derive(Debug, Subcommand)]
pub enum ContainerCommand {
    /// Create a container
    Create(ContainerCreate),
    /// List containers of one database, or of all
    List {
        /// Only this database's containers
        database: Option<String>,
    },
    /// Settings, statistics and physical partitions of a container
    Show {
        /// The container, as DATABASE/CONTAINER
        target: String,
    },
    /// Delete a container with its items, statistics and change feed
    Delete {
        /// The container, as DATABASE/CONTAINER
        target: String,
    },
    /// Replace the indexing policy (JSON file) and rebuild the index; prints the container
    /// when the rebuild is complete (other processes keep querying meanwhile)
    SetIndexing {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// The indexing policy, a JSON file
        file: PathBuf,
    },
    /// Change throughput; raising it past partitions × 10,000 RU/s splits partitions
    SetThroughput {
        /// The container, as DATABASE/CONTAINER
        target: String,
        #[command(flatten)]
        throughput: ThroughputArgs,
        /// Turn RU budget enforcement (429s when a partition's second is spent) on or off
        #[arg(long, value_name = "BOOL")]
        enforce_throughput: Option<bool>,
    },
}

#[derive(Debug, Args)]
#[group(required = false, multiple = false)]
pub struct ThroughputArgs {
    /// Manual throughput in RU/s (multiple of 100, at least 400)
    #[arg(long, value_name = "RU")]
    pub throughput: Option<u64>,
    /// Autoscale maximum RU/s (multiple of 1000, at least 1000)
    #[arg(long, value_name = "MAX")]
    pub autoscale: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ContainerCreate {
    /// The container, as DATABASE/CONTAINER
    pub target: String,
    /// Partition key path, or 2–3 comma-separated paths for a hierarchical key
    #[arg(long, value_name = "/path[,/path2[,/path3]]")]
    pub partition_key: String,
    #[command(flatten)]
    pub throughput: ThroughputArgs,
    /// Storage limit per physical partition in bytes [default: 50 GB]; set it low to see splits on small data
    #[arg(long, value_name = "N")]
    pub max_partition_bytes: Option<u64>,
    /// Storage limit per logical partition in bytes [default: 20 GB]
    #[arg(long, value_name = "N")]
    pub max_logical_partition_bytes: Option<u64>,
    /// Default time to live in seconds (-1: TTL on, items never expire unless they set ttl)
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    pub default_ttl: Option<i64>,
    /// A unique key: one or more comma-separated paths (repeat for more unique keys)
    #[arg(long, value_name = "/a,/b")]
    pub unique_key: Vec<String>,
    /// Indexing policy JSON file [default: index everything]
    #[arg(long, value_name = "FILE")]
    pub indexing_policy: Option<PathBuf>,
    /// Vector embedding policy JSON file: {"vectorEmbeddings": [{"path", "dataType",
    /// "dimensions", "distanceFunction"}]}, bare or wrapped as {"vectorEmbeddingPolicy": ...};
    /// fixed once the container exists
    #[arg(long, value_name = "FILE")]
    pub vector_policy: Option<PathBuf>,
    /// Full-text policy JSON file: {"defaultLanguage", "fullTextPaths": [{"path",
    /// "language"}]}, bare or wrapped as {"fullTextPolicy": ...}; fixed once the container
    /// exists
    #[arg(long, value_name = "FILE")]
    pub full_text_policy: Option<PathBuf>,
    /// Answer 429 when a partition's RU budget for the current second is exceeded
    #[arg(long)]
    pub enforce_throughput: bool,
    /// Keep previous images of replaced and deleted items in the change feed
    #[arg(long)]
    pub feed_previous_images: bool,
}

#[derive(Debug, Subcommand)]
pub enum ItemCommand {
    /// Create an item read from stdin (409 if it exists)
    Create {
        /// The container, as DATABASE/CONTAINER
        target: String,
        #[command(flatten)]
        triggers: TriggerFlags,
    },
    /// Create or replace an item read from stdin
    Upsert {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// Only if the item's _etag is still this one (else 412)
        #[arg(long, value_name = "ETAG")]
        if_match: Option<String>,
        #[command(flatten)]
        triggers: TriggerFlags,
    },
    /// Replace an existing item with the one read from stdin
    Replace {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// Only if the item's _etag is still this one (else 412)
        #[arg(long, value_name = "ETAG")]
        if_match: Option<String>,
        #[command(flatten)]
        triggers: TriggerFlags,
    },
    /// Read an item by id and partition key
    Read {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// The item's id
        id: String,
        /// The item's partition key value as JSON: --pk '"c-42"', --pk '["a","b"]' for a hierarchical key
        #[arg(long, value_name = "JSON")]
        pk: String,
    },
    /// Patch an item with operations read from stdin: an array of {"op", "path", "value"}
    /// (add, set, replace, remove, incr, move with "from"), or {"operations": [...],
    /// "condition": "FROM c WHERE ..."}
    Patch {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// The item's id
        id: String,
        /// The item's partition key value as JSON: --pk '"c-42"', --pk '["a","b"]' for a hierarchical key
        #[arg(long, value_name = "JSON")]
        pk: String,
        /// Only if the item's _etag is still this one (else 412)
        #[arg(long, value_name = "ETAG")]
        if_match: Option<String>,
    },
    /// Delete an item by id and partition key
    Delete {
        /// The container, as DATABASE/CONTAINER
        target: String,
        /// The item's id
        id: String,
        /// The item's partition key value as JSON: --pk '"c-42"', --pk '["a","b"]' for a hierarchical key
        #[arg(long, value_name = "JSON")]
        pk: String,
        /// Only if the item's _etag is still this one (else 412)
        #[arg(long, value_name = "ETAG")]
        if_match: Option<String>,
        #[command(flatten)]
        triggers: TriggerFlags,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FeedModeArg {
    /// Creates and updates, each item once at its newest version
    Latest,
    /// Every create, replace and delete, with metadata
    AllVersions,
}

#[derive(Debug, Args)]
pub struct FeedArgs {
    /// The container, as DATABASE/CONTAINER
    pub target: String,
    /// Where to start: beginning, now, or an RFC 3339 time
    #[arg(
        long,
        value_name = "beginning|now|RFC3339",
        default_value = "beginning"
    )]
    pub from: String,
    /// Which changes: the latest version of each item, or every version with deletes
    #[arg(long, value_enum, default_value_t = FeedModeArg::Latest)]
    pub mode: FeedModeArg,
    /// Read only this physical partition
    #[arg(long, value_name = "ID")]
    pub range: Option<u32>,
    /// Resume after a previous page (overrides --from)
    #[arg(long, value_name = "TOKEN")]
    pub continuation: Option<String>,
    /// Changes per page
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub max_items: usize,
    /// Read every page available now instead of one
    #[arg(long, conflicts_with = "follow")]
    pub all: bool,
    /// Stream changes as NDJSON until interrupted
    #[arg(long)]
    pub follow: bool,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// `--help` describes every argument of every command.
    #[test]
    fn every_argument_has_a_description() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "cosmoscope", &mut missing);
        assert!(missing.is_empty(), "no description: {missing:#?}");
    }
}
