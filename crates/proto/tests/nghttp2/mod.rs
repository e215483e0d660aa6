//! A thin safe wrapper over nghttp2 (through `libnghttp2-sys`), for differential tests:
//! sessions in memory that record what their callbacks saw ([`Rec`]), and nghttp2's HPACK
//! decoder. Test code: it asserts instead of returning errors.

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::os::raw::c_int;
use std::ptr;

use herd_proto::h2::frame::{flag, kind};
use libnghttp2_sys as ng;

pub(crate) type Fields = Vec<(Vec<u8>, Vec<u8>)>;

/// A frame as a receiver reads it: a header block joined over its CONTINUATION frames and
/// decoded; a DATA frame's payload joined, with its flow-control length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rec {
    Data { stream: u32, end_stream: bool, flow: u32, data: Vec<u8> },
    Headers { stream: u32, end_stream: bool, fields: Fields },
    Priority { stream: u32 },
    RstStream { stream: u32, code: u32 },
    Settings { ack: bool, settings: Vec<(u16, u32)> },
    PushPromise { stream: u32, promised: u32, fields: Fields },
    Ping { ack: bool, payload: [u8; 8] },
    GoAway { last_stream: u32, code: u32, debug: Vec<u8> },
    WindowUpdate { stream: u32, increment: u32 },
}

// ---- a thin safe wrapper over nghttp2 sessions ----

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Client,
    Server,
}

/// What a session's callbacks saw.
#[derive(Default)]
struct Log {
    recv: Vec<Rec>,
    /// DATA bytes of the frame being received.
    chunks: Vec<u8>,
    /// Header fields of the block being received.
    fields: Fields,
    /// Extra payload bytes (pad length byte included) asked for on HEADERS and DATA frames,
    /// varied per frame; 0 for none.
    padding: usize,
}

/// A request or response body served by a data provider.
struct Body {
    data: Vec<u8>,
    at: usize,
}

pub(crate) struct Peer {
    session: *mut ng::nghttp2_session,
    log: *mut Log,
    /// Bodies being served. Boxed: nghttp2 holds pointers to them, which must not move
    /// when the Vec grows.
    #[allow(clippy::vec_box)]
    bodies: Vec<Box<Body>>,
}

