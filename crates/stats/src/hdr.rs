//! The one encoding of a latency histogram wherever herd writes one down: HdrHistogram's
//! "V2 compressed" format (cookie, length, then a zlib stream holding the plain V2 encoding),
//! the one that Java's `HistogramLogReader` and HdrHistogram_c's log reader accept (they refuse
//! plain V2), but with the zlib stream made of *stored* DEFLATE blocks: framed, not compressed.
//! `herd run --hlog` writes it a line a second, `herd run --json` carries it in base64 (`hdr`),
//! and the store keeps it as a blob; [`decode`] reads it back, and any other V2 encoding too
//! (stores written before this codec hold real DEFLATE streams).
//!
//! Why not the crate's `V2DeflateSerializer`: it builds a new DEFLATE compressor for every
//! histogram, some 300 KiB of zeroed state once a second, which took the peak RSS of
//! `herd run -c 100 --hlog` from about 7.4 to 8.2 MiB, past herd run's 8 MiB budget. The V2
//! payload is compact already (zig-zag LEB128 counts, runs of zeros folded), so compressing it
//! would save a few hundred bytes per line of a one-line-per-second log. Any zlib reader
//! decodes stored blocks; the crate's own `Deserializer` reads these (tests below).

use std::io::{self, Write};

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::{Counter, Histogram};

/// `V2_COMPRESSED_COOKIE` of HdrHistogram (0x1c849304 | 0x10): "V2, compressed".
const COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// A zlib header: DEFLATE with a 32 KiB window, "fastest" level, no dictionary; the two bytes
/// read as a multiple of 31 (RFC 1950).
const ZLIB_HEADER: [u8; 2] = [0x78, 0x01];
/// The most a stored DEFLATE block holds (RFC 1951, 3.2.4).
const STORED_MAX: usize = 65_535;

/// A [`Serializer`] for hdrhistogram's interval log writer.
#[derive(Default)]
pub struct StoredV2 {
    v2: V2Serializer,
    plain: Vec<u8>,
    framed: Vec<u8>,
}

impl Serializer for StoredV2 {
    type SerializeError = io::Error;

    fn serialize<T: Counter, W: Write>(
        &mut self,
        h: &Histogram<T>,
        writer: &mut W,
    ) -> io::Result<usize> {
        self.plain.clear();
        self.v2.serialize(h, &mut self.plain).map_err(|e| io::Error::other(e.to_string()))?;
        self.framed.clear();
        zlib_stored(&self.plain, &mut self.framed);
        let len = u32::try_from(self.framed.len())
            .map_err(|_| io::Error::other("a histogram too large to encode"))?;
        writer.write_all(&COMPRESSED_COOKIE.to_be_bytes())?;
        writer.write_all(&len.to_be_bytes())?;
        writer.write_all(&self.framed)?;
        Ok(8 + self.framed.len())
    }
}

/// Why a histogram could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HdrError {
    /// A count beyond what the V2 encoding holds.
    #[error("the histogram cannot be encoded: {0}")]
    Encode(String),
    #[error("not base64: {0}")]
    Base64(String),
    #[error("not an HdrHistogram: {0}")]
    Decode(String),
    #[error("{0} bytes after the histogram")]
    Trailing(usize),
}

/// `h` in the one encoding (module docs).
pub fn encode(h: &Histogram<u64>) -> Result<Vec<u8>, HdrError> {
    let mut bytes = Vec::new();
    StoredV2::default().serialize(h, &mut bytes).map_err(|e| HdrError::Encode(e.to_string()))?;
    Ok(bytes)
}

/// The histogram `bytes` hold, in this encoding or any other V2 one; nothing may follow it.
pub fn decode(bytes: &[u8]) -> Result<Histogram<u64>, HdrError> {
    let mut reader = bytes;
    let h = Deserializer::new()
        .deserialize(&mut reader)
        .map_err(|e| HdrError::Decode(format!("{e:?}")))?;
    if !reader.is_empty() {
        return Err(HdrError::Trailing(reader.len()));
    }
    Ok(h)
}

/// `h` encoded, in standard base64 (it starts `HISTF`, as every V2-compressed histogram
/// does): `herd run --json`'s `hdr`, the same bytes as a `--hlog` line.
pub fn to_base64(h: &Histogram<u64>) -> Result<String, HdrError> {
    use base64::Engine as _;
    Ok(base64::engine::general_purpose::STANDARD.encode(encode(h)?))
}

/// The inverse of [`to_base64`].
pub fn from_base64(text: &str) -> Result<Histogram<u64>, HdrError> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| HdrError::Base64(e.to_string()))?;
    decode(&bytes)
}

/// `#[serde(with = "herd_stats::hdr::base64_text")]`: a histogram as its base64 text.
pub mod base64_text {
    use hdrhistogram::Histogram;

