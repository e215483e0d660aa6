//! What can be wrong with a header block, as one small `Copy` enum: each variant names the
//! rule of RFC 7541 (or the limit) that the block broke.
//!
//! The errors of the encoding itself are connection errors of type COMPRESSION_ERROR (RFC
//! 9113 §4.3): the dynamic table can no longer be trusted, so the connection must go. The
//! others are stream errors of type PROTOCOL_ERROR: the decoder finished the block (its table
//! is in step with the peer's) and either refused to hand out more fields
//! ([`HpackError::HeaderListTooLarge`]) or found the response malformed (RFC 9113 §8.1.1),
//! so the connection can go on and just the stream fails.

use thiserror::Error;

use crate::h2::ErrorCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum HpackError {
    #[error("header block ends inside a field representation (RFC 7541 §6)")]
    Truncated,
    #[error("integer longer than 32 bits in a header block (RFC 7541 §5.1)")]
    IntegerOverflow,
    #[error("header block refers to index {index}, but the tables hold 61 static and {dynamic} dynamic entries (RFC 7541 §2.3.3)")]
    InvalidIndex { index: u32, dynamic: u32 },
    #[error("invalid Huffman code: the EOS symbol, or padding that is not the 1 bits of EOS or longer than 7 bits (RFC 7541 §5.2)")]
    InvalidHuffman,
    #[error("dynamic table size update to {size} bytes exceeds the {max} bytes this endpoint allows (RFC 7541 §6.3)")]
    TableSizeTooLarge { size: u32, max: u32 },
    #[error(
        "dynamic table size update after a header field; it must open the block (RFC 7541 §4.2)"
    )]
    LateTableSizeUpdate,
    #[error("header block does not start with the dynamic table size update owed since the table was shrunk to {max} bytes (RFC 7541 §4.2)")]
    MissingTableSizeUpdate { max: u32 },
    #[error("header list larger than the limit of {limit} bytes (name + value + 32 per field, RFC 9113 §6.5.2); a possible HPACK bomb")]
    HeaderListTooLarge { limit: u32 },
    #[error("response header block has no :status (RFC 9113 §8.3.2)")]
    MissingStatus,
    #[error("response header block has :status more than once (RFC 9113 §8.3)")]
    DuplicateStatus,
    #[error(":status is not three digits from 100 to 999 (RFC 9113 §8.3.2)")]
    InvalidStatus,
    #[error("response header block has a pseudo-field other than :status (RFC 9113 §8.3)")]
    UnknownPseudoField,
    #[error("pseudo-field after a regular field (RFC 9113 §8.3)")]
    PseudoAfterRegular,
    #[error("field name empty or with a character not allowed in HTTP/2: uppercase, space, control or non-ASCII (RFC 9113 §8.2.1)")]
    InvalidFieldName,
    #[error("field value with NUL, CR or LF (RFC 9113 §8.2.1)")]
    InvalidFieldValue,
    #[error("connection-specific field (connection, keep-alive, proxy-connection, transfer-encoding, upgrade) in HTTP/2 (RFC 9113 §8.2.2)")]
    ConnectionSpecificField,
    #[error("content-length is not a decimal number, or its values differ (RFC 9110 §8.6)")]
    InvalidContentLength,
}

impl HpackError {
    /// The code to send in GOAWAY, or in RST_STREAM for a stream error.
    pub fn code(self) -> ErrorCode {
        if self.is_connection_error() {
            ErrorCode::COMPRESSION_ERROR
        } else {
            ErrorCode::PROTOCOL_ERROR
        }
    }

    /// Whether the whole connection is lost (the dynamic table is out of step with the
    /// peer's), rather than the one stream whose block this was.
    pub fn is_connection_error(self) -> bool {
        matches!(
            self,
            HpackError::Truncated
                | HpackError::IntegerOverflow
                | HpackError::InvalidIndex { .. }
                | HpackError::InvalidHuffman
                | HpackError::TableSizeTooLarge { .. }
                | HpackError::LateTableSizeUpdate
                | HpackError::MissingTableSizeUpdate { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_errors_end_the_connection_and_the_others_the_stream() {
        assert!(HpackError::InvalidHuffman.is_connection_error());
        assert_eq!(HpackError::Truncated.code(), ErrorCode::COMPRESSION_ERROR);
        let bomb = HpackError::HeaderListTooLarge { limit: 10 };
        assert!(!bomb.is_connection_error());
        assert_eq!(bomb.code(), ErrorCode::PROTOCOL_ERROR);
        assert!(!HpackError::MissingStatus.is_connection_error());
        assert_eq!(HpackError::InvalidContentLength.code(), ErrorCode::PROTOCOL_ERROR);
    }
}
