//! The certificate a TLS (or QUIC) listener serves, made for one launch: a CA of its own
//! signs one server certificate for the listen address and `localhost` (both ECDSA P-256),
//! then its private key is dropped, so that the CA file the client trusts vouches for this one
//! server and nothing else. A CA apart from the server's certificate, rather than one
//! self-signed certificate, because OpenSSL's servers warn about a CA certificate used as a
//! server's (Apache, AH01906) and webpki (rustls) refuses one.
//!
//! The files go under the run_dir's `tls/`, as [`TlsFiles`]; the configs name them through
//! [`ServerTls`]. Making a key is the only thing here that is not a pure function of the spec;
//! nothing is written.

use std::net::IpAddr;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType, PKCS_ECDSA_P256_SHA256,
};

use crate::error::DriverError;
use crate::launch::{RenderedFile, TlsFiles};
use crate::run_dir::Places;

/// The run_dir's TLS directory.
pub(crate) const DIR: &str = "tls";
const CA: &str = "tls/ca.pem";
const CERT: &str = "tls/cert.pem";
const KEY: &str = "tls/key.pem";
const CERT_AND_KEY: &str = "tls/cert-and-key.pem";

/// Whether a server reads its certificate and key from one file (HAProxy's `crt`,
/// mini_httpd's `-E`) besides the two apart that every other server reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Apart,
    AlsoTogether,
}

/// A launch's certificate: the places its config names (as config text) and the files.
#[derive(Debug)]
pub(crate) struct ServerTls {
    /// The server's certificate (PEM).
    pub(crate) cert: String,
    /// Its private key (PKCS#8 PEM).
    pub(crate) key: String,
    /// The certificate then the key, in one file (with [`Layout::AlsoTogether`] only).
    pub(crate) cert_and_key: String,
    pub(crate) files: TlsFiles,
}

/// A new certificate for `server` listening on `ip`, laid out under `places`' run_dir.
pub(crate) fn for_listener(
    server: &str,
    ip: IpAddr,
    places: &Places,
    layout: Layout,
) -> Result<ServerTls, DriverError> {
    let made = generate(ip)
        .map_err(|e| DriverError::Certificate { server: server.to_owned(), why: e.to_string() })?;
    let file = |rel: &str, contents: String| RenderedFile { path: places.path(rel), contents };
    let mut files =
        vec![file(CA, made.ca), file(CERT, made.cert.clone()), file(KEY, made.key.clone())];
    if layout == Layout::AlsoTogether {
        files.push(file(CERT_AND_KEY, format!("{}{}", made.cert, made.key)));
    }
    Ok(ServerTls {
        cert: places.text(CERT),
        key: places.text(KEY),
        cert_and_key: places.text(CERT_AND_KEY),
        files: TlsFiles { ca: places.path(CA), files },
    })
}

/// PEM texts of one generated set.
struct Made {
    ca: String,
    cert: String,
    key: String,
}

fn generate(ip: IpAddr) -> Result<Made, rcgen::Error> {
    let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let mut ca = CertificateParams::default();
    ca.distinguished_name = name("herd lab CA (one launch)");
    // It signs the one server certificate below, no CA under it.
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = ca.self_signed(&ca_key)?;

    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let mut server = CertificateParams::new(vec!["localhost".to_owned()])?;
    // An unspecified address (0.0.0.0, ::) is no name a client connects to.
    if !ip.is_unspecified() {
        server.subject_alt_names.push(SanType::IpAddress(ip));
    }
    server.distinguished_name = name("herd lab server");
    server.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    server.use_authority_key_identifier_extension = true;
    // Validity: rcgen's default, 1975 to 4096. The certificate lives for one launch; a clock
    // set wrong on a lab machine must not fail the handshake.
    let cert = server.signed_by(&key, &ca, &ca_key)?;
    Ok(Made { ca: ca.pem(), cert: cert.pem(), key: key.serialize_pem() })
}

fn name(common: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common);
    dn
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::spec;
    use crate::ServerKind;

    fn places() -> Places {
        Places::new(&spec(ServerKind::Nginx, None)).unwrap()
    }

    #[test]
    fn files_under_tls_with_the_ca_for_the_client() {
        let tls =
            for_listener("nginx", "127.0.0.1".parse().unwrap(), &places(), Layout::Apart).unwrap();
        assert_eq!(tls.cert, "/run-dir/nginx/tls/cert.pem");
        assert_eq!(tls.key, "/run-dir/nginx/tls/key.pem");
        assert_eq!(tls.files.ca, std::path::Path::new("/run-dir/nginx/tls/ca.pem"));
        let names: Vec<_> = tls.files.files.iter().map(|f| f.path.display().to_string()).collect();
        assert_eq!(
            names,
            [
                "/run-dir/nginx/tls/ca.pem",
                "/run-dir/nginx/tls/cert.pem",
                "/run-dir/nginx/tls/key.pem"
            ]
        );
        let [ca, cert, key] = [0, 1, 2].map(|i| tls.files.files[i].contents.as_str());
        assert!(ca.starts_with("-----BEGIN CERTIFICATE-----\n"), "{ca}");
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----\n") && cert != ca, "{cert}");
        assert!(key.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{key}");
    }

    #[test]
    fn together_is_the_certificate_then_the_key() {
        let tls = for_listener("haproxy", "::1".parse().unwrap(), &places(), Layout::AlsoTogether)
            .unwrap();
        assert_eq!(tls.files.files.len(), 4);
        let f = &tls.files.files;
        assert_eq!(f[3].contents, format!("{}{}", f[1].contents, f[2].contents));
        assert_eq!(tls.cert_and_key, "/run-dir/nginx/tls/cert-and-key.pem");
    }

    /// Each launch gets its own key and CA: a file from one run trusts no other.
    #[test]
    fn every_launch_makes_new_keys() {
        let make = || {
            for_listener("nginx", "127.0.0.1".parse().unwrap(), &places(), Layout::Apart).unwrap()
        };
        let (a, b) = (make(), make());
        for i in 0..3 {
            assert_ne!(a.files.files[i].contents, b.files.files[i].contents, "file {i}");
        }
    }
}
