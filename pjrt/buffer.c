/* SPDX-License-Identifier: Apache-2.0 */
/* Buffers: engine tensors on the one device, host transfers both ways.
 *
 * Device layout is the engine's: dense, row-major (the major-to-minor
 * order XLA calls {rank-1, ..., 0}), no tiling.  A transfer may give the
 * host side any byte strides (numpy views, negative strides included);
 * any other device or host layout is refused with UNIMPLEMENTED. */
#include "pjrt_internal.h"

#include <stdlib.h>
#include <string.h>

/* X(PJRT type, shlo type): every element type both sides have.  Sub-byte
 * integers and i1 take one byte per element on both sides (ml_dtypes'
 * int4 and numpy's bool are bytes too). */
#define SHLO_PJRT_TYPES(X)                                          \
  X(PRED, I1) X(S2, SI2) X(S4, SI4) X(S8, SI8) X(S16, SI16)         \
  X(S32, SI32) X(S64, SI64) X(U2, UI2) X(U4, UI4) X(U8, UI8)        \
  X(U16, UI16) X(U32, UI32) X(U64, UI64) X(F16, F16) X(BF16, BF16)  \
  X(F32, F32) X(F64, F64) X(C64, C64) X(C128, C128)                 \
  X(F8E5M2, F8E5M2) X(F8E4M3FN, F8E4M3FN)                           \
  X(F8E4M3B11FNUZ, F8E4M3B11FNUZ) X(F8E5M2FNUZ, F8E5M2FNUZ)         \
  X(F8E4M3FNUZ, F8E4M3FNUZ) X(F8E4M3, F8E4M3) X(F8E3M4, F8E3M4)

int shlo_pjrt_elem_from_pjrt(PJRT_Buffer_Type t) {
  switch (t) {
#define FROM_PJRT(p, s) case PJRT_Buffer_Type_##p: return SHLO_##s;
    SHLO_PJRT_TYPES(FROM_PJRT)
#undef FROM_PJRT
  default: return -1;
  }
}

PJRT_Buffer_Type shlo_pjrt_elem_to_pjrt(shlo_elem_type t) {
  switch (t) {
#define TO_PJRT(p, s) case SHLO_##s: return PJRT_Buffer_Type_##p;
    SHLO_PJRT_TYPES(TO_PJRT)
#undef TO_PJRT
  default: return PJRT_Buffer_Type_INVALID;
  }
}

PJRT_Buffer *shlo_pjrt_buffer_wrap(PJRT_Client *c, shlo_value *value) {
  PJRT_Buffer *b = calloc(1, sizeof *b);
  if (b == NULL) {
    shlo_value_release(value);
    return NULL;
  }
  b->client = c;
  b->value = value;
  b->type = shlo_pjrt_elem_to_pjrt(shlo_tensor_elem(value));
  b->rank = shlo_tensor_rank(value);
  memcpy(b->dims, shlo_tensor_dims(value), sizeof(int64_t) * b->rank);
  for (int i = 0; i < b->rank; i++) b->minor_to_major[i] = b->rank - 1 - i;
  return b;
}

/* Whether a layout (NULL: none given) is the engine's dense row-major. */
static bool layout_is_dense(const PJRT_Buffer_MemoryLayout *l, int rank,
                            const int64_t *dims, size_t elem_size) {
  if (l == NULL) return true;
  if (l->type == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    const PJRT_Buffer_MemoryLayout_Tiled *t = &l->tiled;
    if (t->num_tiles != 0 || t->minor_to_major_size != (size_t)rank ||
        (rank > 0 && t->minor_to_major == NULL))
      return false;
    for (int i = 0; i < rank; i++)
      if (t->minor_to_major[i] != rank - 1 - i) return false;
    return true;
  }
  if (l->type == PJRT_Buffer_MemoryLayout_Type_Strides) {
    if (l->strides.num_byte_strides != (size_t)rank ||
        (rank > 0 && l->strides.byte_strides == NULL))
      return false;
    int64_t want = (int64_t)elem_size;
    for (int i = rank - 1; i >= 0; i--) {
      if (dims[i] > 1 && l->strides.byte_strides[i] != want) return false;
      want *= dims[i];
    }
    return true;
  }
  return false;
}

/* Gather a host array with any byte strides into dense row-major dst. */
static void gather_strided(unsigned char *dst, const unsigned char *src,
                           int rank, const int64_t *dims,
                           const int64_t *strides, size_t esize) {
  int64_t idx[SHLO_MAX_RANK] = {0};
  int64_t total = 1;
  for (int i = 0; i < rank; i++) total *= dims[i];
  const unsigned char *p = src;
  for (int64_t n = 0; n < total; n++) {
    memcpy(dst + (size_t)n * esize, p, esize);
    for (int d = rank - 1; d >= 0; d--) { /* odometer: next index */
      p += strides[d];
      if (++idx[d] < dims[d]) break;
      p -= strides[d] * dims[d];
      idx[d] = 0;
    }
  }
}

