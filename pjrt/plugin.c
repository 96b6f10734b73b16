/* SPDX-License-Identifier: Apache-2.0 */
/* libshlo_pjrt.so's front: GetPjrtApi and its function table, errors,
 * events, and the plugin's own entries.
 *
 * Every slot of the table holds a function: the entries shlo implements
 * (SHLO_PJRT_IMPLEMENTED below), and for every other slot a stub that
 * returns the error "not implemented by shlo: PJRT_<name>" with code
 * UNIMPLEMENTED, so a framework that calls one gets a message, never a
 * jump through NULL. */
#define _GNU_SOURCE /* vasprintf */
#include "pjrt_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shlo/artifact.h"
#include "shlo/version.h"

/* ---------------------------------------------------------------- errors */

/* Handed out when an error cannot be allocated; never freed. */
static PJRT_Error oom_error = {PJRT_Error_Code_RESOURCE_EXHAUSTED,
                               (char *)"shlo pjrt: out of memory", 24};

static PJRT_Error *error_vnew(PJRT_Error_Code code, const char *fmt,
                              va_list ap) {
  PJRT_Error *e = malloc(sizeof *e);
  char *text = NULL;
  if (e == NULL || vasprintf(&text, fmt, ap) < 0) {
    free(e);
    return &oom_error;
  }
  e->code = code;
  e->message = text;
  e->message_size = strlen(text);
  return e;
}

PJRT_Error *shlo_pjrt_error(PJRT_Error_Code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PJRT_Error *e = error_vnew(code, fmt, ap);
  va_end(ap);
  return e;
}

static PJRT_Error_Code code_of_status(shlo_status s) {
  switch (s) {
  case SHLO_ENOMEM: return PJRT_Error_Code_RESOURCE_EXHAUSTED;
  case SHLO_EPARSE:
  case SHLO_EVERIFY:
  case SHLO_EINPUT: return PJRT_Error_Code_INVALID_ARGUMENT;
  case SHLO_EUNSUPPORTED: return PJRT_Error_Code_UNIMPLEMENTED;
  case SHLO_ETIMEOUT: return PJRT_Error_Code_DEADLINE_EXCEEDED;
  case SHLO_ECANCELED: return PJRT_Error_Code_CANCELLED;
  case SHLO_ELIMIT: return PJRT_Error_Code_RESOURCE_EXHAUSTED;
  case SHLO_ECHECK: return PJRT_Error_Code_FAILED_PRECONDITION;
  default: return PJRT_Error_Code_INTERNAL;
  }
}

PJRT_Error *shlo_pjrt_error_from_diag(const char *what, const shlo_diag *d) {
  char text[SHLO_DIAG_MAX + 64];
  shlo_diag_format(d, text, sizeof text);
  return shlo_pjrt_error(code_of_status(d->code), "shlo %s: %s", what, text);
}

void shlo_pjrt_Error_Destroy(PJRT_Error_Destroy_Args *args) {
  if (args == NULL || args->error == NULL || args->error == &oom_error)
    return;
  free(args->error->message);
  free(args->error);
}

void shlo_pjrt_Error_Message(PJRT_Error_Message_Args *args) {
  if (args == NULL ||
      args->struct_size < SHLO_PJRT_END(PJRT_Error_Message_Args, message_size))
    return; /* nowhere to say anything */
  const PJRT_Error *e = args->error;
  args->message = e ? e->message : "";
  args->message_size = e ? e->message_size : 0;
}

PJRT_Error *shlo_pjrt_Error_GetCode(PJRT_Error_GetCode_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Error_GetCode_Args, code);
  args->code = args->error ? args->error->code : PJRT_Error_Code_UNKNOWN;
  return NULL;
}

/* ---------------------------------------------------------------- events */

PJRT_Event *shlo_pjrt_event_new(const PJRT_Error *err) {
  PJRT_Event *ev = calloc(1, sizeof *ev);
  if (ev == NULL) return NULL;
  if (err != NULL) {
    ev->code = err->code;
    ev->message = strdup(err->message);
  }
  return ev;
}

