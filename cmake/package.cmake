# SPDX-License-Identifier: Apache-2.0
# The CMake package an installed shlo ships (lib/cmake/shlo/), so that
#   find_package(shlo 0.2 CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE shlo::shlo)    # the engine
#   target_link_libraries(app PRIVATE shlo::client)  # the C client
# works.  shlo::shlo and shlo::client are the shared libraries, or the
# static ones when the consumer sets SHLO_USE_STATIC_LIBS before
# find_package; shlo::shlo_shared, shlo::shlo_static, shlo::client_shared
# and shlo::client_static name one kind explicitly.
# Included from the top-level CMakeLists.txt after the libraries exist.
include(CMakePackageConfigHelpers)
set_target_properties(shlo PROPERTIES EXPORT_NAME shlo_static)
set_target_properties(shlo_shared PROPERTIES EXPORT_NAME shlo_shared)

if(TARGET shlo-client)
  set(SHLO_PACKAGE_HAS_CLIENT ON)
else()
  set(SHLO_PACKAGE_HAS_CLIENT OFF)
endif()
set(SHLO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/shlo)
# The engine's targets and the client's in files of their own, so that
# a distribution may ship them in two packages (libshlo-dev,
# libshlo-client-dev): shloConfig.cmake includes the client's when there.
install(EXPORT shloTargets NAMESPACE shlo:: DESTINATION ${SHLO_CMAKE_DIR})
if(SHLO_PACKAGE_HAS_CLIENT)
  install(EXPORT shloClientTargets NAMESPACE shlo::
          DESTINATION ${SHLO_CMAKE_DIR})
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/shloConfig.cmake.in
  ${PROJECT_BINARY_DIR}/shloConfig.cmake
  INSTALL_DESTINATION ${SHLO_CMAKE_DIR})
# Before 1.0 a minor version may change the interface (engine/CMakeLists.txt
# makes the SONAME MAJOR.MINOR), so only the same minor version matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/shloConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/shloConfig.cmake
              ${PROJECT_BINARY_DIR}/shloConfigVersion.cmake
  DESTINATION ${SHLO_CMAKE_DIR})
