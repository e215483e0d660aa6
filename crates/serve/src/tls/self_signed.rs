//! A certificate made at start-up, so that `herd serve --tls-self-signed` needs no files and
//! no tools: a CA (P-256, self-signed) and a leaf certificate it signs for the listen address,
//! `localhost`, 127.0.0.1 and ::1. A client that trusts the CA (`--tls-write-ca FILE`, then
//! `curl --cacert FILE` or `herd run --ca-file FILE`) verifies the server fully. Two
//! certificates rather than one because webpki refuses a CA certificate as a server's own.

use std::net::SocketAddr;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose,
    PKCS_ECDSA_P256_SHA256,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A freshly made CA and the server certificate it signed.
pub(crate) struct SelfSigned {
    /// The CA's certificate, PEM: what clients must trust.
    pub(crate) ca_pem: String,
    pub(crate) cert: CertificateDer<'static>,
    pub(crate) key: PrivateKeyDer<'static>,
    /// The server certificate and key as PEM (tests write them to files).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) cert_pem: String,
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) key_pem: String,
}

impl SelfSigned {
    /// Makes a CA and a server certificate for `bound`'s IP (unless unspecified),
    /// `localhost`, 127.0.0.1 and ::1.
    pub(crate) fn make(bound: SocketAddr) -> Result<SelfSigned, rcgen::Error> {
        let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, "herd serve self-signed CA");
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
        let ca = ca.self_signed(&ca_key)?;

        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
        let mut params = CertificateParams::new(names(bound))?;
        params.distinguished_name.push(DnType::CommonName, "herd serve");
        let cert = params.signed_by(&key, &ca, &ca_key)?;
        Ok(SelfSigned {
            ca_pem: ca.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            cert: cert.der().clone(),
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        })
    }
}

/// The subject alternative names: the bound IP first when it names one host.
fn names(bound: SocketAddr) -> Vec<String> {
    let mut names = Vec::new();
    if !bound.ip().is_unspecified() {
        names.push(bound.ip().to_string());
    }
    for name in ["localhost", "127.0.0.1", "::1"] {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cover_the_address_and_loopback_once() {
        assert_eq!(names("127.0.0.1:1".parse().unwrap()), ["127.0.0.1", "localhost", "::1"]);
        assert_eq!(
            names("10.1.2.3:1".parse().unwrap()),
            ["10.1.2.3", "localhost", "127.0.0.1", "::1"]
        );
        assert_eq!(names("0.0.0.0:1".parse().unwrap()), ["localhost", "127.0.0.1", "::1"]);
    }

    #[test]
    fn a_client_that_trusts_the_ca_verifies_the_server_certificate() {
        let made = SelfSigned::make("127.0.0.2:443".parse().unwrap()).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        for ca in CertificateDer::pem_slice_iter(made.ca_pem.as_bytes()) {
            roots.add(ca.unwrap()).unwrap();
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            std::sync::Arc::new(roots),
            provider,
        )
        .build()
        .unwrap();
        let now = rustls::pki_types::UnixTime::now();
        for name in ["127.0.0.2", "localhost", "::1"] {
            let name = rustls::pki_types::ServerName::try_from(name).unwrap();
            verifier.verify_server_cert(&made.cert, &[], &name, &[], now).unwrap();
        }
        let other = rustls::pki_types::ServerName::try_from("example.com").unwrap();
        assert!(verifier.verify_server_cert(&made.cert, &[], &other, &[], now).is_err());
    }

    use rustls::client::danger::ServerCertVerifier as _;
    use rustls::pki_types::pem::PemObject as _;
}