impl Peer {
    pub(crate) fn new(role: Role, padding: usize) -> Peer {
        let log = Box::into_raw(Box::new(Log { padding, ..Log::default() }));
        let mut session = ptr::null_mut();
        // SAFETY: plain nghttp2 set-up calls with valid out-pointers; the callbacks object
        // is copied by `*_new` and freed right after.
        unsafe {
            let mut cbs = ptr::null_mut();
            assert_eq!(ng::nghttp2_session_callbacks_new(&mut cbs), 0);
            ng::nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, Some(on_frame_recv));
            ng::nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, Some(on_data_chunk));
            ng::nghttp2_session_callbacks_set_on_header_callback(cbs, Some(on_header));
            ng::nghttp2_session_callbacks_set_select_padding_callback2(cbs, Some(select_padding));
            let rv = match role {
                Role::Client => ng::nghttp2_session_client_new(&mut session, cbs, log.cast()),
                Role::Server => ng::nghttp2_session_server_new(&mut session, cbs, log.cast()),
            };
            assert_eq!(rv, 0);
            ng::nghttp2_session_callbacks_del(cbs);
        }
        Peer { session, log, bodies: Vec::new() }
    }

    /// What the session has received so far, frame by frame.
    pub(crate) fn received(&self) -> &[Rec] {
        // SAFETY: the log lives until drop; callbacks only run inside recv/send, which take
        // `&mut self`, so no callback runs while this borrow lives.
        unsafe { &(*self.log).recv }
    }

    pub(crate) fn recv(&mut self, bytes: &[u8]) -> isize {
        // SAFETY: a valid session and a valid slice.
        unsafe { ng::nghttp2_session_mem_recv2(self.session, bytes.as_ptr(), bytes.len()) }
    }

    /// Everything the session has to send now.
    pub(crate) fn send(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let mut data = ptr::null();
            // SAFETY: a valid session; the returned chunk stays valid until the next call.
            let n = unsafe { ng::nghttp2_session_mem_send2(self.session, &mut data) };
            assert!(n >= 0, "nghttp2_session_mem_send2: {n}");
            if n == 0 {
                return out;
            }
            // SAFETY: nghttp2 returned `n` readable bytes at `data`.
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(data, n as usize) });
        }
    }

    pub(crate) fn submit_settings(&mut self, iv: &[(i32, u32)]) {
        let iv: Vec<_> = iv
            .iter()
            .map(|&(id, value)| ng::nghttp2_settings_entry { settings_id: id, value })
            .collect();
        // SAFETY: a valid session and array.
        assert_eq!(
            unsafe { ng::nghttp2_submit_settings(self.session, 0, iv.as_ptr(), iv.len()) },
            0
        );
    }

    pub(crate) fn submit_request(
        &mut self,
        fields: &Fields,
        pri: Option<ng::nghttp2_priority_spec>,
        body: Option<Vec<u8>>,
    ) -> i32 {
        let nva = nva(fields);
        let provider = self.provider(body);
        let pri_ptr = pri.as_ref().map_or(ptr::null(), |p| p as *const _);
        let prd = provider.as_ref().map_or(ptr::null(), |p| p as *const _);
        // SAFETY: valid session, arrays and provider (its body outlives the session).
        let id = unsafe {
            ng::nghttp2_submit_request2(
                self.session,
                pri_ptr,
                nva.as_ptr(),
                nva.len(),
                prd,
                ptr::null_mut(),
            )
        };
        assert!(id > 0, "nghttp2_submit_request2: {id}");
        id
    }

    pub(crate) fn submit_response(&mut self, stream: i32, fields: &Fields, body: Option<Vec<u8>>) {
        let nva = nva(fields);
        let provider = self.provider(body);
        let prd = provider.as_ref().map_or(ptr::null(), |p| p as *const _);
        // SAFETY: as above.
        let rv = unsafe {
            ng::nghttp2_submit_response2(self.session, stream, nva.as_ptr(), nva.len(), prd)
        };
        assert_eq!(rv, 0);
    }

    pub(crate) fn submit_push_promise(&mut self, stream: i32, fields: &Fields) -> i32 {
        let nva = nva(fields);
        // SAFETY: as above.
        let id = unsafe {
            ng::nghttp2_submit_push_promise(
                self.session,
                0,
                stream,
                nva.as_ptr(),
                nva.len(),
                ptr::null_mut(),
            )
        };
        assert!(id > 0, "nghttp2_submit_push_promise: {id}");
        id
    }

    pub(crate) fn submit_rst_stream(&mut self, stream: i32, code: u32) {
        // SAFETY: a valid session.
        assert_eq!(unsafe { ng::nghttp2_submit_rst_stream(self.session, 0, stream, code) }, 0);
    }

    pub(crate) fn submit_window_update(&mut self, stream: i32, increment: i32) {
        // SAFETY: a valid session.
        assert_eq!(
            unsafe { ng::nghttp2_submit_window_update(self.session, 0, stream, increment) },
            0
        );
    }

    pub(crate) fn submit_ping(&mut self, payload: [u8; 8]) {
        // SAFETY: a valid session and 8 bytes.
        assert_eq!(unsafe { ng::nghttp2_submit_ping(self.session, 0, payload.as_ptr()) }, 0);
    }

    pub(crate) fn submit_goaway(&mut self, last_stream: i32, code: u32, debug: &[u8]) {
        // SAFETY: a valid session and slice.
        let rv = unsafe {
            ng::nghttp2_submit_goaway(
                self.session,
                0,
                last_stream,
                code,
                debug.as_ptr(),
                debug.len(),
            )
        };
        assert_eq!(rv, 0);
    }

    fn provider(&mut self, body: Option<Vec<u8>>) -> Option<ng::nghttp2_data_provider2> {
        let body = body?;
        self.bodies.push(Box::new(Body { data: body, at: 0 }));
        let ptr: *mut Body = &mut **self.bodies.last_mut().unwrap();
        Some(ng::nghttp2_data_provider2 {
            source: ng::nghttp2_data_source { ptr: ptr.cast() },
            read_callback: Some(read_body),
        })
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // SAFETY: both were made in `new` and are freed once.
        unsafe {
            ng::nghttp2_session_del(self.session);
            drop(Box::from_raw(self.log));
        }
    }
}