/* The event's outcome as a new error (NULL: success). */
static PJRT_Error *event_outcome(const PJRT_Event *ev) {
  if (ev == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "null event");
  if (ev->code == 0) return NULL;
  return shlo_pjrt_error(ev->code, "%s",
                         ev->message ? ev->message : "event failed");
}

PJRT_Error *shlo_pjrt_Event_Destroy(PJRT_Event_Destroy_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Event_Destroy_Args, event);
  if (args->event) free(args->event->message);
  free(args->event);
  return NULL;
}

PJRT_Error *shlo_pjrt_Event_IsReady(PJRT_Event_IsReady_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Event_IsReady_Args, is_ready);
  args->is_ready = true;
  return NULL;
}

PJRT_Error *shlo_pjrt_Event_Error(PJRT_Event_Error_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Event_Error_Args, event);
  return event_outcome(args->event);
}

PJRT_Error *shlo_pjrt_Event_Await(PJRT_Event_Await_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Event_Await_Args, event);
  return event_outcome(args->event);
}

/* Ready already: the callback runs now, on the caller's thread, and owns
 * the error it is given (as the API says). */
PJRT_Error *shlo_pjrt_Event_OnReady(PJRT_Event_OnReady_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Event_OnReady_Args, user_arg);
  if (args->callback == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "PJRT_Event_OnReady: null callback");
  args->callback(event_outcome(args->event), args->user_arg);
  return NULL;
}

/* ---------------------------------------------------------------- plugin */

PJRT_Error *shlo_pjrt_Plugin_Initialize(PJRT_Plugin_Initialize_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Plugin_Initialize_Args, extension_start);
  return NULL;
}

/* The StableHLO versions this build reads: JAX serializes the program it
 * compiles as a portable artifact for min(its version, ours). */
static int64_t stablehlo_current[3], stablehlo_minimum[3] = {0, 9, 0};
static PJRT_NamedValue plugin_attributes[3];

static void version_triple(const char *text, int64_t out[3]) {
  long a = 0, b = 0, c = 0;
  if (sscanf(text, "%ld.%ld.%ld", &a, &b, &c) == 3) {
    out[0] = a;
    out[1] = b;
    out[2] = c;
  }
}

static void named_list(PJRT_NamedValue *v, const char *name,
                       const int64_t *values, size_t n) {
  v->struct_size = SHLO_PJRT_END(PJRT_NamedValue, value_size);
  v->name = name;
  v->name_size = strlen(name);
  v->type = PJRT_NamedValue_kInt64List;
  v->int64_array_value = values;
  v->value_size = n;
}

static void plugin_attributes_init(void) {
  version_triple(SHLO_ARTIFACT_MAX_VERSION, stablehlo_current);
  named_list(&plugin_attributes[0], "stablehlo_current_version",
             stablehlo_current, 3);
  named_list(&plugin_attributes[1], "stablehlo_minimum_version",
             stablehlo_minimum, 3);
  PJRT_NamedValue *v = &plugin_attributes[2];
  v->struct_size = SHLO_PJRT_END(PJRT_NamedValue, value_size);
  v->name = "shlo_version";
  v->name_size = strlen(v->name);
  v->type = PJRT_NamedValue_kString;
  v->string_value = SHLO_VERSION_STRING;
  v->value_size = strlen(SHLO_VERSION_STRING);
}

/* XLA's header has given this struct's size as ending at `attributes`
 * (so in 0.33), though num_attributes follows it in every version: that
 * shorter size is what is required, and num_attributes is written because
 * every caller's struct has the field. */
PJRT_Error *shlo_pjrt_Plugin_Attributes(PJRT_Plugin_Attributes_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Plugin_Attributes_Args, attributes);
  args->attributes = plugin_attributes;
  args->num_attributes = sizeof plugin_attributes / sizeof plugin_attributes[0];
  return NULL;
}

/* ----------------------------------------------------------------- table */

/* A stub per slot, naming it. */
#define SHLO_PJRT_STUB(idx, name)                                     \
  static PJRT_Error *stub_##name(PJRT_##name##_Args *args) {          \
    (void)args;                                                       \
    return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,             \
                           "not implemented by shlo: PJRT_" #name);   \
  }
