/* SPDX-License-Identifier: Apache-2.0 */
/* The client, its one device and that device's one memory.
 *
 * One device: the engine already spreads each op over its whole thread
 * pool, so a second device would only split the same cores between two
 * programs; and a jitted JAX function runs on one device unless it is
 * sharded, which the engine's grids would have to serve (not yet). */
#include "pjrt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shlo/version.h"

static const char device_kind[] = "shlo-cpu";
static const char memory_kind[] = "device";

static void device_init(PJRT_Client *c) {
  PJRT_Device *d = &c->device;
  d->client = c;
  d->desc.id = 0;
  d->desc.kind = device_kind;
  snprintf(d->desc.to_string, sizeof d->desc.to_string, "ShloDevice(id=0)");
  snprintf(d->desc.debug_string, sizeof d->desc.debug_string,
           "shlo device 0: the engine's thread pool (%s)", shlo_kernels_info());
  c->memory.id = 0;
  c->memory.device = d;
  snprintf(c->memory.to_string, sizeof c->memory.to_string,
           "ShloMemory(id=0, kind=%s)", memory_kind);
  d->memories[0] = &c->memory;
  c->devices[0] = d;
  c->memories[0] = &c->memory;
}

PJRT_Error *shlo_pjrt_Client_Create(PJRT_Client_Create_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_Create_Args, client);
  PJRT_Client *c = calloc(1, sizeof *c);
  if (c == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                           "shlo: out of memory creating a client");
  device_init(c);
  PJRT_Error *err = shlo_pjrt_remote_connect(c, args);
  if (err) {
    free(c);
    return err;
  }
  snprintf(c->platform_version, sizeof c->platform_version,
           "shlo %s (PJRT C API %d.%d)%s%s", SHLO_VERSION_STRING,
           SHLO_PJRT_API_MAJOR, SHLO_PJRT_API_MINOR,
           c->remote ? ", remote " : "", c->remote ? c->server_url : "");
  if (c->remote)
    snprintf(c->device.desc.debug_string, sizeof c->device.desc.debug_string,
             "shlo device 0: the engine of the server %s", c->server_url);
  args->client = c;
  return NULL;
}

/* Buffers and executables hold a pointer to their client: the framework
 * destroys them before it destroys the client. */
PJRT_Error *shlo_pjrt_Client_Destroy(PJRT_Client_Destroy_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_Destroy_Args, client);
  if (args->client) shlo_pjrt_remote_close(args->client);
  free(args->client);
  return NULL;
}

#define NEED_CLIENT(args)                                                 \
  do {                                                                    \
    if ((args)->client == NULL)                                           \
      return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,            \
                             "%s: null client", __func__);                \
  } while (0)

PJRT_Error *shlo_pjrt_Client_PlatformName(PJRT_Client_PlatformName_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_PlatformName_Args, platform_name_size);
  args->platform_name = "shlo";
  args->platform_name_size = 4;
  return NULL;
}

PJRT_Error *shlo_pjrt_Client_ProcessIndex(PJRT_Client_ProcessIndex_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_ProcessIndex_Args, process_index);
  args->process_index = 0;
  return NULL;
}

PJRT_Error *shlo_pjrt_Client_PlatformVersion(
    PJRT_Client_PlatformVersion_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_PlatformVersion_Args,
                       platform_version_size);
  NEED_CLIENT(args);
  args->platform_version = args->client->platform_version;
  args->platform_version_size = strlen(args->client->platform_version);
  return NULL;
}

PJRT_Error *shlo_pjrt_Client_Devices(PJRT_Client_Devices_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_Devices_Args, num_devices);
  NEED_CLIENT(args);
  args->devices = args->client->devices;
  args->num_devices = 1;
  return NULL;
}

PJRT_Error *shlo_pjrt_Client_AddressableDevices(
    PJRT_Client_AddressableDevices_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_AddressableDevices_Args,
                       num_addressable_devices);
  NEED_CLIENT(args);
  args->addressable_devices = args->client->devices;
  args->num_addressable_devices = 1;
  return NULL;
}

