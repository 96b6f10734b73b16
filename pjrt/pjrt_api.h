/* SPDX-License-Identifier: Apache-2.0 */
/* The part of the PJRT C API that libshlo_pjrt.so implements, declared
 * here from XLA's published header (xla/pjrt/c/pjrt_c_api.h), in its
 * order, for the x86-64/aarch64 LP64 ABI.
 *
 * Version: the plugin states API 0.60 (PJRT_API_MAJOR 0, minor 60).  That
 * is the newest table layout this header reproduces; a framework reads
 * the version and calls no entry added after it.  jaxlib 0.10.2 (framework
 * 0.112) accepts plugins from 0.29 on, but 0.57 rearranged the function
 * table, so a plugin must state >= 0.57 to be read in today's layout; 0.60
 * is the layout checked here entry by entry.  Every struct offset and size
 * the plugin relies on is asserted at the end of this file, so a field out
 * of place fails the build, not a caller.
 *
 * Compatibility: each argument struct begins with struct_size, which the
 * caller sets to the size it knows.  Fields are only ever appended, so the
 * plugin reads and writes the prefix it declares here, and refuses a call
 * whose struct_size is too short for the fields it needs
 * (SHLO_PJRT_ARGS_CHECK in pjrt_internal.h). */
#ifndef SHLO_PJRT_API_H
#define SHLO_PJRT_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHLO_PJRT_API_MAJOR 0
#define SHLO_PJRT_API_MINOR 60

/* The entries of the function table, in table order, each with its slot
 * number as counted by hand from the published header: the table is
 * generated from this list and each slot's offset is asserted against
 * its number, so a misplaced line fails the build.  XV: returns void. */
#define SHLO_PJRT_SLOTS(X, XV)                                   \
  XV(0, Error_Destroy) XV(1, Error_Message) X(2, Error_GetCode)  \
  X(3, Plugin_Initialize) X(4, Plugin_Attributes)                \
  X(5, Event_Destroy) X(6, Event_IsReady) X(7, Event_Error)      \
  X(8, Event_Await) X(9, Event_OnReady)                          \
  X(10, Client_Create) X(11, Client_Destroy)                     \
  X(12, Client_PlatformName) X(13, Client_ProcessIndex)          \
  X(14, Client_PlatformVersion) X(15, Client_Devices)            \
  X(16, Client_AddressableDevices) X(17, Client_LookupDevice)    \
  X(18, Client_LookupAddressableDevice)                          \
  X(19, Client_AddressableMemories) X(20, Client_Compile)        \
  X(21, Client_DefaultDeviceAssignment)                          \
  X(22, Client_BufferFromHostBuffer)                             \
  X(23, DeviceDescription_Id) X(24, DeviceDescription_ProcessIndex) \
  X(25, DeviceDescription_Attributes) X(26, DeviceDescription_Kind) \
  X(27, DeviceDescription_DebugString)                           \
  X(28, DeviceDescription_ToString)                              \
  X(29, Device_GetDescription) X(30, Device_IsAddressable)       \
  X(31, Device_LocalHardwareId) X(32, Device_AddressableMemories) \
  X(33, Device_DefaultMemory) X(34, Device_MemoryStats)          \
  X(35, Memory_Id) X(36, Memory_Kind) X(37, Memory_DebugString)  \
  X(38, Memory_ToString) X(39, Memory_AddressableByDevices)      \
  X(40, Executable_Destroy) X(41, Executable_Name)               \
  X(42, Executable_NumReplicas) X(43, Executable_NumPartitions)  \
  X(44, Executable_NumOutputs)                                   \
  X(45, Executable_SizeOfGeneratedCodeInBytes)                   \
  X(46, Executable_GetCostAnalysis)                              \
  X(47, Executable_OutputMemoryKinds)                            \
  X(48, Executable_OptimizedProgram) X(49, Executable_Serialize) \
  X(50, LoadedExecutable_Destroy)                                \
  X(51, LoadedExecutable_GetExecutable)                          \
  X(52, LoadedExecutable_AddressableDevices)                     \
  X(53, LoadedExecutable_Delete) X(54, LoadedExecutable_IsDeleted) \
  X(55, LoadedExecutable_Execute)                                \
  X(56, Executable_DeserializeAndLoad)                           \
  X(57, LoadedExecutable_Fingerprint)                            \
  X(58, Buffer_Destroy) X(59, Buffer_ElementType)                \
  X(60, Buffer_Dimensions) X(61, Buffer_UnpaddedDimensions)      \
  X(62, Buffer_DynamicDimensionIndices)                          \
  X(63, Buffer_GetMemoryLayout) X(64, Buffer_OnDeviceSizeInBytes) \
  X(65, Buffer_Device) X(66, Buffer_Memory) X(67, Buffer_Delete) \
  X(68, Buffer_IsDeleted) X(69, Buffer_CopyToDevice)             \
  X(70, Buffer_ToHostBuffer) X(71, Buffer_IsOnCpu)               \
  X(72, Buffer_ReadyEvent) X(73, Buffer_UnsafePointer)           \
  X(74, Buffer_IncreaseExternalReferenceCount)                   \
  X(75, Buffer_DecreaseExternalReferenceCount)                   \
  X(76, Buffer_OpaqueDeviceMemoryDataPointer)                    \
  X(77, CopyToDeviceStream_Destroy)                              \
  X(78, CopyToDeviceStream_AddChunk)                             \
  X(79, CopyToDeviceStream_TotalBytes)                           \
  X(80, CopyToDeviceStream_GranuleSize)                          \
  X(81, CopyToDeviceStream_CurrentBytes)                         \
  X(82, TopologyDescription_Create) X(83, TopologyDescription_Destroy) \
  X(84, TopologyDescription_PlatformName)                        \
  X(85, TopologyDescription_PlatformVersion)                     \
  X(86, TopologyDescription_GetDeviceDescriptions)               \
  X(87, TopologyDescription_Serialize)                           \
  X(88, TopologyDescription_Attributes)                          \
  X(89, Compile)                                                 \
  X(90, Executable_OutputElementTypes)                           \
  X(91, Executable_OutputDimensions)                             \
  X(92, Buffer_CopyToMemory)                                     \
  X(93, Client_CreateViewOfDeviceBuffer)                         \
  X(94, Executable_Fingerprint)                                  \
  X(95, Client_TopologyDescription)                              \
  X(96, Executable_GetCompiledMemoryStats)                       \
  X(97, Memory_Kind_Id)                                          \
  X(98, ExecuteContext_Create) X(99, ExecuteContext_Destroy)     \
  X(100, Buffer_CopyRawToHost)                                   \
  X(101, AsyncHostToDeviceTransferManager_Destroy)               \
  X(102, AsyncHostToDeviceTransferManager_TransferData)          \
  X(103, Client_CreateBuffersForAsyncHostToDevice)
