//! The server's unidirectional streams (RFC 9114 §6.2): each opens with a varint type.
//! The control stream's frames are read (SETTINGS first, then GOAWAY); the QPACK encoder
//! and decoder streams are drained (with the dynamic table at 0 the server has nothing to
//! say there that herd must follow); a push stream is refused (herd allows no push);
//! reserved and unknown types are ignored. A second control or QPACK stream, and the end
//! of any of them, are connection errors.
//!
//! The server opens a handful of these per connection, so they are kept in a small list
//! (allocated once, at the connection's start), not a map.

use super::error::{H3Error, StreamKind};
use super::frame_decoder::{Frame, FrameDecoder, Limits, Settings};
use super::varint;

/// Unidirectional stream types.
pub mod stream_type {
    pub const CONTROL: u64 = 0x00;
    pub const PUSH: u64 = 0x01;
    pub const QPACK_ENCODER: u64 = 0x02;
    pub const QPACK_DECODER: u64 = 0x03;
}

/// What a server's unidirectional stream turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniKind {
    /// Its type is not all here yet.
    Pending,
    Control,
    /// A QPACK stream: drained.
    Qpack,
    /// Reserved or unknown: ignored.
    Ignored(u64),
}

/// The server's unidirectional streams on one connection, and what its control stream
/// said.
#[derive(Debug)]
pub struct ServerStreams {
    streams: Vec<(u64, UniKind, varint::Partial)>,
    control: FrameDecoder,
    seen: [bool; 3],
    settings: Option<Settings>,
    goaway: Option<u64>,
}

impl ServerStreams {
    pub fn new(limits: Limits) -> ServerStreams {
        ServerStreams {
            streams: Vec::with_capacity(4),
            control: FrameDecoder::new(StreamKind::Control, limits),
            seen: [false; 3],
            settings: None,
            goaway: None,
        }
    }

    /// The server's SETTINGS, once they have arrived.
    pub fn settings(&self) -> Option<Settings> {
        self.settings
    }

    /// The lowest stream id of the server's GOAWAYs: requests on it or later were not
    /// and will not be processed.
    pub fn goaway(&self) -> Option<u64> {
        self.goaway
    }

    /// What stream `id` is, as far as its bytes have said; None for a stream with no
    /// bytes yet, or one forgotten when it ended.
    pub fn kind(&self, id: u64) -> Option<UniKind> {
        self.streams.iter().find(|s| s.0 == id).map(|s| s.1)
    }

    /// Bytes on stream `id`; returns what the stream is.
    pub fn on_data(&mut self, id: u64, mut data: &[u8]) -> Result<UniKind, H3Error> {
        let i = match self.streams.iter().position(|s| s.0 == id) {
            Some(i) => i,
            None => {
                self.streams.push((id, UniKind::Pending, varint::Partial::default()));
                self.streams.len() - 1
            }
        };
        if self.streams[i].1 == UniKind::Pending {
            let (n, ty) = self.streams[i].2.feed(data);
            data = &data[n..];
            let Some(ty) = ty else { return Ok(UniKind::Pending) };
            self.streams[i].1 = self.classify(ty)?;
        }
        let kind = self.streams[i].1;
        if kind == UniKind::Control {
            self.on_control(data)?;
        }
        Ok(kind)
    }

    /// Stream `id` ended (FIN or reset by the server): forgotten, unless it was critical,
    /// which is an error.
    pub fn on_finished(&mut self, id: u64) -> Result<(), H3Error> {
        let Some(i) = self.streams.iter().position(|s| s.0 == id) else { return Ok(()) };
        match self.streams[i].1 {
            UniKind::Control | UniKind::Qpack => Err(H3Error::ClosedCriticalStream),
            UniKind::Pending | UniKind::Ignored(_) => {
                self.streams.swap_remove(i);
                Ok(())
            }
        }
    }

    fn classify(&mut self, ty: u64) -> Result<UniKind, H3Error> {
        let (slot, kind) = match ty {
            stream_type::CONTROL => (0, UniKind::Control),
            stream_type::QPACK_ENCODER => (1, UniKind::Qpack),
            stream_type::QPACK_DECODER => (2, UniKind::Qpack),
            stream_type::PUSH => return Err(H3Error::PushRefused),
            other => return Ok(UniKind::Ignored(other)),
        };
        if std::mem::replace(&mut self.seen[slot], true) {
            return Err(H3Error::DuplicateStream { stream_type: ty });
        }
        Ok(kind)
    }

    fn on_control(&mut self, mut data: &[u8]) -> Result<(), H3Error> {
        while !data.is_empty() {
            let decoded = self.control.decode(data)?;
            data = &data[decoded.consumed..];
            match decoded.frame {
                Some(Frame::Settings(s)) => self.settings = Some(s),
                Some(Frame::Goaway(id)) => self.goaway = Some(id),
                // The decoder refuses anything else on a control stream.
                Some(Frame::Headers(_) | Frame::Data(_)) | None => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h3::frame::{self, kind};

    fn control_bytes(frames: &[u8]) -> Vec<u8> {
        let mut out = vec![0x00];
        frame::encode_settings(&[(0x06, 4096)], &mut out);
        out.extend_from_slice(frames);
        out
    }

    #[test]
    fn settings_and_goaway_arrive_split_anywhere() {
        let mut goaway = Vec::new();
        frame::encode_varint_frame(kind::GOAWAY, 8, &mut goaway);
        frame::encode_varint_frame(kind::GOAWAY, 4, &mut goaway);
        let bytes = control_bytes(&goaway);
        for cut in 0..=bytes.len() {
            let mut s = ServerStreams::new(Limits::default());
            let first = s.on_data(3, &bytes[..cut]).unwrap();
            assert_eq!(first == UniKind::Pending, cut == 0);
            assert_eq!(s.on_data(3, &bytes[cut..]).unwrap(), UniKind::Control);
            assert_eq!(s.settings().and_then(|s| s.max_field_section_size), Some(4096));
            assert_eq!(s.goaway(), Some(4));
        }
    }

    #[test]
    fn qpack_streams_are_drained_and_unknown_ones_ignored() {
        let mut s = ServerStreams::new(Limits::default());
        assert_eq!(s.on_data(7, &[0x02, 0x3f, 0xe1, 0x1f]).unwrap(), UniKind::Qpack);
        assert_eq!(s.on_data(11, &[0x03, 0x00]).unwrap(), UniKind::Qpack);
        assert_eq!(s.on_data(15, &[0x40, 0x21, 0xff]).unwrap(), UniKind::Ignored(0x21));
        assert_eq!(s.on_finished(15), Ok(()));
        assert_eq!(s.on_finished(7), Err(H3Error::ClosedCriticalStream));
    }

    #[test]
    fn push_and_second_critical_streams_are_refused() {
        let mut s = ServerStreams::new(Limits::default());
        assert_eq!(s.on_data(3, &[0x01]), Err(H3Error::PushRefused));
        let mut s = ServerStreams::new(Limits::default());
        s.on_data(3, &control_bytes(&[])).unwrap();
        assert_eq!(s.on_data(7, &[0x00]), Err(H3Error::DuplicateStream { stream_type: 0 }));
        assert_eq!(s.on_finished(3), Err(H3Error::ClosedCriticalStream));
    }

    #[test]
    fn a_control_stream_must_open_with_settings() {
        let mut s = ServerStreams::new(Limits::default());
        let mut bytes = vec![0x00];
        frame::encode_varint_frame(kind::GOAWAY, 0, &mut bytes);
        assert_eq!(s.on_data(3, &bytes), Err(H3Error::MissingSettings));
    }
}
