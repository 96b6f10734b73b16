/* SPDX-License-Identifier: Apache-2.0 */
/* The binary protocol of PROTOCOL.md part 2: frame header, message
 * structs, value headers, the dtype code table, and small helpers both
 * ends use to build and check frames.  Structs are the wire layout
 * (little-endian hosts only, checked at compile time); their sizes are
 * pinned by _Static_assert.  No sockets, no allocation except where a
 * function says malloc'd. */
#ifndef SHLO_BINPROTO_H
#define SHLO_BINPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shlo/protocol.h"
#include "shlo/tensor.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the binary protocol codec assumes a little-endian host"
#endif

#define SHLO_BIN_MAGIC 0x424C4853u /* "SHLB" read as a little-endian u32 */
#define SHLO_BIN_VERSION_MIN 1
#define SHLO_BIN_VERSION_MAX 2 /* 2: streaming executions (types 13..20) */
#define SHLO_BIN_VERSION_STREAMS 2
#define SHLO_BIN_MAX_PING 4096

/* X(ENUM, value, name) -- message types. */
#define SHLO_BIN_TYPES(X) \
  X(HELLO, 1, "hello")     \
  X(WELCOME, 2, "welcome") \
  X(COMPILE, 3, "compile") \
  X(MODULE, 4, "module")   \
  X(EXECUTE, 5, "execute") \
  X(RESULT, 6, "result")   \
  X(ERROR, 7, "error")     \
  X(CANCEL, 8, "cancel")   \
  X(PING, 9, "ping")       \
  X(PONG, 10, "pong")      \
  X(GOODBYE, 11, "goodbye") \
  X(OUTPUT, 12, "output")   \
  X(STARTED, 13, "started") \
  X(INFEED, 14, "infeed")   \
  X(QUEUED, 15, "queued")   \
  X(SUBSCRIBE, 16, "subscribe") \
  X(OUTFEED, 17, "outfeed") \
  X(STATE, 18, "state")     \
  X(WAIT, 19, "wait")       \
  X(STOP, 20, "stop")

typedef enum {
#define SHLO_BIN_TYPE_ENUM(e, v, s) SHLO_BIN_##e = v,
  SHLO_BIN_TYPES(SHLO_BIN_TYPE_ENUM)
#undef SHLO_BIN_TYPE_ENUM
  SHLO_BIN_TYPE_END
} shlo_bin_type;

const char *shlo_bin_type_name(int type); /* "execute"; "?" if unknown */

typedef struct shlo_bin_header {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  uint32_t flags;    /* reserved */
  uint32_t reserved;
  uint64_t id;
  uint64_t length;   /* payload bytes, a multiple of 8 */
} shlo_bin_header;
_Static_assert(sizeof(shlo_bin_header) == 32, "frame header is 32 bytes");

typedef struct shlo_bin_hello {
  uint16_t min_version, max_version;
  uint32_t token_length;
  uint64_t reserved;
} shlo_bin_hello;
_Static_assert(sizeof(shlo_bin_hello) == 16, "HELLO is 16 bytes");

typedef struct shlo_bin_welcome {
  uint16_t version, reserved0;
  uint32_t reserved1;
  uint64_t max_payload;
  uint64_t max_tensor_bytes;
  uint64_t reserved2;
} shlo_bin_welcome;
_Static_assert(sizeof(shlo_bin_welcome) == 32, "WELCOME is 32 bytes");

typedef struct shlo_bin_compile {
  uint32_t replicas, partitions;
  uint32_t entry_length, reserved;
  uint64_t program_length;
} shlo_bin_compile;
_Static_assert(sizeof(shlo_bin_compile) == 24, "COMPILE is 24 bytes");

#define SHLO_BIN_MODULE_CACHED 1u
typedef struct shlo_bin_module {
  uint8_t id[32];
  uint32_t flags;
  uint32_t replicas, partitions;
  uint32_t entry_length, signature_length;
  uint32_t reserved;
} shlo_bin_module;
_Static_assert(sizeof(shlo_bin_module) == 56, "MODULE is 56 bytes");

#define SHLO_BIN_EXEC_INLINE 1u
#define SHLO_BIN_EXEC_PRINT 2u /* send what interpreter.print wrote (OUTPUT) */
#define SHLO_BIN_EXEC_ASYNC 4u /* version 2: answer STARTED at once */
/* request_id_length is the length of a request id (1..128 bytes of
 * [A-Za-z0-9._:/+=@-]) that follows the program, padded; the RESULT
 * carries the identity block (PROTOCOL.md "Request identity") */