#define SHLO_PJRT_NUM_SLOTS 104

/* Opaque objects; pjrt_internal.h defines what the plugin keeps in each. */
typedef struct PJRT_Error PJRT_Error;
typedef struct PJRT_Event PJRT_Event;
typedef struct PJRT_Client PJRT_Client;
typedef struct PJRT_Device PJRT_Device;
typedef struct PJRT_Memory PJRT_Memory;
typedef struct PJRT_DeviceDescription PJRT_DeviceDescription;
typedef struct PJRT_Executable PJRT_Executable;
typedef struct PJRT_LoadedExecutable PJRT_LoadedExecutable;
typedef struct PJRT_Buffer PJRT_Buffer;
typedef struct PJRT_Extension_Base PJRT_Extension_Base;

/* Every argument struct by name, so the table below can name the ones
 * this header does not spell out (the plugin only stubs those). */
#define SHLO_PJRT_ARGS_TYPEDEF(idx, name) \
  typedef struct PJRT_##name##_Args PJRT_##name##_Args;
SHLO_PJRT_SLOTS(SHLO_PJRT_ARGS_TYPEDEF, SHLO_PJRT_ARGS_TYPEDEF)
#undef SHLO_PJRT_ARGS_TYPEDEF

/* The fields every argument struct starts with. */
#define SHLO_PJRT_HEAD            \
  size_t struct_size;             \
  PJRT_Extension_Base *extension_start

typedef struct PJRT_Api_Version {
  SHLO_PJRT_HEAD;
  int major_version; /* out */
  int minor_version; /* out */
} PJRT_Api_Version;

/* ---- errors: codes are absl's status codes ---- */
typedef enum {
  PJRT_Error_Code_CANCELLED = 1,
  PJRT_Error_Code_UNKNOWN = 2,
  PJRT_Error_Code_INVALID_ARGUMENT = 3,
  PJRT_Error_Code_DEADLINE_EXCEEDED = 4,
  PJRT_Error_Code_NOT_FOUND = 5,
  PJRT_Error_Code_ALREADY_EXISTS = 6,
  PJRT_Error_Code_PERMISSION_DENIED = 7,
  PJRT_Error_Code_RESOURCE_EXHAUSTED = 8,
  PJRT_Error_Code_FAILED_PRECONDITION = 9,
  PJRT_Error_Code_ABORTED = 10,
  PJRT_Error_Code_OUT_OF_RANGE = 11,
  PJRT_Error_Code_UNIMPLEMENTED = 12,
  PJRT_Error_Code_INTERNAL = 13,
  PJRT_Error_Code_UNAVAILABLE = 14,
  PJRT_Error_Code_DATA_LOSS = 15,
  PJRT_Error_Code_UNAUTHENTICATED = 16,
} PJRT_Error_Code;

struct PJRT_Error_Destroy_Args { SHLO_PJRT_HEAD; PJRT_Error *error; };
struct PJRT_Error_Message_Args {
  SHLO_PJRT_HEAD;
  const PJRT_Error *error;
  const char *message;   /* out, lives as long as error */
  size_t message_size;   /* out */
};
struct PJRT_Error_GetCode_Args {
  SHLO_PJRT_HEAD;
  const PJRT_Error *error;
  PJRT_Error_Code code;  /* out */
};

/* ---- named values (plugin and device attributes) ---- */
typedef enum {
  PJRT_NamedValue_kString = 0,
  PJRT_NamedValue_kInt64,
  PJRT_NamedValue_kInt64List,
  PJRT_NamedValue_kFloat,
  PJRT_NamedValue_kBool,
} PJRT_NamedValue_Type;

