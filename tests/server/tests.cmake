# shlo-server end-to-end tests (included from server/CMakeLists.txt when
# SHLO_BUILD_TESTS is on): each starts real servers on free loopback ports and
# talks HTTP with libcurl.
pkg_check_modules(LIBCURL IMPORTED_TARGET libcurl)
if(LIBCURL_FOUND)
  foreach(name test_server_api test_server_stress test_server_fuzz
               test_server_service test_server_bounds test_server_b64)
    add_executable(${name} ${CMAKE_SOURCE_DIR}/tests/server/${name}.c)
    target_compile_definitions(${name} PRIVATE
      SHLO_SERVER_BIN="$<TARGET_FILE:shlo-server>")
    target_link_libraries(${name} PRIVATE PkgConfig::LIBCURL OpenSSL::Crypto)
    add_dependencies(${name} shlo-server)
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES TIMEOUT 300)
  endforeach()
  target_link_libraries(test_server_bounds PRIVATE Threads::Threads)
  target_link_libraries(test_server_b64 PRIVATE shlo_protocol)
  set_tests_properties(test_server_b64 PROPERTIES TIMEOUT 900)
  # Three servers behind nginx (deploy/nginx.conf.in); SKIPPED (77)
  # without nginx, which deploy/bootstrap.sh installs.
  find_program(SHLO_NGINX nginx PATHS /usr/sbin /usr/local/sbin)
  if(NOT SHLO_NGINX)
    set(SHLO_NGINX "")
  endif()
  add_executable(test_server_cluster
    ${CMAKE_SOURCE_DIR}/tests/server/test_server_cluster.c)
  target_compile_definitions(test_server_cluster PRIVATE
    SHLO_SERVER_BIN="$<TARGET_FILE:shlo-server>"
    SHLO_NGINX_BIN="${SHLO_NGINX}" SHLO_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  target_link_libraries(test_server_cluster PRIVATE PkgConfig::LIBCURL
    OpenSSL::Crypto)
  add_dependencies(test_server_cluster shlo-server)
  add_test(NAME test_server_cluster COMMAND test_server_cluster)
  set_tests_properties(test_server_cluster PROPERTIES TIMEOUT 300
    SKIP_RETURN_CODE 77)
else()
  message(WARNING "libcurl not found: the server's end-to-end tests are off")
endif()

# The fast number and response writers against printf and cJSON.
add_executable(test_server_proto_numbers
  ${CMAKE_SOURCE_DIR}/tests/server/test_proto_numbers.c)
target_include_directories(test_server_proto_numbers PRIVATE
  ${CMAKE_SOURCE_DIR}/engine/src ${CMAKE_SOURCE_DIR}/protocol/src)
target_link_libraries(test_server_proto_numbers PRIVATE shlo_protocol)
add_test(NAME test_server_proto_numbers COMMAND test_server_proto_numbers)

# Every JAX program of the corpus through the server agrees with `shlo test`;
# SKIPPED (77) without a corpus.
if(TARGET shlo-cli)
  add_test(NAME test_server_conformance
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/server/conformance.sh
            $<TARGET_FILE:shlo-server> $<TARGET_FILE:shlo-cli>
            ${SHLO_CONFORMANCE_DIR}/jax)
  set_tests_properties(test_server_conformance PROPERTIES
    TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()

# deploy/shlo.conf against the option table (--print-config and --help).
add_test(NAME test_deploy_config
  COMMAND bash ${CMAKE_SOURCE_DIR}/tests/server/deploy_config.sh
          $<TARGET_FILE:shlo-server> ${CMAKE_SOURCE_DIR}/deploy/shlo.conf)

# deploy/shlo-server.service verifies and matches the server; SKIPPED (77)
# without systemd-analyze.
add_test(NAME test_deploy_unit
  COMMAND bash ${CMAKE_SOURCE_DIR}/tests/server/deploy_unit.sh
          $<TARGET_FILE:shlo-server> ${CMAKE_SOURCE_DIR}/deploy/shlo-server.service)
set_tests_properties(test_deploy_unit PROPERTIES SKIP_RETURN_CODE 77)

# `shlo test --server` (binary and HTTP) and the Python client agree with
# the local `shlo test` over interpret/ and jax/; SKIPPED (77) without them.
if(TARGET shlo-cli AND TARGET shlo-client)
  add_test(NAME test_remote_conformance
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/server/remote_conformance.sh
            $<TARGET_FILE:shlo-server> $<TARGET_FILE:shlo-cli>
            ${SHLO_CONFORMANCE_DIR})
  set_tests_properties(test_remote_conformance PROPERTIES
    TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()

# Hostile frames and peers at a live binary port (Python, numpy).
add_test(NAME test_binary_hostile
  COMMAND sh -c "if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then exec /usr/bin/python3 \"$0\" \"$1\"; else exec python3 \"$0\" \"$1\"; fi"
          ${CMAKE_SOURCE_DIR}/tests/server/binary_hostile.py $<TARGET_FILE:shlo-server>)
set_tests_properties(test_binary_hostile PROPERTIES TIMEOUT 120)

# `shlo run|bench|test --server` print what the local runs print.
if(TARGET shlo-cli AND TARGET shlo-client)
  add_test(NAME test_remote_run
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/server/remote_run.sh
            $<TARGET_FILE:shlo-server> $<TARGET_FILE:shlo-cli>
            ${CMAKE_SOURCE_DIR})
  set_tests_properties(test_remote_run PROPERTIES TIMEOUT 300)
  # libshlo-client's RESULT reader against a fake server's frames.
  add_test(NAME test_client_result
    COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/server/client_result.py
            $<TARGET_FILE:shlo-cli>)
  set_tests_properties(test_client_result PROPERTIES TIMEOUT 120)
endif()
# Issue #10: the server under hostile or careless clients (Python, live
# servers): connection floods and trickles, caps and deadlines, lanes and
# per-client caps, cancellation on hang-up, the documented behaviours,
# SIGHUP's reload.
foreach(name flood caps lanes cancel docs reload)
  add_test(NAME test_server_robust_${name}
    COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/server/robust_${name}.py
            $<TARGET_FILE:shlo-server>)
  set_tests_properties(test_server_robust_${name} PROPERTIES TIMEOUT 120)
endforeach()
# The flood opens 2,200 connections: it runs alone, so that its 1 s bound
# measures the server rather than the tests beside it.
set_tests_properties(test_server_robust_flood test_server_robust_lanes
  test_server_robust_cancel PROPERTIES RUN_SERIAL TRUE)
