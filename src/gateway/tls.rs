//! HTTPS for the gateway: a self-signed certificate for `localhost` and `127.0.0.1`,
//! generated on first use and kept in the data directory (so clients trust it once, e.g.
//! with `NODE_EXTRA_CA_CERTS`), and a rustls server offering HTTP/2 and HTTP/1.1 by ALPN.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use crate::error::{Error, Result};

/// File names in the data directory.
const CERT_FILE: &str = "gateway-cert.pem";
const KEY_FILE: &str = "gateway-key.pem";

/// Where the gateway's certificate and private key are kept.
#[derive(Debug, Clone)]
pub struct CertificateFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The data directory's certificate, created if it has none.
pub fn certificate(dir: &Path) -> Result<CertificateFiles> {
    let files = CertificateFiles {
        cert: dir.join(CERT_FILE),
        key: dir.join(KEY_FILE),
    };
    if files.cert.exists() && files.key.exists() {
        return Ok(files);
    }
    let names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    let generated = rcgen::generate_simple_self_signed(names)
        .map_err(|e| Error::internal(format!("cannot generate the gateway's certificate: {e}")))?;
    write_private(&files.key, generated.signing_key.serialize_pem().as_bytes())?;
    std::fs::write(&files.cert, generated.cert.pem())
        .map_err(|e| Error::internal(format!("cannot write {}: {e}", files.cert.display())))?;
    Ok(files)
}

/// Writes the private key readable by its owner only.
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| Error::internal(format!("cannot write {}: {e}", path.display())))
}

/// A TLS acceptor over the certificate, offering h2 and http/1.1.
pub fn acceptor(files: &CertificateFiles) -> Result<TlsAcceptor> {
    let unreadable = |p: &Path, e: &dyn std::fmt::Display| {
        Error::internal(format!("cannot read {}: {e}", p.display()))
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .map_err(|e| unreadable(&files.cert, &e))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| unreadable(&files.cert, &e))?;
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| unreadable(&files.key, &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::internal(format!("TLS set-up: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| Error::internal(format!("the gateway's certificate is unusable: {e}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
