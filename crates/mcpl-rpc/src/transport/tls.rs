//! TLS on rustls (ring; no OpenSSL): the server side of `https://` and `wss://` from PEM files,
//! and the client side trusting Mozilla's web roots plus any CA the caller adds.
//!
//! A certificate that is not trusted fails the connection with an error that names the
//! certificate problem ([`describe`]), never with a bare "connection error".

use crate::error::RpcError;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    install_default_provider();
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Makes ring the process's rustls provider, if none is set yet. The workspace builds reqwest
/// without a provider of its own: a `reqwest::Client` built directly (not through
/// [`super::http::connect_with`]) needs this called first. Idempotent.
pub fn install_default_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

fn tls_error(what: &str, e: impl std::fmt::Display) -> RpcError {
    RpcError::Transport(format!("{what}: {e}"))
}

/// A server's certificate chain and key, for `https://` and `wss://` listeners.
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<rustls::ServerConfig>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls").finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Reads a PEM certificate chain (leaf first) and a PEM private key.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self, RpcError> {
        let cert_pem = std::fs::read(cert)
            .map_err(|e| tls_error(&format!("reading --tls-cert {}", cert.display()), e))?;
        let key_pem = std::fs::read(key)
            .map_err(|e| tls_error(&format!("reading --tls-key {}", key.display()), e))?;
        Self::from_pem(&cert_pem, &key_pem)
    }

    /// A certificate chain and private key given as PEM text.
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> Result<Self, RpcError> {
        let chain = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| tls_error("the certificate is not PEM", e))?;
        if chain.is_empty() {
            return Err(RpcError::Transport(
                "the certificate file holds no CERTIFICATE block".into(),
            ));
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem)
            .map_err(|e| tls_error("the private key is not PEM", e))?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error("tls versions", e))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| tls_error("the certificate and key do not make a TLS identity", e))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(ServerTls {
            config: Arc::new(config),
        })
    }

    /// The TLS handshake on an accepted connection, given at most `timeout`.
    pub async fn accept<S>(
        &self,
        stream: S,
        timeout: Duration,
    ) -> Result<tokio_rustls::server::TlsStream<S>, RpcError>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let acceptor = tokio_rustls::TlsAcceptor::from(self.config.clone());
        match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
            Ok(Ok(tls)) => Ok(tls),
            Ok(Err(e)) => Err(tls_error("tls handshake", describe(&e))),
            Err(_) => Err(RpcError::Transport(format!(
                "tls handshake not finished within {timeout:?}"
            ))),
        }
    }

    /// A listener for `axum::serve` that hands over connections once their TLS handshake is
    /// done. Handshakes run concurrently, each given at most `handshake_timeout`, so a client
    /// that stalls in one holds up nobody else.
    pub fn listener(&self, tcp: TcpListener, handshake_timeout: Duration) -> TlsListener {
        let local = tcp.local_addr();
        let (tx, rx) = mpsc::channel(64);
        let tls = self.clone();
        let task = tokio::spawn(async move {
            loop {
                let (stream, addr) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        tracing::warn!("tcp accept: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                super::tcp::ready_tcp(&stream);
                let (tls, tx) = (tls.clone(), tx.clone());
                tokio::spawn(async move {
                    match tls.accept(stream, handshake_timeout).await {
                        Ok(stream) => {
                            let _ = tx.send((stream, addr)).await;
                        }
                        Err(e) => tracing::debug!(%addr, "{e}"),
                    }
                });
            }
        });
        TlsListener {
            accepted: rx,
            local,
            task,
        }
    }
}

/// TLS connections ready for HTTP: an [`axum::serve::Listener`] made by
/// [`ServerTls::listener`].
#[derive(Debug)]
pub struct TlsListener {
    accepted: mpsc::Receiver<(
        tokio_rustls::server::TlsStream<TcpStream>,
        std::net::SocketAddr,
    )>,
    local: std::io::Result<std::net::SocketAddr>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(accepted) => accepted,
            // The accept loop never ends on its own; nothing more will come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        match &self.local {
            Ok(addr) => Ok(*addr),
            Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
        }
    }
}