#define SHLO_BIN_EXEC_REQUEST_ID 8u
/* trace this execution; the RESULT's identity block names the trace */
#define SHLO_BIN_EXEC_TRACE 16u
typedef struct shlo_bin_execute {
  uint8_t id[32];
  uint32_t flags;
  uint32_t entry_length;
  uint64_t program_length;
  uint32_t replicas, partitions;
  uint64_t timeout_us;
  uint32_t n_inputs;
  uint32_t request_id_length; /* 0 unless SHLO_BIN_EXEC_REQUEST_ID */
} shlo_bin_execute;
_Static_assert(sizeof(shlo_bin_execute) == 72, "EXECUTE is 72 bytes");

#define SHLO_BIN_RESULT_CACHED 1u
/* the 64 bytes are followed by a shlo_bin_identity and its strings */
#define SHLO_BIN_RESULT_IDENTITY 2u
/* The identity of an EXECUTE that set SHLO_BIN_EXEC_REQUEST_ID or
 * SHLO_BIN_EXEC_TRACE: its request id (the client's, else the server's)
 * and the id of its trace (0: not traced), each string padded to 8. */
typedef struct shlo_bin_identity {
  uint32_t request_id_length, trace_id_length;
  uint64_t reserved;
} shlo_bin_identity;
_Static_assert(sizeof(shlo_bin_identity) == 16, "identity is 16 bytes");
typedef struct shlo_bin_result {
  uint8_t id[32];
  uint32_t flags;
  uint32_t n_procs, n_outputs;
  uint32_t reserved;
  double compile_ms, execute_ms;
} shlo_bin_result;
_Static_assert(sizeof(shlo_bin_result) == 64, "RESULT is 64 bytes");

typedef struct shlo_bin_error {
  uint32_t kind, status, line, column;
  int32_t engine_status;
  uint32_t message_length;
} shlo_bin_error;
_Static_assert(sizeof(shlo_bin_error) == 24, "ERROR is 24 bytes");

/* OUTPUT: what an execution's interpreter.print ops wrote, sent before
 * its RESULT or ERROR when the EXECUTE set SHLO_BIN_EXEC_PRINT. */
#define SHLO_BIN_OUTPUT_TRUNCATED 1u
typedef struct shlo_bin_output {
  uint64_t length; /* text bytes that follow (then padding) */
  uint32_t flags;  /* SHLO_BIN_OUTPUT_TRUNCATED: the server kept a prefix */
  uint32_t reserved;
} shlo_bin_output;
_Static_assert(sizeof(shlo_bin_output) == 16, "OUTPUT is 16 bytes");

/* ---- streaming executions (version 2, PROTOCOL.md "Streaming") ---- */

#define SHLO_BIN_EXEC_ID_LEN 24 /* "ex-" + 16 hex digits, NUL padded */

/* The execution states, numbered as on the wire. */
enum { SHLO_BIN_X_QUEUED = 0, SHLO_BIN_X_RUNNING = 1,
       SHLO_BIN_X_SUCCEEDED = 2, SHLO_BIN_X_FAILED = 3,
       SHLO_BIN_X_CANCELED = 4 };

/* STARTED: the answer to an EXECUTE with SHLO_BIN_EXEC_ASYNC. */
typedef struct shlo_bin_started {
  char exec_id[SHLO_BIN_EXEC_ID_LEN];
  uint32_t state, reserved;
} shlo_bin_started;
_Static_assert(sizeof(shlo_bin_started) == 32, "STARTED is 32 bytes");

/* Which queue of an execution: INFEED (then one value), SUBSCRIBE. */
#define SHLO_BIN_STREAM_CHANNEL 1u /* the host channel `channel` */
#define SHLO_BIN_STREAM_CLOSE 2u   /* INFEED: close the queue afterwards */
#define SHLO_BIN_STREAM_ALL 0xFFFFFFFFu /* SUBSCRIBE: every process */
typedef struct shlo_bin_stream {
  char exec_id[SHLO_BIN_EXEC_ID_LEN];
  uint32_t flags;
  uint32_t replica, partition;
  uint32_t reserved;
  int64_t channel;
} shlo_bin_stream;
_Static_assert(sizeof(shlo_bin_stream) == 48, "INFEED/SUBSCRIBE are 48 bytes");

