//! TLS for the server (rustls, ring provider): the acceptor built from redis-server's
//! `tls-cert-file`, `tls-key-file`, `tls-ca-cert-file` and `tls-auth-clients`. Uses only
//! [`crate::config`].

use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{self, RootCertStore, ServerConfig as RustlsConfig};
use tokio_rustls::TlsAcceptor;

use crate::config::{ServerError, TlsAuthClients, TlsConfig};

fn certs(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, ServerError> {
    let certs: Result<Vec<_>, _> = CertificateDer::pem_file_iter(path)
        .map_err(|e| ServerError(format!("{}: {e}", path.display())))?
        .collect();
    let certs = certs.map_err(|e| ServerError(format!("{}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(ServerError(format!(
            "{}: no certificate in the file",
            path.display()
        )));
    }
    Ok(certs)
}

/// The acceptor for TLS connections.
pub fn acceptor(cfg: &TlsConfig) -> Result<TlsAcceptor, ServerError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = certs(&cfg.cert_file)?;
    let key = PrivateKeyDer::from_pem_file(&cfg.key_file)
        .map_err(|e| ServerError(format!("{}: {e}", cfg.key_file.display())))?;
    let builder = RustlsConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ServerError(format!("TLS: {e}")))?;
    let builder = match (cfg.auth_clients, &cfg.ca_cert_file) {
        (TlsAuthClients::No, _) => builder.with_no_client_auth(),
        (_, None) => {
            return Err(ServerError(
                "tls-auth-clients yes or optional needs --tls-ca-cert-file".into(),
            ))
        }
        (auth, Some(ca)) => {
            let mut roots = RootCertStore::empty();
            for c in certs(ca)? {
                roots
                    .add(c)
                    .map_err(|e| ServerError(format!("{}: {e}", ca.display())))?;
            }
            let v = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let v = if auth == TlsAuthClients::Optional {
                v.allow_unauthenticated()
            } else {
                v
            };
            let v = v.build().map_err(|e| ServerError(format!("TLS: {e}")))?;
            builder.with_client_cert_verifier(v)
        }
    };
    let config = builder
        .with_single_cert(chain, key)
        .map_err(|e| ServerError(format!("TLS: {e}")))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