PJRT_Error *shlo_pjrt_Client_LookupDevice(PJRT_Client_LookupDevice_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_LookupDevice_Args, device);
  NEED_CLIENT(args);
  if (args->id != 0)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "shlo has no device with id %d (only 0)", args->id);
  args->device = &args->client->device;
  return NULL;
}

PJRT_Error *shlo_pjrt_Client_LookupAddressableDevice(
    PJRT_Client_LookupAddressableDevice_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_LookupAddressableDevice_Args,
                       addressable_device);
  NEED_CLIENT(args);
  if (args->local_hardware_id != 0)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "shlo has no device with local hardware id %d",
                           args->local_hardware_id);
  args->addressable_device = &args->client->device;
  return NULL;
}

PJRT_Error *shlo_pjrt_Client_AddressableMemories(
    PJRT_Client_AddressableMemories_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_AddressableMemories_Args,
                       num_addressable_memories);
  NEED_CLIENT(args);
  args->addressable_memories = args->client->memories;
  args->num_addressable_memories = 1;
  return NULL;
}

/* One device: every replica and partition of a 1x1 assignment is it. */
PJRT_Error *shlo_pjrt_Client_DefaultDeviceAssignment(
    PJRT_Client_DefaultDeviceAssignment_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_DefaultDeviceAssignment_Args,
                       default_assignment);
  if (args->num_replicas != 1 || args->num_partitions != 1)
    return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                           "shlo has one device: cannot assign %d replicas x "
                           "%d partitions", args->num_replicas,
                           args->num_partitions);
  if (args->default_assignment_size < 1 || args->default_assignment == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "default assignment array too small");
  args->default_assignment[0] = 0;
  return NULL;
}

/* ------------------------------------------------- device descriptions */

#define DESC_ARGS(T, last)                                                \
  SHLO_PJRT_ARGS_CHECK(args, T, last);                                    \
  const PJRT_DeviceDescription *dd = args->device_description;            \
  if (dd == NULL)                                                         \
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,              \
                           "%s: null device description", __func__)

PJRT_Error *shlo_pjrt_DeviceDescription_Id(
    PJRT_DeviceDescription_Id_Args *args) {
  DESC_ARGS(PJRT_DeviceDescription_Id_Args, id);
  args->id = dd->id;
  return NULL;
}

PJRT_Error *shlo_pjrt_DeviceDescription_ProcessIndex(
    PJRT_DeviceDescription_ProcessIndex_Args *args) {
  DESC_ARGS(PJRT_DeviceDescription_ProcessIndex_Args, process_index);
  args->process_index = 0;
  return NULL;
}

PJRT_Error *shlo_pjrt_DeviceDescription_Attributes(
    PJRT_DeviceDescription_Attributes_Args *args) {
  DESC_ARGS(PJRT_DeviceDescription_Attributes_Args, attributes);
  args->num_attributes = 0;
  args->attributes = NULL;
  return NULL;
}

PJRT_Error *shlo_pjrt_DeviceDescription_Kind(
    PJRT_DeviceDescription_Kind_Args *args) {
  DESC_ARGS(PJRT_DeviceDescription_Kind_Args, device_kind_size);
  args->device_kind = dd->kind;
  args->device_kind_size = strlen(dd->kind);
  return NULL;
}

PJRT_Error *shlo_pjrt_DeviceDescription_DebugString(
    PJRT_DeviceDescription_DebugString_Args *args) {
  DESC_ARGS(PJRT_DeviceDescription_DebugString_Args, debug_string_size);
  args->debug_string = dd->debug_string;
  args->debug_string_size = strlen(dd->debug_string);
  return NULL;
}

PJRT_Error *shlo_pjrt_DeviceDescription_ToString(
    PJRT_DeviceDescription_ToString_Args *args) {
  DESC_ARGS(PJRT_DeviceDescription_ToString_Args, to_string_size);
  args->to_string = dd->to_string;
  args->to_string_size = strlen(dd->to_string);
  return NULL;
}