/* OUTFEED: one value of a subscription (then the value). */
typedef struct shlo_bin_outfeed {
  uint32_t replica, partition; /* SHLO_BIN_STREAM_ALL for a channel */
  uint64_t sequence;           /* 0, 1, ... within the subscription */
} shlo_bin_outfeed;
_Static_assert(sizeof(shlo_bin_outfeed) == 16, "OUTFEED is 16 bytes");

/* WAIT and STOP name an execution. */
#define SHLO_BIN_WAIT_END 1u /* WAIT: answer once the execution ended */
typedef struct shlo_bin_exec_ref {
  char exec_id[SHLO_BIN_EXEC_ID_LEN];
  uint32_t flags, reserved;
} shlo_bin_exec_ref;
_Static_assert(sizeof(shlo_bin_exec_ref) == 32, "WAIT/STOP are 32 bytes");

/* STATE: an execution's state (then its JSON state object). */
typedef struct shlo_bin_state {
  char exec_id[SHLO_BIN_EXEC_ID_LEN];
  uint32_t state;  /* SHLO_BIN_X_QUEUED.. */
  uint32_t status; /* once ended: the HTTP status /execute would answer */
  uint64_t bytes_in, bytes_out;
  uint64_t json_length;
} shlo_bin_state;
_Static_assert(sizeof(shlo_bin_state) == 56, "STATE is 56 bytes");

enum { SHLO_BIN_TENSOR = 0, SHLO_BIN_TUPLE = 1, SHLO_BIN_TOKEN = 2 };
typedef struct shlo_bin_value {
  uint16_t dtype; /* wire code, 0 for tuple and token */
  uint8_t rank;
  uint8_t kind;
  uint32_t reserved;
  uint64_t length; /* data bytes (tensor), elements (tuple), 0 (token) */
  /* followed by rank u64 dimensions */
} shlo_bin_value;
_Static_assert(sizeof(shlo_bin_value) == 16, "value header is 16 bytes");

/* Bytes up to the next multiple of 8 (n itself when it is one). */
static inline uint64_t shlo_bin_pad8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

/* Wire dtype code <-> element type: -1 / 0 when there is none. */
int shlo_bin_dtype_to_elem(unsigned code);
unsigned shlo_bin_elem_to_dtype(int elem);

/* Fill a header for a frame of the given type, id and payload length. */
void shlo_bin_header_init(shlo_bin_header *h, int version, int type,
                          uint64_t id, uint64_t length);
/* Check a received header: magic, version (want; 0 = any supported),
 * known type, reserved fields, length a multiple of 8 and <= max_payload.
 * On failure fills err (kind input, or limit for the size) and returns -1. */
int shlo_bin_header_check(const shlo_bin_header *h, int want_version,
                          uint64_t max_payload, shlo_proto_error *err);

/* Check a value header read from a peer (reserved zero, known kind and
 * dtype, rank <= 16, dims given separately with product and byte length
 * consistent, limits).  For a tensor, *elem receives the element type.
 * Errors name `path`. */
int shlo_bin_value_check(const shlo_bin_value *h, const uint64_t *dims,
                         const shlo_proto_limits *lim, const char *path,
                         int *elem, shlo_proto_error *err);

/* Bytes a value takes on the wire (headers, dims, data, padding; tuples
 * recursively). */
uint64_t shlo_bin_value_size(const shlo_value *v);
/* Write a value's header and dims at out (at most 16 + 8 * 16 bytes);
 * returns the bytes written.  Its data (v->nbytes, then padding to 8)
 * follows on the wire; for tuples, the elements follow. */
size_t shlo_bin_value_head(const shlo_value *v, void *out);
/* Serialize a value entirely into out (shlo_bin_value_size bytes). */
size_t shlo_bin_value_write(const shlo_value *v, void *out);
/* Parse one value from buf (at most len bytes) into a new owned value;
 * *used = bytes consumed.  Errors are input or limit. */
int shlo_bin_value_read(const void *buf, uint64_t len,
                        const shlo_proto_limits *lim, const char *path,
                        shlo_value **out, uint64_t *used,
                        shlo_proto_error *err);

/* A whole ERROR frame (header + payload) for request id: malloc'd, its
 * length in *len; NULL on OOM. */
void *shlo_bin_error_frame(int version, uint64_t id,
                           const shlo_proto_error *e, int engine_status,
                           size_t *len);
/* Decode an ERROR payload; -1 when malformed. */
int shlo_bin_error_parse(const void *payload, uint64_t len,
                         shlo_proto_error *e, int *engine_status);

#endif
