//! QPACK (RFC 9204) as herd uses it: the static table only. herd's SETTINGS give the
//! server no dynamic table (capacity 0, no blocked streams), so a response's field section
//! is decoded with no state carried between sections and no encoder or decoder stream to
//! follow, and a request's is encoded once per run.

mod decoder;
mod encoder;
mod huffman;
mod integer;
mod static_table;

pub use decoder::{Decoder, FieldSection};
pub use encoder::encode_field_section;
pub use static_table::STATIC_TABLE;
