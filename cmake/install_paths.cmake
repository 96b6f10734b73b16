# SPDX-License-Identifier: Apache-2.0
# What libshlo and libshlo-client share when they are installed: the
# SONAME's version and the paths their .pc files name.  Included from the
# top-level CMakeLists.txt after GNUInstallDirs, so that engine/ and
# client/ read the same values.

# Before 1.0 a new minor version may change the interface, so the SONAME
# carries MAJOR.MINOR (libshlo.so.0.2); from 1.0 on, MAJOR alone.  Bump
# the minor version for every change of the interface (CHANGELOG.md).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(SHLO_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
  set(SHLO_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()

# The .pc files' prefix is relative to the file itself, so that
# `cmake --install --prefix DIR` and moved trees give the right paths.
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(SHLO_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(SHLO_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(SHLO_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  # from <prefix>/<libdir>/pkgconfig back up to <prefix>
  file(RELATIVE_PATH SHLO_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" SHLO_PC_UP "${SHLO_PC_UP}")
  set(SHLO_PC_PREFIX "\${pcfiledir}/${SHLO_PC_UP}")
endif()
