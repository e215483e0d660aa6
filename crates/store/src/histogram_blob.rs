//! Latency histograms as blobs: HdrHistogram's V2 serialization with DEFLATE, the format
//! HdrHistogram's own tools read, so a stored histogram can be inspected outside herd and
//! any percentile recomputed later.

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// The histogram as a compressed blob, or why it could not be encoded.
pub(crate) fn encode(histogram: &Histogram<u64>) -> Result<Vec<u8>, String> {
    let mut blob = Vec::new();
    V2DeflateSerializer::new().serialize(histogram, &mut blob).map_err(|e| format!("{e:?}"))?;
    Ok(blob)
}

/// The histogram a blob holds, or why it is not one.
pub(crate) fn decode(blob: &[u8]) -> Result<Histogram<u64>, String> {
    let mut reader = blob;
    let histogram = Deserializer::new().deserialize(&mut reader).map_err(|e| format!("{e:?}"))?;
    if !reader.is_empty() {
        return Err(format!("{} bytes after the histogram", reader.len()));
    }
    Ok(histogram)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_count() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in [1, 2, 3, 250, 251, 1_000, 99_999, 59_000_000] {
            h.record_n(v, v % 7 + 1).unwrap();
        }
        let back = decode(&encode(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.len(), h.len());
        assert_eq!(back.value_at_quantile(0.99), h.value_at_quantile(0.99));
    }

    #[test]
    fn empty_histogram_round_trips() {
        let h = Histogram::<u64>::new(3).unwrap();
        assert_eq!(decode(&encode(&h).unwrap()).unwrap().len(), 0);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode(b"").is_err());
        assert!(decode(b"not a histogram at all").is_err());
        let mut blob = encode(&Histogram::<u64>::new(3).unwrap()).unwrap();
        blob.truncate(blob.len() / 2);
        assert!(decode(&blob).is_err());
    }
}