/* --------------------------------------------------------------- devices */

#define DEVICE_ARGS(T, last)                                              \
  SHLO_PJRT_ARGS_CHECK(args, T, last);                                    \
  PJRT_Device *dev = args->device;                                        \
  if (dev == NULL)                                                        \
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,              \
                           "%s: null device", __func__)

PJRT_Error *shlo_pjrt_Device_GetDescription(
    PJRT_Device_GetDescription_Args *args) {
  DEVICE_ARGS(PJRT_Device_GetDescription_Args, device_description);
  args->device_description = &dev->desc;
  return NULL;
}

PJRT_Error *shlo_pjrt_Device_IsAddressable(
    PJRT_Device_IsAddressable_Args *args) {
  DEVICE_ARGS(PJRT_Device_IsAddressable_Args, is_addressable);
  args->is_addressable = true;
  return NULL;
}

PJRT_Error *shlo_pjrt_Device_LocalHardwareId(
    PJRT_Device_LocalHardwareId_Args *args) {
  DEVICE_ARGS(PJRT_Device_LocalHardwareId_Args, local_hardware_id);
  args->local_hardware_id = dev->desc.id;
  return NULL;
}

PJRT_Error *shlo_pjrt_Device_AddressableMemories(
    PJRT_Device_AddressableMemories_Args *args) {
  DEVICE_ARGS(PJRT_Device_AddressableMemories_Args, num_memories);
  args->memories = dev->memories;
  args->num_memories = 1;
  return NULL;
}

PJRT_Error *shlo_pjrt_Device_DefaultMemory(
    PJRT_Device_DefaultMemory_Args *args) {
  DEVICE_ARGS(PJRT_Device_DefaultMemory_Args, memory);
  args->memory = dev->memories[0];
  return NULL;
}

/* -------------------------------------------------------------- memories */

#define MEMORY_ARGS(T, last)                                              \
  SHLO_PJRT_ARGS_CHECK(args, T, last);                                    \
  PJRT_Memory *mem = args->memory;                                        \
  if (mem == NULL)                                                        \
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,              \
                           "%s: null memory", __func__)

PJRT_Error *shlo_pjrt_Memory_Id(PJRT_Memory_Id_Args *args) {
  MEMORY_ARGS(PJRT_Memory_Id_Args, id);
  args->id = mem->id;
  return NULL;
}

PJRT_Error *shlo_pjrt_Memory_Kind(PJRT_Memory_Kind_Args *args) {
  MEMORY_ARGS(PJRT_Memory_Kind_Args, kind_size);
  args->kind = memory_kind;
  args->kind_size = strlen(memory_kind);
  return NULL;
}

PJRT_Error *shlo_pjrt_Memory_Kind_Id(PJRT_Memory_Kind_Id_Args *args) {
  MEMORY_ARGS(PJRT_Memory_Kind_Id_Args, kind_id);
  args->kind_id = 0;
  return NULL;
}

PJRT_Error *shlo_pjrt_Memory_DebugString(PJRT_Memory_DebugString_Args *args) {
  MEMORY_ARGS(PJRT_Memory_DebugString_Args, debug_string_size);
  args->debug_string = mem->to_string;
  args->debug_string_size = strlen(mem->to_string);
  return NULL;
}

PJRT_Error *shlo_pjrt_Memory_ToString(PJRT_Memory_ToString_Args *args) {
  MEMORY_ARGS(PJRT_Memory_ToString_Args, to_string_size);
  args->to_string = mem->to_string;
  args->to_string_size = strlen(mem->to_string);
  return NULL;
}

PJRT_Error *shlo_pjrt_Memory_AddressableByDevices(
    PJRT_Memory_AddressableByDevices_Args *args) {
  MEMORY_ARGS(PJRT_Memory_AddressableByDevices_Args, num_devices);
  args->devices = mem->device->client->devices;
  args->num_devices = 1;
  return NULL;
}
