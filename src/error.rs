//! The error type shared by the store and the engine facade.
//!
//! Every failure a request can meet maps to the status code (and substatus) the real
//! Azure Cosmos DB service would answer with, so a user learns the service's behaviour from
//! ours. Messages say what went wrong and what to do about it. Query errors also carry the
//! line and column of the offending token.

use std::fmt;

/// A request failure with its Cosmos DB status code.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// HTTP status code the service would return (400, 404, 409, 412, 413, 429, ...).
    pub status: u16,
    /// Cosmos DB substatus (1014 for a full logical partition, 3200 for RU throttling, ...); 0 if none.
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
    pub fn new(status: u16, message: impl Into<String>) -> Error {
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
        Error::new(400, message)
    }

    pub fn not_found(message: impl Into<String>) -> Error {
        Error::new(404, message)
    }

    pub fn conflict(message: impl Into<String>) -> Error {
        Error::new(409, message)
    }

    pub fn precondition_failed(message: impl Into<String>) -> Error {
        Error::new(412, message)
    }

    pub fn too_large(message: impl Into<String>) -> Error {
        Error::new(413, message)
    }

    /// 500: a fault in the store itself (I/O, a corrupt record); not the caller's doing.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(500, message)
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
        match self.status {
            400 => "BadRequest",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "NotFound",
            408 => "RequestTimeout",
            409 => "Conflict",
            410 => "Gone",
            412 => "PreconditionFailed",
            413 => "RequestEntityTooLarge",
            423 => "Locked",
            424 => "FailedDependency",
            429 => "TooManyRequests",
            449 => "RetryWith",
            503 => "ServiceUnavailable",
            _ => "InternalServerError",
        }
    }

    /// The error as the CLI prints it: `{"status", "substatus", "code", "message", ...}`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut obj = serde_json::Map::new();
        obj.insert("status".into(), self.status.into());
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

impl From<heed::Error> for Error {
    fn from(err: heed::Error) -> Error {
        let message = match &err {
            heed::Error::Mdb(heed::MdbError::MapFull) => {
                "the data directory's map is full; reopen with a larger map size".to_string()
            }
            heed::Error::Mdb(heed::MdbError::Corrupted)
            | heed::Error::Mdb(heed::MdbError::Invalid) => {
                format!("the data directory is corrupt or not a cosmoscope store: {err}")
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
