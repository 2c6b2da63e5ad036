//! Where a remote account is and how to reach it: the endpoint and key (given apart, or as
//! the portal's connection string `AccountEndpoint=...;AccountKey=...;`), an extra CA
//! certificate for a private endpoint (`cosmoscope serve --tls`), whether writes are
//! allowed, and the request timeout.
//!
//! The key is held only as a [`MasterKey`] (its `Debug` hides it) once parsed, and as a
//! [`Secret`] before: no message, `Debug` output or error built here quotes it.

use std::path::PathBuf;
use std::time::Duration;

use super::signing::MasterKey;
use crate::error::{Error, Result};

/// How long one request may take before it is reported as timed out.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A key as the command line or the environment gives it, before it is parsed: printed
/// by nothing (`Debug` shows `<redacted>`).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(text.into())
    }

    /// The text, for parsing into a key.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> std::result::Result<Secret, Self::Err> {
        Ok(Secret(s.to_string()))
    }
}

/// A remote account's connection settings.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// `scheme://host[:port]`, without a trailing slash.
    pub endpoint: String,
    pub key: MasterKey,
    /// A PEM file of certificates to trust besides the system's roots.
    pub ca_cert: Option<PathBuf>,
    /// Writes are sent; otherwise every write answers 403 naming `--read-write`.
    pub read_write: bool,
    pub timeout: Duration,
}

impl RemoteConfig {
    /// Settings from an endpoint and a key.
    pub fn new(endpoint: &str, key: &Secret) -> Result<RemoteConfig> {
        let endpoint = endpoint_of(endpoint)?;
        let key = MasterKey::parse(key.expose())
            .map_err(|e| Error::bad_request(format!("the account key is not valid: {e}")))?;
        Ok(RemoteConfig {
            endpoint,
            key,
            ca_cert: None,
            read_write: false,
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// Settings from a connection string: `AccountEndpoint=URL;AccountKey=KEY;` (other
    /// members are ignored, in any order; the key's own `=` padding is kept).
    pub fn from_connection_string(text: &Secret) -> Result<RemoteConfig> {
        let mut endpoint = None;
        let mut key = None;
        for part in text.expose().split(';').map(str::trim) {
            let Some((name, value)) = part.split_once('=') else {
                continue;
            };
            match name.trim().to_ascii_lowercase().as_str() {
                "accountendpoint" => endpoint = Some(value.trim().to_string()),
                "accountkey" => key = Some(Secret::new(value.trim())),
                _ => {}
            }
        }
        match (endpoint, key) {
            (Some(endpoint), Some(key)) => RemoteConfig::new(&endpoint, &key),
            _ => Err(Error::bad_request(
                "the connection string needs AccountEndpoint=URL and AccountKey=KEY, separated \
                 by ';' (as the portal's Keys page gives it)",
            )),
        }
    }

    /// The host the endpoint names, for labels (`https://acct.documents.azure.com`).
    pub fn label(&self) -> &str {
        &self.endpoint
    }
}

/// `http(s)://host[:port]` from a URL given with or without a trailing path of `/`.
fn endpoint_of(url: &str) -> Result<String> {
    let url = url.trim().trim_end_matches('/');
    let uri: hyper::Uri = url.parse().map_err(|e| {
        Error::bad_request(format!(
            "the endpoint {url:?} is not a URL ({e}); give it as https://ACCOUNT.documents.azure.com:443/"
        ))
    })?;
    match (uri.scheme_str(), uri.authority()) {
        (Some("http" | "https"), Some(_)) if uri.path() == "/" || uri.path().is_empty() => {
            Ok(url.to_string())
        }
        (Some("http" | "https"), Some(_)) => Err(Error::bad_request(format!(
            "the endpoint {url:?} has a path; give the account's URL alone (https://ACCOUNT.documents.azure.com:443/)"
        ))),
        _ => Err(Error::bad_request(format!(
            "the endpoint {url:?} must be an http:// or https:// URL with a host"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::remote::signing::EMULATOR_KEY;

    #[test]
    fn reads_the_portals_connection_string() {
        let text = format!(
            "AccountEndpoint=https://acct.documents.azure.com:443/;AccountKey={EMULATOR_KEY};"
        );
        let c = RemoteConfig::from_connection_string(&Secret::new(text)).unwrap();
        assert_eq!(c.endpoint, "https://acct.documents.azure.com:443");
        assert!(c.key.is_emulator_key());
        assert!(!c.read_write);
    }

    #[test]
    fn refusals_never_quote_the_key() {
        let bad = "sEcReT!notbase64";
        let e = RemoteConfig::new("http://127.0.0.1:1", &Secret::new(bad)).unwrap_err();
        assert!(!e.message.contains(bad), "{e}");
        let e = RemoteConfig::from_connection_string(&Secret::new(format!("AccountKey={bad}")))
            .unwrap_err();
        assert!(!e.message.contains(bad), "{e}");
        let c = RemoteConfig::new("http://127.0.0.1:1/", &Secret::new(EMULATOR_KEY)).unwrap();
        let debug = format!("{c:?} {:?}", Secret::new(EMULATOR_KEY));
        assert!(!debug.contains(EMULATOR_KEY), "{debug}");
    }

    #[test]
    fn endpoints_are_urls_without_a_path() {
        let key = Secret::new(EMULATOR_KEY);
        assert!(RemoteConfig::new("ftp://host", &key).is_err());
        assert!(RemoteConfig::new("not a url", &key).is_err());
        assert!(RemoteConfig::new("https://host/dbs/x", &key).is_err());
        assert_eq!(
            RemoteConfig::new("http://localhost:8081/", &key)
                .unwrap()
                .endpoint,
            "http://localhost:8081"
        );
    }
}
