//! The error type shared by the store and the engine facade.
//!
//! Every failure a request can meet maps to the status code (and substatus) the real
//! Azure Cosmos DB service would answer with, so a user learns the service's behaviour from
//! ours. Messages say what went wrong and what to do about it. Query errors also carry the
//! line and column of the offending token.

use std::fmt;

/// The HTTP status codes of the service's responses, by the names its REST API and SDKs
/// give them. Code compares and builds statuses by name; the number is for the wire and the
/// CLI's JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u16)]
pub enum StatusCode {
    Ok = 200,
    Created = 201,
    NoContent = 204,
    /// A transactional batch in which an operation failed: the body holds each operation's
    /// own status.
    MultiStatus = 207,
    NotModified = 304,
    BadRequest = 400,
    Unauthorized = 401,
    Forbidden = 403,
    NotFound = 404,
    RequestTimeout = 408,
    Conflict = 409,
    /// Transient: a partition key range split (substatus 1002, 1007); retry on its children.
    Gone = 410,
    PreconditionFailed = 412,
    RequestEntityTooLarge = 413,
    Locked = 423,
    /// A batch operation that did not run because another failed.
    FailedDependency = 424,
    TooManyRequests = 429,
    RetryWith = 449,
    /// The caller stopped the request (a cancelled query, job or export, a closed pipe).
    /// The service never answers with it: it is the code HTTP servers log for a client that
    /// went away (nginx's 499), used here only inside the process.
    Cancelled = 499,
    InternalServerError = 500,
    ServiceUnavailable = 503,
}

impl StatusCode {
    /// The number on the wire.
    pub const fn as_u16(self) -> u16 {
        self as u16
    }

    /// The service's name for the code, as the REST API and SDKs report it.
    pub const fn name(self) -> &'static str {
        match self {
            StatusCode::Ok => "Ok",
            StatusCode::Created => "Created",
            StatusCode::NoContent => "NoContent",
            StatusCode::MultiStatus => "MultiStatus",
            StatusCode::NotModified => "NotModified",
            StatusCode::BadRequest => "BadRequest",
            StatusCode::Unauthorized => "Unauthorized",
            StatusCode::Forbidden => "Forbidden",
            StatusCode::NotFound => "NotFound",
            StatusCode::RequestTimeout => "RequestTimeout",
            StatusCode::Conflict => "Conflict",
            StatusCode::Gone => "Gone",
            StatusCode::PreconditionFailed => "PreconditionFailed",
            StatusCode::RequestEntityTooLarge => "RequestEntityTooLarge",
            StatusCode::Locked => "Locked",
            StatusCode::FailedDependency => "FailedDependency",
            StatusCode::TooManyRequests => "TooManyRequests",
            StatusCode::RetryWith => "RetryWith",
            StatusCode::Cancelled => "Cancelled",
            StatusCode::InternalServerError => "InternalServerError",
            StatusCode::ServiceUnavailable => "ServiceUnavailable",
        }
    }

    /// The code for a number on the wire; `None` for one this crate has no name for.
    pub fn from_u16(code: u16) -> Option<StatusCode> {
        use StatusCode::*;
        const ALL: [StatusCode; 21] = [
            Ok,
            Created,
            NoContent,
            MultiStatus,
            NotModified,
            BadRequest,
            Unauthorized,
            Forbidden,
            NotFound,
            RequestTimeout,
            Conflict,
            Gone,
            PreconditionFailed,
            RequestEntityTooLarge,
            Locked,
            FailedDependency,
            TooManyRequests,
            RetryWith,
            Cancelled,
            InternalServerError,
            ServiceUnavailable,
        ];
        ALL.into_iter().find(|s| s.as_u16() == code)
    }

    /// A fault on the serving side (5xx): the request may be fine.
    pub const fn is_server_error(self) -> bool {
        self.as_u16() >= 500
    }
}

impl fmt::Display for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_u16())
    }
}

/// Tests and wire checks state the number the service sends.
impl PartialEq<u16> for StatusCode {
    fn eq(&self, other: &u16) -> bool {
        self.as_u16() == *other
    }
}

impl serde::Serialize for StatusCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u16(self.as_u16())
    }
}

/// Cosmos DB substatus codes this crate sends, by name (reference/cosmos.md §5).
pub mod substatus {
    /// 400: the partition key in the body differs from the request's.
    pub const PARTITION_KEY_MISMATCH: u32 = 1001;
    /// 410: the partition key range was split; read its children.
    pub const PARTITION_KEY_RANGE_GONE: u32 = 1002;
    /// 410: the range is completing a split; read the ranges again and retry.
    pub const COMPLETING_SPLIT: u32 = 1007;
    /// 400: a cross-partition query the gateway can't serve in one pass (ORDER BY,
    /// aggregates, DISTINCT, GROUP BY, TOP, OFFSET/LIMIT over several ranges): the client
    /// runs it range by range with the query plan, which the error body carries as
    /// `additionalErrorInfo`.
    pub const CROSS_PARTITION_QUERY_NOT_SERVABLE: u32 = 1004;
    /// 403: the logical partition reached its storage limit.
    pub const PARTITION_KEY_QUOTA_EXCEEDED: u32 = 1014;
    /// 429: the partition's RU budget for this second is spent.
    pub const RU_BUDGET_EXCEEDED: u32 = 3200;
    /// 500: the store's data file is damaged (truncated, or overwritten in places). The
    /// service has no such condition (its replicas repair each other); this number is
    /// cosmoscope's own, far from the service's, so scripts can tell damage from other
    /// faults (the CLI exits with status 3 on it).
    pub const STORE_DAMAGED: u32 = 9_001;
}

