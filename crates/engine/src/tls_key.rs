//! Reads the size of a certificate's public key (ab prints it on its "SSL/TLS Protocol"
//! line) with a minimal DER walk: just enough of X.509 to reach subjectPublicKeyInfo.
//! Anything unexpected gives `None`, never a panic.

const SEQUENCE: u8 = 0x30;
const BIT_STRING: u8 = 0x03;
const INTEGER: u8 = 0x02;
const OID: u8 = 0x06;
const CONTEXT_0: u8 = 0xa0;

const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const ED25519: &[u8] = &[0x2b, 0x65, 0x70];
const P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const P384: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x22];
const P521: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x23];

/// Bits of the public key in a DER certificate, as OpenSSL's EVP_PKEY_bits counts them.
pub(crate) fn key_bits(cert_der: &[u8]) -> Option<u32> {
    let (cert, _) = element(cert_der, SEQUENCE)?;
    let (mut tbs, _) = element(cert, SEQUENCE)?;
    if tbs.first() == Some(&CONTEXT_0) {
        tbs = skip(tbs)?; // version
    }
    for _ in 0..5 {
        tbs = skip(tbs)?; // serial, signature, issuer, validity, subject
    }
    let (spki, _) = element(tbs, SEQUENCE)?;
    let (alg, rest) = element(spki, SEQUENCE)?;
    let (oid, params) = element(alg, OID)?;
    let (key, _) = element(rest, BIT_STRING)?;
    match oid {
        o if o == RSA => {
            let (rsa, _) = element(key.get(1..)?, SEQUENCE)?;
            let (modulus, _) = element(rsa, INTEGER)?;
            let m: &[u8] = match modulus.iter().position(|&b| b != 0) {
                Some(i) => &modulus[i..],
                None => return Some(0),
            };
            let lead = 8 - m[0].leading_zeros();
            Some((m.len() as u32 - 1) * 8 + lead)
        }
        o if o == EC => {
            let (curve, _) = element(params, OID)?;
            match curve {
                c if c == P256 => Some(256),
                c if c == P384 => Some(384),
                c if c == P521 => Some(521),
                _ => None,
            }
        }
        o if o == ED25519 => Some(253),
        _ => None,
    }
}

/// Splits `input` into the content of its first element (which must have `tag`) and
/// what follows it.
fn element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    if *input.first()? != tag {
        return None;
    }
    let (len, header) = length(input.get(1..)?)?;
    let start = 1 + header;
    let end = start.checked_add(len)?;
    Some((input.get(start..end)?, input.get(end..)?))
}

fn skip(input: &[u8]) -> Option<&[u8]> {
    let (len, header) = length(input.get(1..)?)?;
    input.get((1 + header).checked_add(len)?..)
}

/// A DER length: returns (length, bytes it took).
fn length(input: &[u8]) -> Option<(usize, usize)> {
    let first = *input.first()?;
    if first < 0x80 {
        return Some((usize::from(first), 1));
    }
    let n = usize::from(first & 0x7f);
    if n == 0 || n > 4 {
        return None;
    }
    let mut len = 0usize;
    for &b in input.get(1..=n)? {
        len = (len << 8) | usize::from(b);
    }
    Some((len, 1 + n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_key_sizes_of_generated_certificates() {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert_eq!(key_bits(cert.der()), Some(256));
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert_eq!(key_bits(cert.der()), Some(253));
    }

    #[test]
    fn garbage_gives_none() {
        assert_eq!(key_bits(&[]), None);
        assert_eq!(key_bits(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(key_bits(&[0x30, 0x03, 0x30, 0x01]), None);
    }
}
