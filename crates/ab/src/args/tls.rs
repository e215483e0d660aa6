//! ab's TLS flags on rustls: `-f` protocol names, `-Z` OpenSSL cipher strings mapped to the
//! suites rustls has, `-E` client certificate file checks.

use std::path::Path;

use super::ArgsError;
use crate::config::TlsProtocol;

/// One cipher suite rustls (ring provider) offers, with the names users may write.
struct Suite {
    /// OpenSSL's name, what ab users pass to `-Z`.
    openssl: &'static str,
    /// The IANA name (for TLS 1.3 the same as OpenSSL's).
    iana: &'static str,
    /// rustls's constant name, stored in `TlsOptions::cipher_suites`.
    rustls: &'static str,
    tls13: bool,
}

/// Every suite herd can honour, TLS 1.3 first in rustls's default preference order.
const SUITES: &[Suite] = &[
    Suite {
        openssl: "TLS_AES_256_GCM_SHA384",
        iana: "TLS_AES_256_GCM_SHA384",
        rustls: "TLS13_AES_256_GCM_SHA384",
        tls13: true,
    },
    Suite {
        openssl: "TLS_AES_128_GCM_SHA256",
        iana: "TLS_AES_128_GCM_SHA256",
        rustls: "TLS13_AES_128_GCM_SHA256",
        tls13: true,
    },
    Suite {
        openssl: "TLS_CHACHA20_POLY1305_SHA256",
        iana: "TLS_CHACHA20_POLY1305_SHA256",
        rustls: "TLS13_CHACHA20_POLY1305_SHA256",
        tls13: true,
    },
    Suite {
        openssl: "ECDHE-ECDSA-AES256-GCM-SHA384",
        iana: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        rustls: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        tls13: false,
    },
    Suite {
        openssl: "ECDHE-ECDSA-AES128-GCM-SHA256",
        iana: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        rustls: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        tls13: false,
    },
    Suite {
        openssl: "ECDHE-ECDSA-CHACHA20-POLY1305",
        iana: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        rustls: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        tls13: false,
    },
    Suite {
        openssl: "ECDHE-RSA-AES256-GCM-SHA384",
        iana: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        rustls: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        tls13: false,
    },
    Suite {
        openssl: "ECDHE-RSA-AES128-GCM-SHA256",
        iana: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        rustls: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        tls13: false,
    },
    Suite {
        openssl: "ECDHE-RSA-CHACHA20-POLY1305",
        iana: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        rustls: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        tls13: false,
    },
];

/// The OpenSSL names herd accepts for `-Z`, for error messages and the docs.
pub(crate) fn supported_cipher_names() -> String {
    SUITES.iter().map(|s| s.openssl).collect::<Vec<_>>().join(", ")
}

fn find_suite(item: &str) -> Option<&'static Suite> {
    SUITES.iter().find(|s| {
        s.openssl.eq_ignore_ascii_case(item)
            || s.iana.eq_ignore_ascii_case(item)
            || s.rustls.eq_ignore_ascii_case(item)
    })
}

/// `-f`, read the way ab reads it with OpenSSL 1.1+: `strncasecmp` prefixes tried in the
/// order ALL, TLS1.1, TLS1.2, TLS1.3, TLS1; anything else leaves the default (ALL) in place.
///
/// This ab is built against an OpenSSL without SSLv3 (its -h does not list SSL3), and ab's
/// OpenSSL 1.1+ code has no SSL2 branch, so `-f SSL2` and `-f SSL3` mean ALL to ab as well.
/// TLS 1.0 and 1.1 are what rustls cannot do: refused, exit 1.
pub(crate) fn protocol(value: Option<&[u8]>) -> Result<TlsProtocol, ArgsError> {
    let Some(value) = value else {
        return Ok(TlsProtocol::All);
    };
    let has_prefix = |p: &[u8]| value.len() >= p.len() && value[..p.len()].eq_ignore_ascii_case(p);
    let refuse = |version: &'static str| ArgsError::UnsupportedProtocol {
        value: String::from_utf8_lossy(value).into_owned(),
        version,
    };
    if has_prefix(b"ALL") {
        Ok(TlsProtocol::All)
    } else if has_prefix(b"TLS1.1") {
        Err(refuse("TLS 1.1"))
    } else if has_prefix(b"TLS1.2") {
        Ok(TlsProtocol::Tls12)
    } else if has_prefix(b"TLS1.3") {
        Ok(TlsProtocol::Tls13)
    } else if has_prefix(b"TLS1") {
        Err(refuse("TLS 1.0"))
    } else {
        Ok(TlsProtocol::All)
    }
}

