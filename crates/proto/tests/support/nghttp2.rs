//! nghttp2's HPACK deflater and inflater (through `libnghttp2-sys`), behind a small safe
//! wrapper: the oracle of the differential tests and the peer of the benchmark example.

#![allow(dead_code)] // Each user takes what it needs.

use std::os::raw::c_int;
use std::ptr;

use libnghttp2_sys as sys;

/// A field for the deflater: name, value, and "never index" (NGHTTP2_NV_FLAG_NO_INDEX).
pub(crate) type Field<'a> = (&'a [u8], &'a [u8], bool);

/// Fields as nghttp2 hands them out, copied.
pub(crate) type Owned = Vec<(Vec<u8>, Vec<u8>)>;

pub(crate) struct Deflater(*mut sys::nghttp2_hd_deflater);

impl Deflater {
    /// A deflater that uses at most `max_table_size` bytes of dynamic table.
    pub(crate) fn new(max_table_size: usize) -> Self {
        let mut p = ptr::null_mut();
        // SAFETY: `p` is a valid out-pointer; success is checked before use.
        let rv = unsafe { sys::nghttp2_hd_deflate_new(&mut p, max_table_size) };
        assert_eq!(rv, 0, "nghttp2_hd_deflate_new");
        Deflater(p)
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE changed.
    pub(crate) fn change_table_size(&mut self, size: usize) {
        // SAFETY: self.0 is a live deflater.
        let rv = unsafe { sys::nghttp2_hd_deflate_change_table_size(self.0, size) };
        assert_eq!(rv, 0, "nghttp2_hd_deflate_change_table_size");
    }

    /// Appends the block for `fields` to `out`.
    pub(crate) fn deflate(&mut self, fields: &[Field<'_>], out: &mut Vec<u8>) {
        let nva: Vec<sys::nghttp2_nv> = fields
            .iter()
            .map(|&(name, value, never)| sys::nghttp2_nv {
                name: name.as_ptr().cast_mut(),
                value: value.as_ptr().cast_mut(),
                namelen: name.len(),
                valuelen: value.len(),
                flags: if never { sys::NGHTTP2_NV_FLAG_NO_INDEX as u8 } else { 0 },
            })
            .collect();
        self.deflate_nv(&nva, out);
    }

    /// As `deflate`, with the fields already in nghttp2's form (no conversion per call).
    pub(crate) fn deflate_nv(&mut self, nva: &[sys::nghttp2_nv], out: &mut Vec<u8>) {
        // SAFETY: nva points to nva.len() fields whose slices outlive the call.
        let bound = unsafe { sys::nghttp2_hd_deflate_bound(self.0, nva.as_ptr(), nva.len()) };
        out.reserve(bound);
        let start = out.len();
        // SAFETY: the spare capacity holds `bound` bytes, which nghttp2 promises suffice; the
        // length is set to what it wrote.
        unsafe {
            let rv = sys::nghttp2_hd_deflate_hd2(
                self.0,
                out.as_mut_ptr().add(start),
                bound,
                nva.as_ptr(),
                nva.len(),
            );
            assert!(rv >= 0, "nghttp2_hd_deflate_hd2: {rv}");
            out.set_len(start + rv as usize);
        }
    }

    /// The dynamic table, newest first.
    pub(crate) fn table(&self) -> Owned {
        // SAFETY: self.0 is live; entries returned are valid until the next deflate.
        unsafe {
            let n = sys::nghttp2_hd_deflate_get_num_table_entries(self.0);
            (62..=n).map(|i| nv(sys::nghttp2_hd_deflate_get_table_entry(self.0, i))).collect()
        }
    }

    pub(crate) fn table_size(&self) -> usize {
        // SAFETY: self.0 is live.
        unsafe { sys::nghttp2_hd_deflate_get_dynamic_table_size(self.0) }
    }
}

impl Drop for Deflater {
    fn drop(&mut self) {
        // SAFETY: self.0 was made by nghttp2_hd_deflate_new and is freed once.
        unsafe { sys::nghttp2_hd_deflate_del(self.0) }
    }
}

pub(crate) struct Inflater(*mut sys::nghttp2_hd_inflater);

impl Inflater {
    pub(crate) fn new() -> Self {
        let mut p = ptr::null_mut();
        // SAFETY: `p` is a valid out-pointer; success is checked before use.
        let rv = unsafe { sys::nghttp2_hd_inflate_new(&mut p) };
        assert_eq!(rv, 0, "nghttp2_hd_inflate_new");
        Inflater(p)
    }

    /// This endpoint announced SETTINGS_HEADER_TABLE_SIZE `size`.
    pub(crate) fn change_table_size(&mut self, size: usize) {
        // SAFETY: self.0 is live and between blocks.
        let rv = unsafe { sys::nghttp2_hd_inflate_change_table_size(self.0, size) };
        assert_eq!(rv, 0, "nghttp2_hd_inflate_change_table_size");
    }

    /// Decodes one whole block, each field to `on_field`; Err(nghttp2's error code).
    pub(crate) fn inflate_with(
        &mut self,
        block: &[u8],
        mut on_field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), isize> {
        let mut rest = block;
        loop {
            let mut out = sys::nghttp2_nv {
                name: ptr::null_mut(),
                value: ptr::null_mut(),
                namelen: 0,
                valuelen: 0,
                flags: 0,
            };
            let mut flags: c_int = 0;
            // SAFETY: `rest` is valid for its length; `out` and `flags` are valid
            // out-pointers; an emitted field is read before the next call.
            let rv = unsafe {
                sys::nghttp2_hd_inflate_hd3(
                    self.0,
                    &mut out,
                    &mut flags,
                    rest.as_ptr(),
                    rest.len(),
                    1,
                )
            };
            if rv < 0 {
                return Err(rv);
            }
            rest = &rest[rv as usize..];
            if flags & sys::NGHTTP2_HD_INFLATE_EMIT as c_int != 0 {
                // SAFETY: an emitted field points at namelen/valuelen valid bytes.
                unsafe {
                    on_field(
                        std::slice::from_raw_parts(out.name, out.namelen),
                        std::slice::from_raw_parts(out.value, out.valuelen),
                    );
                }
            }
            if flags & sys::NGHTTP2_HD_INFLATE_FINAL as c_int != 0 {
                // SAFETY: self.0 is live.
                unsafe { sys::nghttp2_hd_inflate_end_headers(self.0) };
                return Ok(());
            }
            if flags & sys::NGHTTP2_HD_INFLATE_EMIT as c_int == 0 && rest.is_empty() {
                return Ok(());
            }
        }
    }

    pub(crate) fn inflate(&mut self, block: &[u8]) -> Result<Owned, isize> {
        let mut fields = Vec::new();
        self.inflate_with(block, |n, v| fields.push((n.to_vec(), v.to_vec()))).map(|()| fields)
    }

    /// The dynamic table, newest first.
    pub(crate) fn table(&self) -> Owned {
        // SAFETY: self.0 is live; entries returned are valid until the next inflate.
        unsafe {
            let n = sys::nghttp2_hd_inflate_get_num_table_entries(self.0);
            (62..=n).map(|i| nv(sys::nghttp2_hd_inflate_get_table_entry(self.0, i))).collect()
        }
    }
}

impl Default for Inflater {
    fn default() -> Self {
        Inflater::new()
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: self.0 was made by nghttp2_hd_inflate_new and is freed once.
        unsafe { sys::nghttp2_hd_inflate_del(self.0) }
    }
}

/// Copies a table entry out.
///
/// # Safety
/// `p` is null or points at a valid `nghttp2_nv`.
unsafe fn nv(p: *const sys::nghttp2_nv) -> (Vec<u8>, Vec<u8>) {
    assert!(!p.is_null(), "table entry index out of range");
    // SAFETY: the caller's promise.
    unsafe {
        let nv = &*p;
        (
            std::slice::from_raw_parts(nv.name, nv.namelen).to_vec(),
            std::slice::from_raw_parts(nv.value, nv.valuelen).to_vec(),
        )
    }
}