#define SHLO_PJRT_NO_STUB(idx, name)
SHLO_PJRT_SLOTS(SHLO_PJRT_STUB, SHLO_PJRT_NO_STUB)

/* The entries shlo implements (docs/pjrt.md lists them too). */
#define SHLO_PJRT_IMPLEMENTED(X)                                          \
  X(Error_Destroy) X(Error_Message) X(Error_GetCode)                      \
  X(Plugin_Initialize) X(Plugin_Attributes)                               \
  X(Event_Destroy) X(Event_IsReady) X(Event_Error) X(Event_Await)         \
  X(Event_OnReady)                                                        \
  X(Client_Create) X(Client_Destroy) X(Client_PlatformName)               \
  X(Client_ProcessIndex) X(Client_PlatformVersion) X(Client_Devices)      \
  X(Client_AddressableDevices) X(Client_LookupDevice)                     \
  X(Client_LookupAddressableDevice) X(Client_AddressableMemories)         \
  X(Client_Compile) X(Client_DefaultDeviceAssignment)                     \
  X(Client_BufferFromHostBuffer)                                          \
  X(DeviceDescription_Id) X(DeviceDescription_ProcessIndex)               \
  X(DeviceDescription_Attributes) X(DeviceDescription_Kind)               \
  X(DeviceDescription_DebugString) X(DeviceDescription_ToString)          \
  X(Device_GetDescription) X(Device_IsAddressable)                        \
  X(Device_LocalHardwareId) X(Device_AddressableMemories)                 \
  X(Device_DefaultMemory)                                                 \
  X(Memory_Id) X(Memory_Kind) X(Memory_DebugString) X(Memory_ToString)    \
  X(Memory_AddressableByDevices) X(Memory_Kind_Id)                        \
  X(Executable_Destroy) X(Executable_Name) X(Executable_NumReplicas)      \
  X(Executable_NumPartitions) X(Executable_NumOutputs)                    \
  X(Executable_SizeOfGeneratedCodeInBytes) X(Executable_OutputMemoryKinds) \
  X(Executable_OutputElementTypes) X(Executable_OutputDimensions)         \
  X(Executable_Fingerprint) X(Executable_Serialize)                       \
  X(Executable_DeserializeAndLoad)                                        \
  X(LoadedExecutable_Destroy) X(LoadedExecutable_GetExecutable)           \
  X(LoadedExecutable_AddressableDevices) X(LoadedExecutable_Delete)       \
  X(LoadedExecutable_IsDeleted) X(LoadedExecutable_Execute)               \
  X(LoadedExecutable_Fingerprint)                                         \
  X(Buffer_Destroy) X(Buffer_ElementType) X(Buffer_Dimensions)            \
  X(Buffer_UnpaddedDimensions) X(Buffer_DynamicDimensionIndices)          \
  X(Buffer_GetMemoryLayout) X(Buffer_OnDeviceSizeInBytes)                 \
  X(Buffer_Device) X(Buffer_Memory) X(Buffer_Delete) X(Buffer_IsDeleted)  \
  X(Buffer_ToHostBuffer) X(Buffer_IsOnCpu) X(Buffer_ReadyEvent)

static PJRT_Api api;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static void api_init(void) {
  api.struct_size = SHLO_PJRT_END(PJRT_Api,
                                  PJRT_Client_CreateBuffersForAsyncHostToDevice);
  api.extension_start = NULL;
  api.pjrt_api_version.struct_size =
      SHLO_PJRT_END(PJRT_Api_Version, minor_version);
  api.pjrt_api_version.major_version = SHLO_PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = SHLO_PJRT_API_MINOR;
#define SHLO_PJRT_SET_STUB(idx, name) api.PJRT_##name = stub_##name;
  SHLO_PJRT_SLOTS(SHLO_PJRT_SET_STUB, SHLO_PJRT_NO_STUB)
#define SHLO_PJRT_SET_IMPL(name) api.PJRT_##name = shlo_pjrt_##name;
  SHLO_PJRT_IMPLEMENTED(SHLO_PJRT_SET_IMPL)
  plugin_attributes_init();
}

__attribute__((visibility("default"))) const PJRT_Api *GetPjrtApi(void) {
  pthread_once(&api_once, api_init);
  return &api;
}
