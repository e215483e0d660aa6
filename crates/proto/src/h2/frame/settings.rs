//! SETTINGS parameters (RFC 9113 §6.5): their ids, the range rules of §6.5.2, and
//! [`Settings`], a validated SETTINGS payload read in place.
//!
//! The decoder checks each value's range; what a value means for the connection (a new
//! window size, a new frame size limit) is the engine's to apply, in order.

use std::fmt;

use super::error::{FrameError, FrameRule};

/// A SETTINGS parameter id. A newtype, not an enum: a peer may send ids this codec does not
/// know, and those must be ignored (§6.5.2), not rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SettingId(pub u16);

impl SettingId {
    pub const HEADER_TABLE_SIZE: SettingId = SettingId(0x1);
    pub const ENABLE_PUSH: SettingId = SettingId(0x2);
    pub const MAX_CONCURRENT_STREAMS: SettingId = SettingId(0x3);
    pub const INITIAL_WINDOW_SIZE: SettingId = SettingId(0x4);
    pub const MAX_FRAME_SIZE: SettingId = SettingId(0x5);
    pub const MAX_HEADER_LIST_SIZE: SettingId = SettingId(0x6);

    /// The RFC's name without its `SETTINGS_` prefix, or `None` for an id it does not define.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            SettingId::HEADER_TABLE_SIZE => "HEADER_TABLE_SIZE",
            SettingId::ENABLE_PUSH => "ENABLE_PUSH",
            SettingId::MAX_CONCURRENT_STREAMS => "MAX_CONCURRENT_STREAMS",
            SettingId::INITIAL_WINDOW_SIZE => "INITIAL_WINDOW_SIZE",
            SettingId::MAX_FRAME_SIZE => "MAX_FRAME_SIZE",
            SettingId::MAX_HEADER_LIST_SIZE => "MAX_HEADER_LIST_SIZE",
            _ => return None,
        })
    }
}

impl fmt::Display for SettingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "setting {:#x}", self.0),
        }
    }
}

/// The largest flow-control window (§6.9.1), and so the largest INITIAL_WINDOW_SIZE.
pub const MAX_WINDOW_SIZE: u32 = (1 << 31) - 1;
/// The largest frame payload a peer may announce it accepts (§6.5.2).
pub const MAX_MAX_FRAME_SIZE: u32 = (1 << 24) - 1;

/// A SETTINGS frame's payload whose length and values have been checked. It borrows the
/// frame's bytes; [`Settings::iter`] reads the parameters in the order they were sent, which
/// is the order they must be applied in (§6.5.3). Unknown ids are kept (the engine ignores
/// them); an id may repeat, and then the last value wins.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Settings<'a> {
    payload: &'a [u8],
}

impl<'a> Settings<'a> {
    /// Checks a SETTINGS payload (not an ACK's): a multiple of six bytes, each known value in
    /// its range.
    pub(crate) fn parse(payload: &'a [u8]) -> Result<Settings<'a>, FrameError> {
        let settings = Settings { payload };
        if payload.len() % 6 != 0 {
            return Err(FrameError::connection(FrameRule::SettingsLength { len: len32(payload) }));
        }
        for (id, value) in settings.iter() {
            check(id, value)?;
        }
        Ok(settings)
    }

    /// The parameters in the order they were sent.
    pub fn iter(&self) -> impl Iterator<Item = (SettingId, u32)> + 'a {
        self.payload.chunks_exact(6).map(|p| {
            let id = u16::from_be_bytes([p[0], p[1]]);
            (SettingId(id), u32::from_be_bytes([p[2], p[3], p[4], p[5]]))
        })
    }

    /// The value `id` ends up with after this frame, if the frame sets it.
    pub fn get(&self, id: SettingId) -> Option<u32> {
        self.iter().filter(|&(i, _)| i == id).map(|(_, v)| v).last()
    }

    /// The number of parameters (repeats counted).
    pub fn len(&self) -> usize {
        self.payload.len() / 6
    }

    pub fn is_empty(&self) -> bool {
        self.payload.is_empty()
    }
}

impl fmt::Debug for Settings<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter().map(|(id, v)| (id.to_string(), v))).finish()
    }
}

/// The range rules of §6.5.2 for one parameter.
fn check(id: SettingId, value: u32) -> Result<(), FrameError> {
    let rule = match id {
        SettingId::ENABLE_PUSH if value > 1 => FrameRule::EnablePush { value },
        SettingId::INITIAL_WINDOW_SIZE if value > MAX_WINDOW_SIZE => {
            FrameRule::InitialWindowSize { value }
        }
        SettingId::MAX_FRAME_SIZE
            if !(super::DEFAULT_MAX_FRAME_SIZE..=MAX_MAX_FRAME_SIZE).contains(&value) =>
        {
            FrameRule::MaxFrameSize { value }
        }
        _ => return Ok(()),
    };
    Err(FrameError::connection(rule))
}

/// A payload length as the u32 it came from (a frame's length field has 24 bits).
fn len32(payload: &[u8]) -> u32 {
    u32::try_from(payload.len()).unwrap_or(u32::MAX)
}
