/* SPDX-License-Identifier: Apache-2.0 */
/* The layout of a runtime value, for the engine and the in-tree programs.
 *
 * shlo/tensor.h declares shlo_value opaque: programs outside the project
 * read a value only through its accessors, so the reference count (a C11
 * atomic, which C++ cannot name) and the memory budget stay out of the
 * installed headers, and a field can change without breaking them.  Code
 * inside the project includes this header to read fields directly: the
 * kernels touch data and dims in their inner loops, where a call per read
 * would cost. */
#ifndef SHLO_CORE_VALUE_H
#define SHLO_CORE_VALUE_H

#include <stdatomic.h>

#include "shlo/tensor.h"

struct shlo_value {
  atomic_int refs;
  shlo_type_kind kind;
  /* TENSOR */
  shlo_elem_type elem;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t numel;
  size_t nbytes;
  void *data;
  const shlo_quant *quant; /* NULL unless quantized; owned by the value (a
                              reference-counted copy shared with the values
                              derived from it, freed with the last), never
                              borrowed from a module */
  /* TUPLE */
  int n_elems;
  shlo_value **elems; /* owned references */
  /* A view (core/tensor_view.h): data lies inside owner's buffer, and
   * the view holds a reference to owner; NULL for a tensor with a buffer
   * of its own. */
  struct shlo_value *owner;
  /* the execution memory budget this tensor is charged to, or NULL */
  struct shlo_mem_budget *budget;
  struct shlo_context *ctx; /* whose allocator the value came from */
};

#endif
