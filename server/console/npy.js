/* SPDX-License-Identifier: Apache-2.0 */
/* NumPy .npy files as JSON tensors of PROTOCOL.md: the header dict gives
 * dtype, shape and order; the data, little-endian C order, goes to the
 * server as "b64" (the protocol's raw storage form), so no value is
 * converted in the browser. */
'use strict';

const Npy = (function () {
  /* numpy type code (without byte order) -> the protocol's dtype */
  const DTYPES = {
    b1: 'i1', i1: 'i8', i2: 'i16', i4: 'i32', i8: 'i64',
    u1: 'ui8', u2: 'ui16', u4: 'ui32', u8: 'ui64',
    f2: 'f16', f4: 'f32', f8: 'f64', c8: 'complex<f32>', c16: 'complex<f64>'
  };
  const SIZES = { b1: 1, i1: 1, i2: 2, i4: 4, i8: 8, u1: 1, u2: 2, u4: 4, u8: 8,
                  f2: 2, f4: 4, f8: 8, c8: 8, c16: 16 };

  function fail(msg) { throw new Error('.npy: ' + msg); }

  /* The header dict's fields; a python literal, read with patterns
   * rather than evaluated. */
  function readHeader(text) {
    const descr = /'descr'\s*:\s*'([<>|=])([a-z]\d+)'/.exec(text);
    const order = /'fortran_order'\s*:\s*(True|False)/.exec(text);
    const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(text);
    if (!descr || !order || !shape) fail('header not understood: ' + text.trim());
    const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s !== '')
      .map((s) => {
        if (!/^\d+$/.test(s)) fail('bad dimension ' + s);
        return Number(s);
      });
    return { order: descr[1], code: descr[2], fortran: order[1] === 'True', shape: dims };
  }

  /* ArrayBuffer -> {dtype, shape, bytes (Uint8Array of the data)} */
  function parse(buffer) {
    const bytes = new Uint8Array(buffer);
    const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; /* \x93NUMPY */
    if (bytes.length < 10 || !magic.every((b, i) => bytes[i] === b)) fail('not a NumPy file');
    const major = bytes[6];
    const view = new DataView(buffer);
    let start, len;
    if (major === 1) { len = view.getUint16(8, true); start = 10; }
    else if (major === 2 || major === 3) {
      if (bytes.length < 12) fail('truncated header');
      len = view.getUint32(8, true); start = 12;
    } else fail('format version ' + major + ' is not known');
    if (start + len > bytes.length) fail('truncated header');
    const h = readHeader(new TextDecoder(major === 3 ? 'utf-8' : 'latin1')
      .decode(bytes.subarray(start, start + len)));
    const dtype = DTYPES[h.code];
    if (!dtype) fail('dtype ' + h.code + ' has no StableHLO counterpart here');
    if (h.order === '>' && SIZES[h.code] > 1) fail('big-endian data: save it little-endian');
    if (h.fortran && h.shape.length > 1) fail('Fortran order: save it with np.ascontiguousarray');
    const count = h.shape.reduce((a, b) => a * b, 1);
    const need = count * SIZES[h.code];
    const data = bytes.subarray(start + len);
    if (data.length < need) fail('data holds ' + data.length + ' bytes, the shape needs ' + need);
    return { dtype, shape: h.shape, bytes: data.subarray(0, need) };
  }

  /* The JSON tensor of an .npy file's contents. */
  function toTensor(buffer) {
    const a = parse(buffer);
    return { dtype: a.dtype, shape: a.shape, b64: Shlo.base64(a.bytes) };
  }

  return { parse, toTensor };
})();