typedef struct PJRT_NamedValue {
  SHLO_PJRT_HEAD;
  const char *name;
  size_t name_size;
  PJRT_NamedValue_Type type;
  union {
    const char *string_value;
    int64_t int64_value;
    const int64_t *int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size; /* elements of a list or string; 1 for a scalar */
} PJRT_NamedValue;

struct PJRT_Plugin_Initialize_Args { SHLO_PJRT_HEAD; };
struct PJRT_Plugin_Attributes_Args {
  SHLO_PJRT_HEAD;
  const PJRT_NamedValue *attributes; /* out, live for the process */
  size_t num_attributes;             /* out */
};

/* ---- events ---- */
typedef void (*PJRT_Event_OnReadyCallback)(PJRT_Error *error, void *user_arg);
struct PJRT_Event_Destroy_Args { SHLO_PJRT_HEAD; PJRT_Event *event; };
struct PJRT_Event_IsReady_Args {
  SHLO_PJRT_HEAD;
  PJRT_Event *event;
  bool is_ready; /* out */
};
struct PJRT_Event_Error_Args { SHLO_PJRT_HEAD; PJRT_Event *event; };
struct PJRT_Event_Await_Args { SHLO_PJRT_HEAD; PJRT_Event *event; };
struct PJRT_Event_OnReady_Args {
  SHLO_PJRT_HEAD;
  PJRT_Event *event;
  PJRT_Event_OnReadyCallback callback;
  void *user_arg;
};

/* ---- client ---- */
struct PJRT_Client_Create_Args {
  SHLO_PJRT_HEAD;
  const PJRT_NamedValue *create_options;
  size_t num_options;
  void *kv_get_callback; /* key-value store callbacks: unused (one process) */
  void *kv_get_user_arg;
  void *kv_put_callback;
  void *kv_put_user_arg;
  PJRT_Client *client; /* out */
};
struct PJRT_Client_Destroy_Args { SHLO_PJRT_HEAD; PJRT_Client *client; };
/* PlatformName, PlatformVersion: the same shape, a string out. */
struct PJRT_Client_PlatformName_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  const char *platform_name; /* out, owned by client */
  size_t platform_name_size; /* out */
};
struct PJRT_Client_ProcessIndex_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  int process_index; /* out */
};
struct PJRT_Client_PlatformVersion_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  const char *platform_version; /* out, owned by client */
  size_t platform_version_size; /* out */
};
struct PJRT_Client_Devices_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  PJRT_Device *const *devices; /* out, owned by client */
  size_t num_devices;          /* out */
};
struct PJRT_Client_AddressableDevices_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  PJRT_Device *const *addressable_devices; /* out */
  size_t num_addressable_devices;          /* out */
};
struct PJRT_Client_LookupDevice_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  int id;
  PJRT_Device *device; /* out */
};
struct PJRT_Client_LookupAddressableDevice_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  int local_hardware_id;
  PJRT_Device *addressable_device; /* out */
};
struct PJRT_Client_AddressableMemories_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  PJRT_Memory *const *addressable_memories; /* out */
  size_t num_addressable_memories;          /* out */
};

/* A program: "mlir" (bytecode or text), "hlo", "hlo_with_config". */
typedef struct PJRT_Program {
  SHLO_PJRT_HEAD;
  char *code;
  size_t code_size;
  const char *format;
  size_t format_size;
} PJRT_Program;

struct PJRT_Client_Compile_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  const PJRT_Program *program;
  const char *compile_options; /* a serialized xla.CompileOptionsProto */
  size_t compile_options_size;
  PJRT_LoadedExecutable *executable; /* out */
};
struct PJRT_Client_DefaultDeviceAssignment_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  int num_replicas;
  int num_partitions;
  size_t default_assignment_size; /* >= num_replicas * num_partitions */
  int *default_assignment;        /* the caller's array, filled */
};

/* Element types, numbered as XLA's header numbers them (through 0.60). */
typedef enum {
  PJRT_Buffer_Type_INVALID = 0,
  PJRT_Buffer_Type_PRED = 1,
  PJRT_Buffer_Type_S8 = 2,
  PJRT_Buffer_Type_S16 = 3,
  PJRT_Buffer_Type_S32 = 4,
  PJRT_Buffer_Type_S64 = 5,
  PJRT_Buffer_Type_U8 = 6,
  PJRT_Buffer_Type_U16 = 7,
  PJRT_Buffer_Type_U32 = 8,
  PJRT_Buffer_Type_U64 = 9,
  PJRT_Buffer_Type_F16 = 10,
  PJRT_Buffer_Type_F32 = 11,
  PJRT_Buffer_Type_F64 = 12,
  PJRT_Buffer_Type_BF16 = 13,
  PJRT_Buffer_Type_C64 = 14,
  PJRT_Buffer_Type_C128 = 15,
  PJRT_Buffer_Type_F8E5M2 = 16,
  PJRT_Buffer_Type_F8E4M3FN = 17,
  PJRT_Buffer_Type_F8E4M3B11FNUZ = 18,
  PJRT_Buffer_Type_F8E5M2FNUZ = 19,
  PJRT_Buffer_Type_F8E4M3FNUZ = 20,
  PJRT_Buffer_Type_S4 = 21,
  PJRT_Buffer_Type_U4 = 22,
  PJRT_Buffer_Type_TOKEN = 23,
  PJRT_Buffer_Type_S2 = 24,
  PJRT_Buffer_Type_U2 = 25,
  PJRT_Buffer_Type_F8E4M3 = 26,
  PJRT_Buffer_Type_F8E3M4 = 27,
} PJRT_Buffer_Type;

