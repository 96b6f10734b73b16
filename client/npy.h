/* SPDX-License-Identifier: Apache-2.0 */
/* NumPy's .npy and .npz files as shlo tensors, for `shlo run --input=@x.npy`
 * and `--output=@y.npy` (docs/cli.md).
 *
 * dtypes map as the Python client maps them (client/python/shlo_client.py):
 * bool <-> i1, intN/uintN <-> iN/uiN, float16/32/64 <-> f16/f32/f64,
 * complex64/128 <-> complex<f32>/complex<f64>.  Types numpy lacks travel as
 * raw unsigned views: bf16 as uint16 (its bit pattern), i2/i4 as int8,
 * ui2/ui4 and the narrow floats as uint8 (the pattern in the low bits).  A
 * reader gives the numpy type; npy_retype turns a raw view into the type a
 * function takes.  ml_dtypes' arrays (void dtypes |V1, |V2) read as uint8
 * and uint16 views.
 *
 * An .npz is a zip archive of .npy entries, stored or deflated (deflate
 * needs zlib; the build says whether it has it).  Every function returns 0,
 * or -1 with a one-line reason in err; nothing here prints. */
#ifndef SHLO_CLI_NPY_H
#define SHLO_CLI_NPY_H

#include <stdbool.h>
#include <stddef.h>

#include "shlo/tensor.h"

#define NPY_ERR_MAX 256

/* Whether bytes start as a zip archive (an .npz) does. */
bool npy_is_zip(const unsigned char *bytes, size_t len);

/* The tensor in one .npy image; *out is owned by the caller. */
int npy_read(const unsigned char *bytes, size_t len, shlo_value **out,
             char err[NPY_ERR_MAX]);

/* The .npy image of tensor v: *bytes malloc'd (caller frees). */
int npy_write(const shlo_value *v, unsigned char **bytes, size_t *len,
              char err[NPY_ERR_MAX]);

/* One array of an .npz: its name without ".npy", and its tensor. */
typedef struct npz_entry {
  char *name;     /* malloc'd */
  shlo_value *v;  /* owned */
} npz_entry;

/* The arrays of an .npz in archive order (np.savez's arr_0, arr_1, ...
 * are put in number order); *entries malloc'd, free with npz_free. */
int npz_read(const unsigned char *bytes, size_t len, npz_entry **entries,
             int *n, char err[NPY_ERR_MAX]);
void npz_free(npz_entry *entries, int n);

/* An .npz of the n tensors, named arr_0.npy, arr_1.npy, ... (as
 * np.savez names positional arrays), stored uncompressed. */
int npz_write(shlo_value *const *vals, int n, unsigned char **bytes,
              size_t *len, char err[NPY_ERR_MAX]);

/* The numpy dtype string ("<f4", "|b1", ...) a tensor of elem is written
 * with. */
const char *npy_descr_of(shlo_elem_type elem);

/* Make *v a tensor of element type want when it is one already, or the raw
 * view of want that numpy carries it in (uint16 for bf16, uint8/int8 for
 * narrow floats and sub-byte integers, int64 for index): *v is replaced by
 * a retyped copy.  False (v untouched) when it is neither. */
bool npy_retype(shlo_value **v, shlo_elem_type want);

#endif