/// A request failure with its Cosmos DB status code.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// The status the service would answer with.
    pub status: StatusCode,
    /// Cosmos DB substatus ([`substatus`]); 0 if none.
    pub substatus: u32,
    /// A person-readable message.
    pub message: String,
    /// 1-based position of the offending token, for query errors.
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// For 429: how long to wait before retrying.
    pub retry_after_ms: Option<u64>,
    /// RU charged for the failed request (the service charges failed requests too).
    pub request_charge: f64,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Error {
        Error {
            status,
            substatus: 0,
            message: message.into(),
            line: None,
            column: None,
            retry_after_ms: None,
            request_charge: 0.0,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Error {
        Error::new(StatusCode::BadRequest, message)
    }

    pub fn not_found(message: impl Into<String>) -> Error {
        Error::new(StatusCode::NotFound, message)
    }

    pub fn conflict(message: impl Into<String>) -> Error {
        Error::new(StatusCode::Conflict, message)
    }

    pub fn precondition_failed(message: impl Into<String>) -> Error {
        Error::new(StatusCode::PreconditionFailed, message)
    }

    pub fn too_large(message: impl Into<String>) -> Error {
        Error::new(StatusCode::RequestEntityTooLarge, message)
    }

    /// 500: a fault in the store itself (I/O, a corrupt record); not the caller's doing.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(StatusCode::InternalServerError, message)
    }

    /// 500 with [`substatus::STORE_DAMAGED`]: the data file is damaged; `message` says
    /// where and what to do.
    pub fn damaged(message: impl Into<String>) -> Error {
        Error::internal(message).with_substatus(substatus::STORE_DAMAGED)
    }

    /// [`Error::damaged`] for a record that does not decode: `what` names it ("item
    /// record", "change feed record").
    pub fn corrupt(what: impl fmt::Display) -> Error {
        Error::damaged(format!(
            "the store holds a corrupt {what}: its data file is damaged. `cosmoscope check` \
             reports what can still be read; restore the directory from a copy"
        ))
    }

    /// 499: the caller cancelled the request ([`StatusCode::Cancelled`]).
    pub fn cancelled(message: impl Into<String>) -> Error {
        Error::new(StatusCode::Cancelled, message)
    }

    /// Whether this failure has `status`.
    pub fn is(&self, status: StatusCode) -> bool {
        self.status == status
    }

    pub fn with_substatus(mut self, substatus: u32) -> Error {
        self.substatus = substatus;
        self
    }

    pub fn with_charge(mut self, request_charge: f64) -> Error {
        self.request_charge = request_charge;
        self
    }

    pub fn at(mut self, line: u32, column: u32) -> Error {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// The service's name for the status code, as the REST API and SDKs report it.
    pub fn code(&self) -> &'static str {
        self.status.name()
    }

    /// The error as the CLI prints it: `{"status", "substatus", "code", "message", ...}`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut obj = serde_json::Map::new();
        obj.insert("status".into(), self.status.as_u16().into());
        obj.insert("substatus".into(), self.substatus.into());
        obj.insert("code".into(), self.code().into());
        obj.insert("message".into(), self.message.clone().into());
        if let Some(line) = self.line {
            obj.insert("line".into(), line.into());
        }
        if let Some(column) = self.column {
            obj.insert("column".into(), column.into());
        }
        if let Some(ms) = self.retry_after_ms {
            obj.insert("retryAfterMs".into(), ms.into());
        }
        obj.insert(
            "requestCharge".into(),
            serde_json::Number::from_f64(self.request_charge)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
        );
        serde_json::Value::Object(obj)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status, self.code())?;
        if self.substatus != 0 {
            write!(f, " (substatus {})", self.substatus)?;
        }
        write!(f, ": {}", self.message)?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, " at line {line}, column {column}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// A JSON value's kind as messages name it: "a string", "an array", "null".
pub fn json_type_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

impl From<heed::Error> for Error {
    fn from(err: heed::Error) -> Error {
        let message = match &err {
            heed::Error::Mdb(heed::MdbError::MapFull) => {
                "the data directory's map is full; reopen with a larger map size".to_string()
            }
            heed::Error::Mdb(
                heed::MdbError::Corrupted
                | heed::MdbError::PageNotFound
                | heed::MdbError::BadTxn
                | heed::MdbError::Invalid,
            ) => {
                return Error::corrupt(format!("page ({err})"));
            }
            // LMDB reports a write the disk could not take whole as EIO.
            heed::Error::Io(io)
                if matches!(io.raw_os_error(), Some(libc::EIO) | Some(libc::ENOSPC)) =>
            {
                format!(
                    "storage error: {err}. The disk holding the data directory is probably \
                     full; free some space and retry (the write was not applied)"
                )
            }
            _ => format!("storage error: {err}"),
        };
        Error::internal(message)
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Error {
        Error::internal(format!("I/O error: {err}"))
    }
}