/* The buffer, or an error naming the caller when it is NULL or deleted. */
static PJRT_Error *live_buffer(const PJRT_Buffer *b, const char *fn) {
  if (b == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: null buffer",
                           fn);
  if (b->value == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION,
                           "%s: the buffer has been deleted", fn);
  return NULL;
}

static PJRT_Error *check_host_shape(const PJRT_Client_BufferFromHostBuffer_Args *a,
                                    int *elem) {
  *elem = shlo_pjrt_elem_from_pjrt(a->type);
  if (*elem < 0)
    return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                           "shlo has no element type for PJRT buffer type %d",
                           (int)a->type);
  if (a->num_dims > SHLO_MAX_RANK || (a->num_dims > 0 && a->dims == NULL))
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "rank %zu: shlo takes at most %d dimensions",
                           a->num_dims, SHLO_MAX_RANK);
  for (size_t i = 0; i < a->num_dims; i++)
    if (a->dims[i] < 0)
      return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                             "dimension %zu is negative (%lld)", i,
                             (long long)a->dims[i]);
  if (a->num_byte_strides != 0 &&
      (a->num_byte_strides != a->num_dims || a->byte_strides == NULL))
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "%zu byte strides for %zu dimensions",
                           a->num_byte_strides, a->num_dims);
  if (a->memory != NULL && a->memory != &a->client->memory)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "memory is not this client's");
  if (a->device != NULL && a->device != &a->client->device)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "device is not this client's");
  if (!layout_is_dense(a->device_layout, (int)a->num_dims, a->dims,
                       shlo_elem_size(*elem)))
    return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                           "shlo buffers are dense row-major only");
  return NULL;
}

/* Every host-buffer semantics is served the same way: the data is copied
 * before the call returns, so the host buffer is free at once (the done
 * event is ready) and zero-copy requests simply get a copy. */
PJRT_Error *shlo_pjrt_Client_BufferFromHostBuffer(
    PJRT_Client_BufferFromHostBuffer_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_BufferFromHostBuffer_Args, buffer);
  if (args->client == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "null client");
  int elem;
  PJRT_Error *err = check_host_shape(args, &elem);
  if (err) return err;
  int rank = (int)args->num_dims;
  shlo_value *v = shlo_tensor_new((shlo_elem_type)elem, rank, args->dims);
  if (v == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                           "shlo: cannot allocate a buffer of that shape");
  size_t nbytes = shlo_tensor_nbytes(v);
  if (nbytes > 0 && args->data == NULL) {
    shlo_value_release(v);
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "null host data");
  }
  if (nbytes == 0) {
    /* nothing to copy */
  } else if (args->num_byte_strides == 0) {
    memcpy(shlo_tensor_data(v), args->data, nbytes);
  } else {
    gather_strided(shlo_tensor_data(v), args->data, rank, args->dims,
                   args->byte_strides, shlo_elem_size((shlo_elem_type)elem));
  }
  PJRT_Buffer *b = shlo_pjrt_buffer_wrap(args->client, v);
  PJRT_Event *done = b ? shlo_pjrt_event_new(NULL) : NULL;
  if (b == NULL || done == NULL) {
    if (b) shlo_value_release(b->value);
    free(b);
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                           "shlo: out of memory");
  }
  args->done_with_host_buffer = done;
  args->buffer = b;
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_ToHostBuffer(PJRT_Buffer_ToHostBuffer_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Buffer_ToHostBuffer_Args, event);
  PJRT_Error *err = live_buffer(args->src, __func__);
  if (err) return err;
  const PJRT_Buffer *b = args->src;
  size_t nbytes = shlo_tensor_nbytes(b->value);
  if (!layout_is_dense(args->host_layout, b->rank, b->dims,
                       shlo_elem_size(shlo_tensor_elem(b->value))))
    return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                           "shlo copies to dense row-major host layouts only");
  if (args->dst == NULL) { /* a size query */
    args->dst_size = nbytes;
    args->event = NULL;
    return NULL;
  }
  if (args->dst_size < nbytes)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "host buffer of %zu bytes, %zu needed",
                           args->dst_size, nbytes);
  if (nbytes) memcpy(args->dst, shlo_tensor_data_const(b->value), nbytes);
  args->event = shlo_pjrt_event_new(NULL);
  if (args->event == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                           "shlo: out of memory");
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_Destroy(PJRT_Buffer_Destroy_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Buffer_Destroy_Args, buffer);
  if (args->buffer) shlo_value_release(args->buffer->value);
  free(args->buffer);
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_Delete(PJRT_Buffer_Delete_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Buffer_Delete_Args, buffer);
  if (args->buffer == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "null buffer");
  shlo_value_release(args->buffer->value);
  args->buffer->value = NULL;
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_IsDeleted(PJRT_Buffer_IsDeleted_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Buffer_IsDeleted_Args, is_deleted);
  if (args->buffer == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "null buffer");
  args->is_deleted = args->buffer->value == NULL;
  return NULL;
}