/// Whom a client trusts for `https://` and `wss://`: Mozilla's web roots, plus the CAs added.
#[derive(Clone)]
pub struct ClientTls {
    config: Arc<rustls::ClientConfig>,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTls").finish_non_exhaustive()
    }
}

impl Default for ClientTls {
    /// The web roots only.
    fn default() -> Self {
        Self::build(Vec::new()).expect("the web roots make a client config")
    }
}

impl ClientTls {
    /// Trusts the web roots and every certificate in the PEM file `ca` (`--ca FILE`).
    pub fn with_ca_file(ca: &Path) -> Result<Self, RpcError> {
        let pem = std::fs::read(ca)
            .map_err(|e| tls_error(&format!("reading the CA file {}", ca.display()), e))?;
        Self::with_ca_pem(&pem)
            .map_err(|e| RpcError::Transport(format!("the CA file {}: {e}", ca.display())))
    }

    /// Trusts the web roots and every certificate in `pem`.
    pub fn with_ca_pem(pem: &[u8]) -> Result<Self, RpcError> {
        let cas = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| tls_error("not PEM", e))?;
        if cas.is_empty() {
            return Err(RpcError::Transport("no CERTIFICATE block in it".into()));
        }
        Self::build(cas)
    }

    fn build(cas: Vec<CertificateDer<'static>>) -> Result<Self, RpcError> {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for ca in cas {
            roots
                .add(ca)
                .map_err(|e| tls_error("the CA certificate cannot be a trust anchor", e))?;
        }
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error("tls versions", e))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(ClientTls {
            config: Arc::new(config),
        })
    }

    /// The rustls configuration (for reqwest's preconfigured TLS).
    pub(crate) fn config(&self) -> Arc<rustls::ClientConfig> {
        self.config.clone()
    }

    /// Connects to `host:port` and runs the TLS handshake, checking the certificate for
    /// `host`.
    pub(crate) async fn connect(
        &self,
        host: &str,
        port: u16,
    ) -> Result<tokio_rustls::client::TlsStream<TcpStream>, RpcError> {
        let name = rustls::pki_types::ServerName::try_from(host.to_owned())
            .map_err(|e| tls_error(&format!("`{host}` is not a TLS server name"), e))?;
        let tcp = TcpStream::connect((host.trim_matches(['[', ']']), port))
            .await
            .map_err(|e| tls_error(&format!("connecting to {host}:{port}"), e))?;
        super::tcp::ready_tcp(&tcp);
        let connector = tokio_rustls::TlsConnector::from(self.config.clone());
        connector
            .connect(name, tcp)
            .await
            .map_err(|e| RpcError::Transport(format!("tls with {host}:{port}: {}", describe(&e))))
    }
}

/// An error and its causes in one line; a certificate problem is named as one, with the hint
/// to trust its CA (`--ca FILE`).
pub fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![error.to_string()];
    let mut certificate = certificate_problem(error);
    let mut source = error.source();
    while let Some(e) = source {
        certificate = certificate.or_else(|| certificate_problem(e));
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    let all = parts.join(": ");
    match certificate {
        Some(problem) => format!(
            "the server's certificate is not trusted ({problem}): {all}; pass its CA with --ca FILE"
        ),
        None => all,
    }
}

/// The certificate problem `error` is (or wraps, as an `io::Error`), if any.
fn certificate_problem(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    if let Some(rustls::Error::InvalidCertificate(problem)) = error.downcast_ref::<rustls::Error>()
    {
        return Some(format!("{problem:?}"));
    }
    let inner = error.downcast_ref::<std::io::Error>()?.get_ref()?;
    certificate_problem(inner)
}