/// nghttp2_nv entries pointing into `fields` (which must outlive their use).
pub(crate) fn nva(fields: &Fields) -> Vec<ng::nghttp2_nv> {
    fields
        .iter()
        .map(|(n, v)| ng::nghttp2_nv {
            name: n.as_ptr().cast_mut(),
            value: v.as_ptr().cast_mut(),
            namelen: n.len(),
            valuelen: v.len(),
            flags: ng::NGHTTP2_NV_FLAG_NONE as u8,
        })
        .collect()
}

/// nghttp2's HPACK decoder, for header blocks herd's decoder hands out.
pub(crate) struct Inflater(*mut ng::nghttp2_hd_inflater);

impl Inflater {
    pub(crate) fn new() -> Inflater {
        let mut p = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        assert_eq!(unsafe { ng::nghttp2_hd_inflate_new(&mut p) }, 0);
        Inflater(p)
    }

    pub(crate) fn inflate(&mut self, mut block: &[u8]) -> Fields {
        let mut out = Vec::new();
        loop {
            let mut nv = MaybeUninit::<ng::nghttp2_nv>::zeroed();
            let mut flags: c_int = 0;
            // SAFETY: a valid inflater, out-pointers and input slice.
            let n = unsafe {
                ng::nghttp2_hd_inflate_hd3(
                    self.0,
                    nv.as_mut_ptr(),
                    &mut flags,
                    block.as_ptr(),
                    block.len(),
                    1,
                )
            };
            assert!(n >= 0, "nghttp2 could not inflate a block herd handed out: {n}");
            block = &block[n as usize..];
            if flags & ng::NGHTTP2_HD_INFLATE_EMIT as c_int != 0 {
                // SAFETY: on EMIT, nv holds valid name and value pointers.
                let nv = unsafe { nv.assume_init() };
                let (name, value) = unsafe {
                    (
                        std::slice::from_raw_parts(nv.name, nv.namelen).to_vec(),
                        std::slice::from_raw_parts(nv.value, nv.valuelen).to_vec(),
                    )
                };
                out.push((name, value));
            }
            if flags & ng::NGHTTP2_HD_INFLATE_FINAL as c_int != 0 {
                // SAFETY: a valid inflater.
                unsafe { ng::nghttp2_hd_inflate_end_headers(self.0) };
                return out;
            }
            if flags & ng::NGHTTP2_HD_INFLATE_EMIT as c_int == 0 && block.is_empty() {
                return out;
            }
        }
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: made in `new`, freed once.
        unsafe { ng::nghttp2_hd_inflate_del(self.0) };
    }
}

// ---- callbacks ----

/// # Safety
/// `user_data` is the session's `Log`; nghttp2 calls back only inside recv/send.
unsafe fn log<'a>(user_data: *mut c_void) -> &'a mut Log {
    // SAFETY: see above.
    unsafe { &mut *user_data.cast::<Log>() }
}