typedef enum {
  PJRT_HostBufferSemantics_kImmutableOnlyDuringCall = 0,
  PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes = 1,
  PJRT_HostBufferSemantics_kImmutableZeroCopy = 2,
  PJRT_HostBufferSemantics_kMutableZeroCopy = 3,
} PJRT_HostBufferSemantics;

typedef enum {
  PJRT_Buffer_MemoryLayout_Type_Tiled = 0,
  PJRT_Buffer_MemoryLayout_Type_Strides = 1,
} PJRT_Buffer_MemoryLayout_Type;

typedef struct PJRT_Buffer_MemoryLayout_Tiled {
  SHLO_PJRT_HEAD;
  const int64_t *minor_to_major; /* logical dims, fastest first */
  size_t minor_to_major_size;
  const int64_t *tile_dims;
  const size_t *tile_dim_sizes;
  size_t num_tiles;
} PJRT_Buffer_MemoryLayout_Tiled;

typedef struct PJRT_Buffer_MemoryLayout_Strides {
  SHLO_PJRT_HEAD;
  const int64_t *byte_strides;
  size_t num_byte_strides;
} PJRT_Buffer_MemoryLayout_Strides;

typedef struct PJRT_Buffer_MemoryLayout {
  SHLO_PJRT_HEAD;
  union {
    PJRT_Buffer_MemoryLayout_Tiled tiled;
    PJRT_Buffer_MemoryLayout_Strides strides;
  };
  PJRT_Buffer_MemoryLayout_Type type;
} PJRT_Buffer_MemoryLayout;

struct PJRT_Client_BufferFromHostBuffer_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  const void *data;
  PJRT_Buffer_Type type;
  const int64_t *dims;
  size_t num_dims;
  const int64_t *byte_strides; /* NULL/empty: dense row-major */
  size_t num_byte_strides;
  PJRT_HostBufferSemantics host_buffer_semantics;
  PJRT_Device *device;
  PJRT_Memory *memory;         /* if set, preferred over device */
  PJRT_Buffer_MemoryLayout *device_layout; /* NULL: dense row-major */
  PJRT_Event *done_with_host_buffer; /* out */
  PJRT_Buffer *buffer;               /* out */
};

/* ---- device descriptions, devices, memories ---- */
struct PJRT_DeviceDescription_Id_Args {
  SHLO_PJRT_HEAD;
  PJRT_DeviceDescription *device_description;
  int id; /* out */
};
struct PJRT_DeviceDescription_ProcessIndex_Args {
  SHLO_PJRT_HEAD;
  PJRT_DeviceDescription *device_description;
  int process_index; /* out */
};
struct PJRT_DeviceDescription_Attributes_Args {
  SHLO_PJRT_HEAD;
  PJRT_DeviceDescription *device_description;
  size_t num_attributes;             /* out */
  const PJRT_NamedValue *attributes; /* out */
};
/* Kind, DebugString, ToString: one string out each. */
struct PJRT_DeviceDescription_Kind_Args {
  SHLO_PJRT_HEAD;
  PJRT_DeviceDescription *device_description;
  const char *device_kind;
  size_t device_kind_size;
};
struct PJRT_DeviceDescription_DebugString_Args {
  SHLO_PJRT_HEAD;
  PJRT_DeviceDescription *device_description;
  const char *debug_string;
  size_t debug_string_size;
};
struct PJRT_DeviceDescription_ToString_Args {
  SHLO_PJRT_HEAD;
  PJRT_DeviceDescription *device_description;
  const char *to_string;
  size_t to_string_size;
};
struct PJRT_Device_GetDescription_Args {
  SHLO_PJRT_HEAD;
  PJRT_Device *device;
  PJRT_DeviceDescription *device_description; /* out */
};
struct PJRT_Device_IsAddressable_Args {
  SHLO_PJRT_HEAD;
  PJRT_Device *device;
  bool is_addressable; /* out */
};
struct PJRT_Device_LocalHardwareId_Args {
  SHLO_PJRT_HEAD;
  PJRT_Device *device;
  int local_hardware_id; /* out */
};
struct PJRT_Device_AddressableMemories_Args {
  SHLO_PJRT_HEAD;
  PJRT_Device *device;
  PJRT_Memory *const *memories; /* out */
  size_t num_memories;          /* out */
};
struct PJRT_Device_DefaultMemory_Args {
  SHLO_PJRT_HEAD;
  PJRT_Device *device;
  PJRT_Memory *memory; /* out */
};
struct PJRT_Memory_Id_Args {
  SHLO_PJRT_HEAD;
  PJRT_Memory *memory;
  int id; /* out */
};
struct PJRT_Memory_Kind_Args {
  SHLO_PJRT_HEAD;
  PJRT_Memory *memory;
  const char *kind; /* out */
  size_t kind_size; /* out */
};
struct PJRT_Memory_DebugString_Args {
  SHLO_PJRT_HEAD;
  PJRT_Memory *memory;
  const char *debug_string;
  size_t debug_string_size;
};
struct PJRT_Memory_ToString_Args {
  SHLO_PJRT_HEAD;
  PJRT_Memory *memory;
  const char *to_string;
  size_t to_string_size;
};
struct PJRT_Memory_AddressableByDevices_Args {
  SHLO_PJRT_HEAD;
  PJRT_Memory *memory;
  PJRT_Device *const *devices; /* out */
  size_t num_devices;          /* out */
};
struct PJRT_Memory_Kind_Id_Args {
  SHLO_PJRT_HEAD;
  PJRT_Memory *memory;
  int kind_id; /* out */
};

