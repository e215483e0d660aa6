//! Reads a certificate chain and its private key from PEM files, each failure a
//! [`ServeError`] that names the file and what was missing or wrong in it.

use std::path::Path;

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::ServeError;

/// The chain in `cert` (leaf first) and the first private key in `key`.
pub(super) fn load(
    cert: &Path,
    key: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), ServeError> {
    let iter = CertificateDer::pem_file_iter(cert).map_err(|e| pem_error(cert, e))?;
    let certs: Vec<_> = iter.collect::<Result<_, _>>().map_err(|e| pem_error(cert, e))?;
    if certs.is_empty() {
        return Err(ServeError::TlsNoCertificate { path: cert.to_owned() });
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| match e {
        pem::Error::NoItemsFound => ServeError::TlsNoKey { path: key.to_owned() },
        other => pem_error(key, other),
    })?;
    Ok((certs, key))
}

fn pem_error(path: &Path, e: pem::Error) -> ServeError {
    match e {
        pem::Error::Io(source) => ServeError::TlsRead { path: path.to_owned(), source },
        other => ServeError::TlsBadPem { path: path.to_owned(), message: other.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tls::SelfSigned;

    fn temp(name: &str, text: &str) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("herd-serve-pem-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn one_combined_file_holds_both() {
        let made = SelfSigned::make("127.0.0.1:0".parse().unwrap()).unwrap();
        let both = temp("both.pem", &format!("{}{}", made.cert_pem, made.key_pem));
        let (certs, _) = load(&both, &both).unwrap();
        assert_eq!(certs.len(), 1);
        std::fs::remove_file(both).unwrap();
    }

    #[test]
    fn each_failure_names_its_file() {
        let made = SelfSigned::make("127.0.0.1:0".parse().unwrap()).unwrap();
        let key_only = temp("key-only.pem", &made.key_pem);
        let cert_only = temp("cert-only.pem", &made.cert_pem);
        let missing = std::path::Path::new("/nonexistent/herd.pem");
        assert!(
            matches!(load(&key_only, &key_only), Err(ServeError::TlsNoCertificate { path }) if path == key_only)
        );
        assert!(
            matches!(load(&cert_only, &cert_only), Err(ServeError::TlsNoKey { path }) if path == cert_only)
        );
        assert!(
            matches!(load(missing, &cert_only), Err(ServeError::TlsRead { path, .. }) if path == missing)
        );
        for p in [key_only, cert_only] {
            std::fs::remove_file(p).unwrap();
        }
    }
}
