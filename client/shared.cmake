# SPDX-License-Identifier: Apache-2.0
# libshlo-client.so: the same client as libshlo-client.a, for programs that
# link shared.  The wire codecs call the engine's internal functions
# (string builder, element printer, tensor constructors), which libshlo.so
# does not export; so the engine's objects are linked in too, and the
# version script (client.map) exports only the client's API.  The values a
# program passes and gets back are libshlo's: same version, same layout
# (libshlo-client.pc requires libshlo of the same version).
# Included from client/CMakeLists.txt once target shlo-client exists.

# The SONAME's version and the .pc file's paths are libshlo's
# (cmake/install_paths.cmake).
set_target_properties(shlo_protocol_objects PROPERTIES
  POSITION_INDEPENDENT_CODE ON)
get_property(shlo_engine_objects GLOBAL PROPERTY SHLO_STAGE_OBJECTS)
add_library(shlo-client-shared SHARED ${SHLO_CLIENT_LIB_SOURCES}
            $<TARGET_OBJECTS:shlo_protocol_objects>
            ${shlo_engine_objects})
target_include_directories(shlo-client-shared
  PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
         $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/engine/include>
         $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/engine/include>
  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/lib
          ${CMAKE_SOURCE_DIR}/protocol/include)
target_link_libraries(shlo-client-shared
  PUBLIC shlo_shared
  PRIVATE PkgConfig::CJSON PkgConfig::LIBCURL_CLIENT PkgConfig::OPENBLAS
          Threads::Threads m ${SHLO_MPI_LIBS})
set_target_properties(shlo-client-shared PROPERTIES
  OUTPUT_NAME shlo-client
  C_VISIBILITY_PRESET hidden
  VERSION ${PROJECT_VERSION}
  SOVERSION ${SHLO_SOVERSION}
  EXPORT_NAME client_shared
  LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/client.map)
target_link_options(shlo-client-shared PRIVATE
  "LINKER:--version-script=${CMAKE_CURRENT_SOURCE_DIR}/client.map")
if(NOT SHLO_SANITIZE AND NOT SHLO_FUZZ)
  target_link_options(shlo-client-shared PRIVATE "LINKER:--no-undefined")
endif()
set_target_properties(shlo-client PROPERTIES EXPORT_NAME client_static)
install(TARGETS shlo-client-shared EXPORT shloClientTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# libshlo-client.pc, its paths relative to itself as libshlo.pc's are.
configure_file(libshlo-client.pc.in
               ${CMAKE_CURRENT_BINARY_DIR}/libshlo-client.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/libshlo-client.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