/* Shape queries answer for deleted buffers too: the shape outlives the
 * data, as the framework expects. */
#define SHAPE_ARGS(T, last)                                               \
  SHLO_PJRT_ARGS_CHECK(args, T, last);                                    \
  PJRT_Buffer *b = args->buffer;                                          \
  if (b == NULL)                                                          \
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,              \
                           "%s: null buffer", __func__)

PJRT_Error *shlo_pjrt_Buffer_ElementType(PJRT_Buffer_ElementType_Args *args) {
  SHAPE_ARGS(PJRT_Buffer_ElementType_Args, type);
  args->type = b->type;
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_Dimensions(PJRT_Buffer_Dimensions_Args *args) {
  SHAPE_ARGS(PJRT_Buffer_Dimensions_Args, num_dims);
  args->dims = b->dims;
  args->num_dims = (size_t)b->rank;
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_UnpaddedDimensions(
    PJRT_Buffer_UnpaddedDimensions_Args *args) {
  SHAPE_ARGS(PJRT_Buffer_UnpaddedDimensions_Args, num_dims);
  args->unpadded_dims = b->dims;
  args->num_dims = (size_t)b->rank;
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_DynamicDimensionIndices(
    PJRT_Buffer_DynamicDimensionIndices_Args *args) {
  SHAPE_ARGS(PJRT_Buffer_DynamicDimensionIndices_Args, num_dynamic_dims);
  args->dynamic_dim_indices = NULL;
  args->num_dynamic_dims = 0;
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_GetMemoryLayout(
    PJRT_Buffer_GetMemoryLayout_Args *args) {
  SHAPE_ARGS(PJRT_Buffer_GetMemoryLayout_Args, layout);
  PJRT_Buffer_MemoryLayout *l = &args->layout;
  memset(l, 0, sizeof *l);
  l->struct_size = SHLO_PJRT_END(PJRT_Buffer_MemoryLayout, type);
  l->type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  l->tiled.struct_size = SHLO_PJRT_END(PJRT_Buffer_MemoryLayout_Tiled, num_tiles);
  l->tiled.minor_to_major = b->minor_to_major;
  l->tiled.minor_to_major_size = (size_t)b->rank;
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_OnDeviceSizeInBytes(
    PJRT_Buffer_OnDeviceSizeInBytes_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Buffer_OnDeviceSizeInBytes_Args,
                       on_device_size_in_bytes);
  PJRT_Error *err = live_buffer(args->buffer, __func__);
  if (err) return err;
  args->on_device_size_in_bytes = shlo_tensor_nbytes(args->buffer->value);
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_Device(PJRT_Buffer_Device_Args *args) {
  SHAPE_ARGS(PJRT_Buffer_Device_Args, device);
  args->device = &b->client->device;
  return NULL;
}

PJRT_Error *shlo_pjrt_Buffer_Memory(PJRT_Buffer_Memory_Args *args) {
  SHAPE_ARGS(PJRT_Buffer_Memory_Args, memory);
  args->memory = &b->client->memory;
  return NULL;
}

/* Not "on CPU" for the framework's purposes: that would invite it to
 * borrow the tensor's memory through the external-reference entries,
 * which shlo does not offer; transfers go through ToHostBuffer. */
PJRT_Error *shlo_pjrt_Buffer_IsOnCpu(PJRT_Buffer_IsOnCpu_Args *args) {
  SHAPE_ARGS(PJRT_Buffer_IsOnCpu_Args, is_on_cpu);
  args->is_on_cpu = false;
  return NULL;
}

/* Data is ready when the buffer exists; a deleted buffer's event carries
 * the error. */
PJRT_Error *shlo_pjrt_Buffer_ReadyEvent(PJRT_Buffer_ReadyEvent_Args *args) {
  SHAPE_ARGS(PJRT_Buffer_ReadyEvent_Args, event);
  PJRT_Error *err = live_buffer(b, __func__);
  args->event = shlo_pjrt_event_new(err);
  if (err) shlo_pjrt_Error_Destroy(&(PJRT_Error_Destroy_Args){
      .struct_size = sizeof(PJRT_Error_Destroy_Args), .error = err});
  if (args->event == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                           "shlo: out of memory");
  return NULL;
}