/* ---- executables ---- */
struct PJRT_Executable_Destroy_Args { SHLO_PJRT_HEAD; PJRT_Executable *executable; };
struct PJRT_LoadedExecutable_Destroy_Args {
  SHLO_PJRT_HEAD;
  PJRT_LoadedExecutable *executable;
};
struct PJRT_LoadedExecutable_GetExecutable_Args {
  SHLO_PJRT_HEAD;
  PJRT_LoadedExecutable *loaded_executable;
  PJRT_Executable *executable; /* out, the caller destroys it */
};
struct PJRT_Executable_Name_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  const char *executable_name; /* out */
  size_t executable_name_size; /* out */
};
/* NumReplicas, NumPartitions, NumOutputs: one size_t out each. */
struct PJRT_Executable_NumReplicas_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  size_t num_replicas;
};
struct PJRT_Executable_NumPartitions_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  size_t num_partitions;
};
struct PJRT_Executable_NumOutputs_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  size_t num_outputs;
};
struct PJRT_Executable_SizeOfGeneratedCodeInBytes_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  int64_t size_in_bytes; /* out */
};
struct PJRT_Executable_GetCostAnalysis_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  size_t num_properties;             /* out */
  const PJRT_NamedValue *properties; /* out */
};
struct PJRT_Executable_OutputMemoryKinds_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  size_t num_outputs;                /* out */
  const char *const *memory_kinds;   /* out */
  const size_t *memory_kind_sizes;   /* out */
};
struct PJRT_Executable_OptimizedProgram_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  PJRT_Program *program; /* the caller's; code filled on the second call */
};
struct PJRT_LoadedExecutable_AddressableDevices_Args {
  SHLO_PJRT_HEAD;
  PJRT_LoadedExecutable *executable;
  PJRT_Device *const *addressable_devices; /* out */
  size_t num_addressable_devices;          /* out */
};
struct PJRT_LoadedExecutable_Delete_Args {
  SHLO_PJRT_HEAD;
  PJRT_LoadedExecutable *executable;
};
struct PJRT_LoadedExecutable_IsDeleted_Args {
  SHLO_PJRT_HEAD;
  PJRT_LoadedExecutable *executable;
  bool is_deleted; /* out */
};

typedef struct PJRT_SerializedExecutable PJRT_SerializedExecutable;
struct PJRT_Executable_Serialize_Args {
  SHLO_PJRT_HEAD;
  const PJRT_Executable *executable;
  const char *serialized_bytes;      /* out, lives as serialized_executable */
  size_t serialized_bytes_size;      /* out */
  PJRT_SerializedExecutable *serialized_executable; /* out */
  void (*serialized_executable_deleter)(PJRT_SerializedExecutable *exec);
};
struct PJRT_Executable_DeserializeAndLoad_Args {
  SHLO_PJRT_HEAD;
  PJRT_Client *client;
  const char *serialized_executable;
  size_t serialized_executable_size;
  PJRT_LoadedExecutable *loaded_executable; /* out */
};

typedef struct PJRT_ExecuteOptions {
  SHLO_PJRT_HEAD;
  void **send_callbacks; /* host send/recv callbacks: refused when given */
  void **recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id;
} PJRT_ExecuteOptions;

struct PJRT_LoadedExecutable_Execute_Args {
  SHLO_PJRT_HEAD;
  PJRT_LoadedExecutable *executable;
  PJRT_ExecuteOptions *options;
  PJRT_Buffer *const *const *argument_lists; /* [num_devices][num_args] */
  size_t num_devices;
  size_t num_args;
  PJRT_Buffer **const *output_lists; /* [num_devices][num_outputs], filled */
  PJRT_Event **device_complete_events; /* NULL or [num_devices], filled */
  PJRT_Device *execute_device;         /* NULL: the compiled devices */
};
/* LoadedExecutable_Fingerprint and Executable_Fingerprint: one string. */
struct PJRT_LoadedExecutable_Fingerprint_Args {
  SHLO_PJRT_HEAD;
  PJRT_LoadedExecutable *executable;
  const char *executable_fingerprint; /* out */
  size_t executable_fingerprint_size; /* out */
};
struct PJRT_Executable_Fingerprint_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  const char *executable_fingerprint; /* out */
  size_t executable_fingerprint_size; /* out */
};
struct PJRT_Executable_OutputElementTypes_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  PJRT_Buffer_Type *output_types; /* out, owned by the executable */
  size_t num_output_types;        /* out */
};
struct PJRT_Executable_OutputDimensions_Args {
  SHLO_PJRT_HEAD;
  PJRT_Executable *executable;
  size_t num_outputs;       /* out */
  const int64_t *dims;      /* out, every output's dims, concatenated */
  const size_t *dim_sizes;  /* out, each output's rank */
};

