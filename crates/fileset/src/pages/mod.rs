//! The bytes of herd serve's computed pages that a checker must be able to reproduce: `/9x9`
//! (nine_by_nine), `/include`'s frame (include) and its texts (include_texts). The server sends
//! them from here and [`crate::expected`] assembles them from here, so the page served and the
//! page expected cannot drift apart. Answering requests stays in herd-serve's own pages/.

pub mod include;
pub mod include_texts;
pub mod nine_by_nine;