    pub fn serialize<S: serde::Serializer>(h: &Histogram<u64>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::to_base64(h).map_err(serde::ser::Error::custom)?)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Histogram<u64>, D::Error> {
        let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
        super::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

/// `data` as a zlib stream of stored DEFLATE blocks, appended to `out`.
fn zlib_stored(data: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&ZLIB_HEADER);
    let mut chunks = data.chunks(STORED_MAX).peekable();
    if chunks.peek().is_none() {
        // Even nothing is one (final, empty) block.
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        // At most STORED_MAX bytes: fits in 16 bits.
        let len = chunk.len() as u16;
        out.push(u8::from(last)); // BFINAL, then BTYPE 00: stored
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
}

/// The zlib checksum (RFC 1950, 8.2).
fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % MOD;
        b = (b + a) % MOD;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler32_known_values() {
        // RFC 1950's checksum of "Wikipedia", and of nothing.
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
    }

    #[test]
    fn the_crates_deserializer_reads_it_back() {
        let mut s = StoredV2::default();
        let sparse: Vec<(u64, u64)> = (1..200_000).step_by(7).map(|v| (v, 1)).collect();
        // A large count at every distinct value up to an hour: a payload longer than a block.
        let shape = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        let dense: Vec<(u64, u64)> =
            std::iter::successors(Some(1u64), |&v| Some(shape.highest_equivalent(v) + 1))
                .take_while(|&v| v <= 3_600_000_000)
                .map(|v| (v, 1 << 50))
                .collect();
        for (values, blocks) in [(vec![], 1), (vec![(1, 1), (2, 5)], 1), (sparse, 1), (dense, 2)] {
            let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
            for &(v, n) in &values {
                h.record_n(v, n).unwrap();
            }
            let mut bytes = Vec::new();
            let n = s.serialize(&h, &mut bytes).unwrap();
            assert_eq!(n, bytes.len());
            assert_eq!(bytes[..4], COMPRESSED_COOKIE.to_be_bytes());
            let more_than_one = bytes.len() > 8 + 2 + 5 + STORED_MAX + 4;
            assert_eq!(more_than_one, blocks > 1, "{} bytes", bytes.len());
            let back: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
            assert_eq!(back, h, "{} values", values.len());
        }
    }

    #[test]
    fn base64_reads_back_like_an_hlog_line() {
        use base64::Engine as _;
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for v in [1, 90, 90, 1_234, 3_600_000_000] {
            h.record(v).unwrap();
        }
        let text = to_base64(&h).unwrap();
        assert!(text.starts_with("HISTF"), "{text}");
        let bytes = base64::engine::general_purpose::STANDARD.decode(&text).unwrap();
        let back: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
        assert_eq!(back, h);
        assert_eq!(from_base64(&text).unwrap(), h);
    }

    #[test]
    fn decodes_what_the_crates_deflate_serializer_wrote() {
        // Stores written before this codec hold V2 + real DEFLATE.
        use hdrhistogram::serialization::V2DeflateSerializer;
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in [1, 2, 3, 250, 251, 1_000, 99_999, 59_000_000] {
            h.record_n(v, v % 7 + 1).unwrap();
        }
        let mut old = Vec::new();
        V2DeflateSerializer::new().serialize(&h, &mut old).unwrap();
        assert_eq!(decode(&old).unwrap(), h);
        assert_eq!(decode(&encode(&h).unwrap()).unwrap(), h);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(decode(b""), Err(HdrError::Decode(_))));
        assert!(decode(b"not a histogram at all").is_err());
        let mut blob = encode(&Histogram::<u64>::new(3).unwrap()).unwrap();
        blob.push(0);
        assert_eq!(decode(&blob), Err(HdrError::Trailing(1)));
        blob.truncate(blob.len() / 2);
        assert!(decode(&blob).is_err());
        assert!(matches!(from_base64("***"), Err(HdrError::Base64(_))));
    }

    #[test]
    fn serde_carries_the_base64_text() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Doc {
            #[serde(with = "base64_text")]
            hdr: Histogram<u64>,
        }
        let mut hdr = Histogram::<u64>::new(3).unwrap();
        hdr.record(42).unwrap();
        let doc = Doc { hdr };
        let json = serde_json::to_string(&doc).unwrap();
        assert!(json.starts_with("{\"hdr\":\"HISTF"), "{json}");
        assert_eq!(serde_json::from_str::<Doc>(&json).unwrap(), doc);
        let err = serde_json::from_str::<Doc>("{\"hdr\":\"x\"}").unwrap_err().to_string();
        assert!(err.contains("not base64"), "{err}");
    }

    #[test]
    fn stored_blocks_are_framed_as_rfc_1951_says() {
        let data: Vec<u8> = (0..150_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut out = Vec::new();
        zlib_stored(&data, &mut out);
        // Header, three blocks of 5 + data, checksum.
        assert_eq!(out.len(), 2 + 3 * 5 + data.len() + 4);
        let block = |at: usize| {
            (
                out[at],
                u16::from_le_bytes([out[at + 1], out[at + 2]]),
                u16::from_le_bytes([out[at + 3], out[at + 4]]),
            )
        };
        assert_eq!(block(2), (0, 65_535, 0), "not the last");
        assert_eq!(block(2 + 5 + STORED_MAX), (0, 65_535, 0));
        let rest = (150_000 - 2 * STORED_MAX) as u16;
        assert_eq!(block(2 + 2 * (5 + STORED_MAX)), (1, rest, !rest), "the last");
        assert_eq!(out[out.len() - 4..], adler32(&data).to_be_bytes());
        let mut empty = Vec::new();
        zlib_stored(&[], &mut empty);
        assert_eq!(empty, [0x78, 0x01, 1, 0, 0, 0xff, 0xff, 0, 0, 0, 1]);
    }
}