/* ---- buffers ---- */
struct PJRT_Buffer_Destroy_Args { SHLO_PJRT_HEAD; PJRT_Buffer *buffer; };
struct PJRT_Buffer_ElementType_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  PJRT_Buffer_Type type; /* out */
};
struct PJRT_Buffer_Dimensions_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  const int64_t *dims; /* out, owned by buffer */
  size_t num_dims;     /* out */
};
struct PJRT_Buffer_UnpaddedDimensions_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  const int64_t *unpadded_dims; /* out */
  size_t num_dims;              /* out */
};
struct PJRT_Buffer_DynamicDimensionIndices_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  const size_t *dynamic_dim_indices; /* out */
  size_t num_dynamic_dims;           /* out */
};
struct PJRT_Buffer_GetMemoryLayout_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  PJRT_Buffer_MemoryLayout layout; /* out, arrays owned by buffer */
};
struct PJRT_Buffer_ToHostBuffer_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *src;
  PJRT_Buffer_MemoryLayout *host_layout; /* NULL: the buffer's own */
  void *dst;        /* NULL: only report dst_size */
  size_t dst_size;  /* in/out */
  PJRT_Event *event; /* out */
};
struct PJRT_Buffer_OnDeviceSizeInBytes_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  size_t on_device_size_in_bytes; /* out */
};
struct PJRT_Buffer_Device_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  PJRT_Device *device; /* out */
};
struct PJRT_Buffer_Memory_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  PJRT_Memory *memory; /* out */
};
struct PJRT_Buffer_Delete_Args { SHLO_PJRT_HEAD; PJRT_Buffer *buffer; };
struct PJRT_Buffer_IsDeleted_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  bool is_deleted; /* out */
};
struct PJRT_Buffer_IsOnCpu_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  bool is_on_cpu; /* out */
};
struct PJRT_Buffer_ReadyEvent_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  PJRT_Event *event; /* out */
};
struct PJRT_Buffer_CopyToDevice_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  PJRT_Device *dst_device;
  PJRT_Buffer *dst_buffer; /* out */
};
struct PJRT_Buffer_CopyToMemory_Args {
  SHLO_PJRT_HEAD;
  PJRT_Buffer *buffer;
  PJRT_Memory *dst_memory;
  PJRT_Buffer *dst_buffer; /* out */
};