/// `-Z` to rustls suite names.
///
/// ab hands the string to `SSL_CTX_set_ciphersuites` when `-f TLS1.3` is given and to
/// `SSL_CTX_set_cipher_list` otherwise. The latter only chooses TLS 1.2 suites: TLS 1.3 names
/// in it match nothing (a list of only those fails: "error setting ciphersuite list", exit 1)
/// and all TLS 1.3 suites stay enabled. herd does the same, except that it refuses items it
/// cannot honour (OpenSSL keywords, exclusions, unknown or non-AEAD suites) instead of
/// letting OpenSSL skip them.
pub(crate) fn cipher_suites(value: &[u8], protocol: TlsProtocol) -> Result<Vec<String>, ArgsError> {
    let text = String::from_utf8_lossy(value);
    // OpenSSL also separates with spaces and commas.
    let items: Vec<&str> = text.split([':', ',', ' ']).filter(|s| !s.is_empty()).collect();
    if items.is_empty() {
        return Err(ArgsError::CipherSuites {
            reason: format!(
                "no cipher suite given; use a colon-separated list of: {}",
                supported_cipher_names()
            ),
        });
    }
    let mut suites: Vec<&'static Suite> = Vec::new();
    for item in items {
        let suite = find_suite(item).ok_or_else(|| ArgsError::CipherSuites {
            reason: format!(
                "\"{item}\" is not a cipher suite herd supports (OpenSSL keywords and exclusions \
                 like HIGH or !aNULL are not understood); use a colon-separated list of: {}",
                supported_cipher_names()
            ),
        })?;
        if !suites.iter().any(|s| s.rustls == suite.rustls) {
            suites.push(suite);
        }
    }
    if protocol == TlsProtocol::Tls13 {
        if let Some(tls12) = suites.iter().find(|s| !s.tls13) {
            return Err(ArgsError::CipherSuites {
                reason: format!(
                    "{} is a TLS 1.2 suite but -f TLS1.3 takes TLS 1.3 suites only \
                     (TLS_AES_256_GCM_SHA384, TLS_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256)",
                    tls12.openssl
                ),
            });
        }
        return Ok(suites.iter().map(|s| s.rustls.to_string()).collect());
    }
    let tls12: Vec<String> =
        suites.iter().filter(|s| !s.tls13).map(|s| s.rustls.to_string()).collect();
    if tls12.is_empty() {
        return Err(ArgsError::CipherSuites {
            reason: "no TLS 1.2 suite listed: as in ab, -Z picks TLS 1.2 suites unless -f TLS1.3 \
                     is given (TLS 1.3 suites stay enabled); use -f TLS1.3 -Z ... to pick TLS 1.3 suites"
                .into(),
        });
    }
    if protocol == TlsProtocol::Tls12 {
        return Ok(tls12);
    }
    // ALL: OpenSSL's TLS 1.3 suites are untouched by set_cipher_list, so all of them stay.
    let mut out: Vec<String> =
        SUITES.iter().filter(|s| s.tls13).map(|s| s.rustls.to_string()).collect();
    out.extend(tls12);
    Ok(out)
}

/// `-E`: ab loads the certificate chain and then the private key from this one PEM file
/// (exit 1 with "unable to get certificate from ..." otherwise). herd checks the file is
/// readable and holds both, so the mistake shows before any connection.
pub(crate) fn check_client_cert(path: &Path) -> Result<(), ArgsError> {
    let fail = |reason: String| ArgsError::ClientCert { path: path.display().to_string(), reason };
    let data = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let has = |needle: &[u8]| data.windows(needle.len()).any(|w| w == needle);
    if !has(b"-----BEGIN CERTIFICATE-----") {
        return Err(fail("no PEM certificate (-----BEGIN CERTIFICATE-----) in it".into()));
    }
    if !has(b"PRIVATE KEY-----") {
        return Err(fail(
            "no PEM private key in it: ab reads the chain and the key from the same file".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suite_name_is_unique() {
        for (i, a) in SUITES.iter().enumerate() {
            for b in &SUITES[i + 1..] {
                assert_ne!(a.openssl, b.openssl);
                assert_ne!(a.rustls, b.rustls);
            }
        }
    }

    #[test]
    fn names_match_in_any_case() {
        assert!(find_suite("ecdhe-rsa-aes128-gcm-sha256").is_some());
        assert!(find_suite("tls13_aes_128_gcm_sha256").is_some());
    }
}
