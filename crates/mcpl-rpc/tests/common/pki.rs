//! A throwaway PKI for TLS tests, made with rcgen on the spot. Shared by mcpl-rpc's tests and,
//! by path, the `mcpl` binary's (`crates/mcpl-cli/tests/security.rs`).

/// A CA, and a certificate for `localhost` and 127.0.0.1 that it signed: (CA PEM, cert PEM,
/// key PEM).
pub fn test_pki() -> (String, String, String) {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "mcpl test CA");
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, rcgen::KeyPair::generate().unwrap())
        .unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])
        .unwrap()
        .signed_by(&leaf_key, &ca)
        .unwrap();
    (ca.pem(), leaf.pem(), leaf_key.serialize_pem())
}