/* ---- the table GetPjrtApi returns ---- */
#define SHLO_PJRT_SLOT_FIELD(idx, name) \
  PJRT_Error *(*PJRT_##name)(PJRT_##name##_Args *args);
#define SHLO_PJRT_SLOT_FIELD_VOID(idx, name) \
  void (*PJRT_##name)(PJRT_##name##_Args *args);
typedef struct PJRT_Api {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Api_Version pjrt_api_version;
  SHLO_PJRT_SLOTS(SHLO_PJRT_SLOT_FIELD, SHLO_PJRT_SLOT_FIELD_VOID)
} PJRT_Api;
#undef SHLO_PJRT_SLOT_FIELD
#undef SHLO_PJRT_SLOT_FIELD_VOID

/* ---- layout checks (LP64) ----
 * SHLO_PJRT_AT: a field's offset; SHLO_PJRT_SIZE: the struct_size XLA's
 * header gives the struct (the end of its last field). */
#define SHLO_PJRT_AT(T, f, off) \
  _Static_assert(offsetof(T, f) == (off), #T "." #f " is not at " #off);
#define SHLO_PJRT_END(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))
#define SHLO_PJRT_SIZE(T, last, n) \
  _Static_assert(SHLO_PJRT_END(T, last) == (n), #T " is not " #n " bytes");

_Static_assert(sizeof(void *) == 8 && sizeof(size_t) == 8 && sizeof(int) == 4,
               "the layout checks below are for LP64");
_Static_assert(sizeof(PJRT_Buffer_Type) == 4 && sizeof(PJRT_Error_Code) == 4,
               "enums are ints in XLA's ABI");
SHLO_PJRT_AT(PJRT_Api_Version, major_version, 16)
SHLO_PJRT_SIZE(PJRT_Api_Version, minor_version, 24)
SHLO_PJRT_AT(PJRT_Api, pjrt_api_version, 16)
#define SHLO_PJRT_SLOT_AT(idx, name) \
  SHLO_PJRT_AT(PJRT_Api, PJRT_##name, 40 + 8 * (idx))
SHLO_PJRT_SLOTS(SHLO_PJRT_SLOT_AT, SHLO_PJRT_SLOT_AT)
#undef SHLO_PJRT_SLOT_AT
SHLO_PJRT_SIZE(PJRT_Api, PJRT_Client_CreateBuffersForAsyncHostToDevice,
               40 + 8 * SHLO_PJRT_NUM_SLOTS)

SHLO_PJRT_AT(PJRT_Error_Message_Args, message, 24)
SHLO_PJRT_SIZE(PJRT_Error_Message_Args, message_size, 40)
SHLO_PJRT_SIZE(PJRT_Error_GetCode_Args, code, 28)
SHLO_PJRT_AT(PJRT_NamedValue, name, 16)
SHLO_PJRT_AT(PJRT_NamedValue, type, 32)
SHLO_PJRT_AT(PJRT_NamedValue, int64_value, 40)
SHLO_PJRT_SIZE(PJRT_NamedValue, value_size, 56)
SHLO_PJRT_SIZE(PJRT_Plugin_Initialize_Args, extension_start, 16)
SHLO_PJRT_SIZE(PJRT_Plugin_Attributes_Args, num_attributes, 32)
SHLO_PJRT_SIZE(PJRT_Event_IsReady_Args, is_ready, 25)
SHLO_PJRT_SIZE(PJRT_Event_Await_Args, event, 24)
SHLO_PJRT_AT(PJRT_Event_OnReady_Args, callback, 24)
SHLO_PJRT_SIZE(PJRT_Event_OnReady_Args, user_arg, 40)
SHLO_PJRT_AT(PJRT_Client_Create_Args, num_options, 24)
SHLO_PJRT_SIZE(PJRT_Client_Create_Args, client, 72)
SHLO_PJRT_SIZE(PJRT_Client_PlatformName_Args, platform_name_size, 40)
SHLO_PJRT_SIZE(PJRT_Client_ProcessIndex_Args, process_index, 28)
SHLO_PJRT_SIZE(PJRT_Client_PlatformVersion_Args, platform_version_size, 40)
SHLO_PJRT_SIZE(PJRT_Client_Devices_Args, num_devices, 40)
SHLO_PJRT_SIZE(PJRT_Client_AddressableDevices_Args, num_addressable_devices, 40)
SHLO_PJRT_AT(PJRT_Client_LookupDevice_Args, id, 24)
SHLO_PJRT_SIZE(PJRT_Client_LookupDevice_Args, device, 40)
SHLO_PJRT_SIZE(PJRT_Client_LookupAddressableDevice_Args, addressable_device, 40)
SHLO_PJRT_SIZE(PJRT_Client_AddressableMemories_Args, num_addressable_memories, 40)
SHLO_PJRT_AT(PJRT_Program, code, 16)
SHLO_PJRT_AT(PJRT_Program, format, 32)
SHLO_PJRT_SIZE(PJRT_Program, format_size, 48)
SHLO_PJRT_AT(PJRT_Client_Compile_Args, program, 24)
SHLO_PJRT_AT(PJRT_Client_Compile_Args, compile_options_size, 40)
SHLO_PJRT_SIZE(PJRT_Client_Compile_Args, executable, 56)
SHLO_PJRT_AT(PJRT_Client_DefaultDeviceAssignment_Args, num_partitions, 28)
SHLO_PJRT_SIZE(PJRT_Client_DefaultDeviceAssignment_Args, default_assignment, 48)
SHLO_PJRT_SIZE(PJRT_Buffer_MemoryLayout_Tiled, num_tiles, 56)
SHLO_PJRT_SIZE(PJRT_Buffer_MemoryLayout_Strides, num_byte_strides, 32)
SHLO_PJRT_AT(PJRT_Buffer_MemoryLayout, tiled, 16)
SHLO_PJRT_SIZE(PJRT_Buffer_MemoryLayout, type, 76)
_Static_assert(sizeof(PJRT_Buffer_MemoryLayout) == 80, "MemoryLayout size");
SHLO_PJRT_AT(PJRT_Client_BufferFromHostBuffer_Args, data, 24)
SHLO_PJRT_AT(PJRT_Client_BufferFromHostBuffer_Args, type, 32)
SHLO_PJRT_AT(PJRT_Client_BufferFromHostBuffer_Args, dims, 40)
SHLO_PJRT_AT(PJRT_Client_BufferFromHostBuffer_Args, byte_strides, 56)
SHLO_PJRT_AT(PJRT_Client_BufferFromHostBuffer_Args, host_buffer_semantics, 72)
SHLO_PJRT_AT(PJRT_Client_BufferFromHostBuffer_Args, device, 80)
SHLO_PJRT_AT(PJRT_Client_BufferFromHostBuffer_Args, memory, 88)
SHLO_PJRT_AT(PJRT_Client_BufferFromHostBuffer_Args, device_layout, 96)
SHLO_PJRT_AT(PJRT_Client_BufferFromHostBuffer_Args, done_with_host_buffer, 104)
SHLO_PJRT_SIZE(PJRT_Client_BufferFromHostBuffer_Args, buffer, 120)
SHLO_PJRT_SIZE(PJRT_DeviceDescription_Id_Args, id, 28)
SHLO_PJRT_SIZE(PJRT_DeviceDescription_ProcessIndex_Args, process_index, 28)
SHLO_PJRT_AT(PJRT_DeviceDescription_Attributes_Args, num_attributes, 24)
SHLO_PJRT_SIZE(PJRT_DeviceDescription_Attributes_Args, attributes, 40)
SHLO_PJRT_SIZE(PJRT_DeviceDescription_Kind_Args, device_kind_size, 40)
SHLO_PJRT_SIZE(PJRT_DeviceDescription_DebugString_Args, debug_string_size, 40)
SHLO_PJRT_SIZE(PJRT_DeviceDescription_ToString_Args, to_string_size, 40)
SHLO_PJRT_SIZE(PJRT_Device_GetDescription_Args, device_description, 32)
SHLO_PJRT_SIZE(PJRT_Device_IsAddressable_Args, is_addressable, 25)
SHLO_PJRT_SIZE(PJRT_Device_LocalHardwareId_Args, local_hardware_id, 28)
SHLO_PJRT_SIZE(PJRT_Device_AddressableMemories_Args, num_memories, 40)
SHLO_PJRT_SIZE(PJRT_Device_DefaultMemory_Args, memory, 32)
SHLO_PJRT_SIZE(PJRT_Memory_Id_Args, id, 28)
SHLO_PJRT_SIZE(PJRT_Memory_Kind_Args, kind_size, 40)
SHLO_PJRT_SIZE(PJRT_Memory_DebugString_Args, debug_string_size, 40)
SHLO_PJRT_SIZE(PJRT_Memory_ToString_Args, to_string_size, 40)
SHLO_PJRT_SIZE(PJRT_Memory_AddressableByDevices_Args, num_devices, 40)
SHLO_PJRT_SIZE(PJRT_Memory_Kind_Id_Args, kind_id, 28)
SHLO_PJRT_SIZE(PJRT_LoadedExecutable_GetExecutable_Args, executable, 32)
SHLO_PJRT_SIZE(PJRT_Executable_Name_Args, executable_name_size, 40)
SHLO_PJRT_SIZE(PJRT_Executable_NumReplicas_Args, num_replicas, 32)
SHLO_PJRT_SIZE(PJRT_Executable_NumPartitions_Args, num_partitions, 32)
SHLO_PJRT_SIZE(PJRT_Executable_NumOutputs_Args, num_outputs, 32)
SHLO_PJRT_SIZE(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, size_in_bytes, 32)
SHLO_PJRT_SIZE(PJRT_Executable_GetCostAnalysis_Args, properties, 40)
SHLO_PJRT_SIZE(PJRT_Executable_OutputMemoryKinds_Args, memory_kind_sizes, 48)
SHLO_PJRT_SIZE(PJRT_Executable_OptimizedProgram_Args, program, 32)
SHLO_PJRT_SIZE(PJRT_LoadedExecutable_AddressableDevices_Args,
               num_addressable_devices, 40)
SHLO_PJRT_SIZE(PJRT_LoadedExecutable_IsDeleted_Args, is_deleted, 25)
SHLO_PJRT_AT(PJRT_Executable_Serialize_Args, serialized_bytes, 24)
SHLO_PJRT_AT(PJRT_Executable_Serialize_Args, serialized_executable, 40)
SHLO_PJRT_SIZE(PJRT_Executable_Serialize_Args, serialized_executable_deleter, 56)
SHLO_PJRT_AT(PJRT_Executable_DeserializeAndLoad_Args, serialized_executable, 24)
SHLO_PJRT_SIZE(PJRT_Executable_DeserializeAndLoad_Args, loaded_executable, 48)
SHLO_PJRT_AT(PJRT_ExecuteOptions, num_send_ops, 32)
SHLO_PJRT_SIZE(PJRT_ExecuteOptions, launch_id, 52)
SHLO_PJRT_AT(PJRT_LoadedExecutable_Execute_Args, options, 24)
SHLO_PJRT_AT(PJRT_LoadedExecutable_Execute_Args, argument_lists, 32)
SHLO_PJRT_AT(PJRT_LoadedExecutable_Execute_Args, num_devices, 40)
SHLO_PJRT_AT(PJRT_LoadedExecutable_Execute_Args, num_args, 48)
SHLO_PJRT_AT(PJRT_LoadedExecutable_Execute_Args, output_lists, 56)
SHLO_PJRT_AT(PJRT_LoadedExecutable_Execute_Args, device_complete_events, 64)
SHLO_PJRT_SIZE(PJRT_LoadedExecutable_Execute_Args, execute_device, 80)
SHLO_PJRT_SIZE(PJRT_LoadedExecutable_Fingerprint_Args,
               executable_fingerprint_size, 40)
SHLO_PJRT_SIZE(PJRT_Executable_Fingerprint_Args, executable_fingerprint_size, 40)
SHLO_PJRT_SIZE(PJRT_Executable_OutputElementTypes_Args, num_output_types, 40)
SHLO_PJRT_AT(PJRT_Executable_OutputDimensions_Args, dims, 32)
SHLO_PJRT_SIZE(PJRT_Executable_OutputDimensions_Args, dim_sizes, 48)
SHLO_PJRT_SIZE(PJRT_Buffer_ElementType_Args, type, 28)
SHLO_PJRT_SIZE(PJRT_Buffer_Dimensions_Args, num_dims, 40)
SHLO_PJRT_SIZE(PJRT_Buffer_UnpaddedDimensions_Args, num_dims, 40)
SHLO_PJRT_SIZE(PJRT_Buffer_DynamicDimensionIndices_Args, num_dynamic_dims, 40)
SHLO_PJRT_SIZE(PJRT_Buffer_GetMemoryLayout_Args, layout, 104)
SHLO_PJRT_AT(PJRT_Buffer_ToHostBuffer_Args, host_layout, 24)
SHLO_PJRT_AT(PJRT_Buffer_ToHostBuffer_Args, dst, 32)
SHLO_PJRT_AT(PJRT_Buffer_ToHostBuffer_Args, dst_size, 40)
SHLO_PJRT_SIZE(PJRT_Buffer_ToHostBuffer_Args, event, 56)
SHLO_PJRT_SIZE(PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes, 32)
SHLO_PJRT_SIZE(PJRT_Buffer_Device_Args, device, 32)
SHLO_PJRT_SIZE(PJRT_Buffer_Memory_Args, memory, 32)
SHLO_PJRT_SIZE(PJRT_Buffer_Delete_Args, buffer, 24)
SHLO_PJRT_SIZE(PJRT_Buffer_IsDeleted_Args, is_deleted, 25)
SHLO_PJRT_SIZE(PJRT_Buffer_IsOnCpu_Args, is_on_cpu, 25)
SHLO_PJRT_SIZE(PJRT_Buffer_ReadyEvent_Args, event, 32)
SHLO_PJRT_SIZE(PJRT_Buffer_CopyToDevice_Args, dst_buffer, 40)
SHLO_PJRT_SIZE(PJRT_Buffer_CopyToMemory_Args, dst_buffer, 40)

#endif