unsafe extern "C" fn on_frame_recv(
    _: *mut ng::nghttp2_session,
    frame: *const ng::nghttp2_frame,
    user_data: *mut c_void,
) -> c_int {
    // SAFETY: nghttp2 passes a valid frame whose union member matches hd.type_.
    let (log, frame) = unsafe { (log(user_data), &*frame) };
    let hd = unsafe { frame.hd };
    let stream = hd.stream_id as u32;
    let end_stream = hd.flags & flag::END_STREAM != 0;
    let rec = match hd.type_ {
        kind::DATA => Rec::Data {
            stream,
            end_stream,
            flow: hd.length as u32,
            data: std::mem::take(&mut log.chunks),
        },
        kind::HEADERS => {
            Rec::Headers { stream, end_stream, fields: std::mem::take(&mut log.fields) }
        }
        kind::PRIORITY => Rec::Priority { stream },
        kind::RST_STREAM => Rec::RstStream { stream, code: unsafe { frame.rst_stream.error_code } },
        kind::SETTINGS => {
            let s = unsafe { frame.settings };
            let iv = if s.niv == 0 {
                &[][..]
            } else {
                unsafe { std::slice::from_raw_parts(s.iv, s.niv) }
            };
            Rec::Settings {
                ack: hd.flags & flag::ACK != 0,
                settings: iv.iter().map(|e| (e.settings_id as u16, e.value)).collect(),
            }
        }
        kind::PUSH_PROMISE => Rec::PushPromise {
            stream,
            promised: unsafe { frame.push_promise.promised_stream_id } as u32,
            fields: std::mem::take(&mut log.fields),
        },
        kind::PING => {
            Rec::Ping { ack: hd.flags & flag::ACK != 0, payload: unsafe { frame.ping.opaque_data } }
        }
        kind::GOAWAY => {
            let g = unsafe { frame.goaway };
            let debug = if g.opaque_data_len == 0 {
                vec![]
            } else {
                unsafe { std::slice::from_raw_parts(g.opaque_data, g.opaque_data_len) }.to_vec()
            };
            Rec::GoAway { last_stream: g.last_stream_id as u32, code: g.error_code, debug }
        }
        kind::WINDOW_UPDATE => Rec::WindowUpdate {
            stream,
            increment: unsafe { frame.window_update.window_size_increment } as u32,
        },
        _ => return 0,
    };
    log.recv.push(rec);
    0
}

unsafe extern "C" fn on_data_chunk(
    _: *mut ng::nghttp2_session,
    _flags: u8,
    _stream: i32,
    data: *const u8,
    len: usize,
    user_data: *mut c_void,
) -> c_int {
    // SAFETY: nghttp2 passes `len` readable bytes.
    unsafe { log(user_data).chunks.extend_from_slice(std::slice::from_raw_parts(data, len)) };
    0
}

unsafe extern "C" fn on_header(
    _: *mut ng::nghttp2_session,
    _frame: *const ng::nghttp2_frame,
    name: *const u8,
    namelen: usize,
    value: *const u8,
    valuelen: usize,
    _flags: u8,
    user_data: *mut c_void,
) -> c_int {
    // SAFETY: nghttp2 passes valid name and value slices.
    unsafe {
        let field = (
            std::slice::from_raw_parts(name, namelen).to_vec(),
            std::slice::from_raw_parts(value, valuelen).to_vec(),
        );
        log(user_data).fields.push(field);
    }
    0
}

unsafe extern "C" fn select_padding(
    _: *mut ng::nghttp2_session,
    frame: *const ng::nghttp2_frame,
    max_payloadlen: usize,
    user_data: *mut c_void,
) -> ng::nghttp2_ssize {
    // SAFETY: as in on_frame_recv.
    let (log, len) = unsafe { (log(user_data), (*frame).hd.length) };
    if log.padding == 0 {
        return len as isize;
    }
    // Vary it: 0 to `padding` bytes, plus the pad-length byte.
    let extra = 1 + len % (log.padding + 1);
    (len + extra).min(max_payloadlen) as isize
}

unsafe extern "C" fn read_body(
    _: *mut ng::nghttp2_session,
    _stream: i32,
    buf: *mut u8,
    length: usize,
    data_flags: *mut u32,
    source: *mut ng::nghttp2_data_source,
    _: *mut c_void,
) -> ng::nghttp2_ssize {
    // SAFETY: the source is a `Body` kept alive by its Peer; nghttp2 gives `length`
    // writable bytes at `buf`.
    unsafe {
        let body = &mut *(*source).ptr.cast::<Body>();
        let n = length.min(body.data.len() - body.at);
        ptr::copy_nonoverlapping(body.data[body.at..].as_ptr(), buf, n);
        body.at += n;
        if body.at == body.data.len() {
            *data_flags |= ng::NGHTTP2_DATA_FLAG_EOF;
        }
        n as isize
    }
}
