# SPDX-License-Identifier: Apache-2.0
# shlo-server built with AddressSanitizer (LeakSanitizer included) for
# test_binary_leaks: the engine is the tests' shlo_asan; the server's and
# the protocol's sources are compiled again here with the same flags.
pkg_check_modules(ASAN_LIBUV REQUIRED IMPORTED_TARGET libuv)
pkg_check_modules(ASAN_MHD REQUIRED IMPORTED_TARGET libmicrohttpd)
find_package(OpenSSL REQUIRED)
file(GLOB shlo_asan_server_sources CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/server/src/*.c)
# the web console's generated asset table (server/CMakeLists.txt)
set_source_files_properties(${SHLO_CONSOLE_ASSETS_C} PROPERTIES GENERATED TRUE)
add_executable(shlo-server-asan ${shlo_asan_server_sources}
  ${SHLO_CONSOLE_ASSETS_C}
  ${CMAKE_SOURCE_DIR}/protocol/src/protocol.c
  ${CMAKE_SOURCE_DIR}/protocol/src/b64.c
  ${CMAKE_SOURCE_DIR}/protocol/src/json_write.c
  ${CMAKE_SOURCE_DIR}/protocol/src/json_read.c
  ${CMAKE_SOURCE_DIR}/protocol/src/binproto.c)
add_dependencies(shlo-server-asan shlo_console_assets)
target_include_directories(shlo-server-asan PRIVATE
  ${CMAKE_SOURCE_DIR}/server/src ${CMAKE_SOURCE_DIR}/protocol/include
  ${CMAKE_SOURCE_DIR}/protocol/src ${CMAKE_SOURCE_DIR}/engine/src)
target_link_libraries(shlo-server-asan PRIVATE shlo_asan PkgConfig::ASAN_LIBUV
  PkgConfig::ASAN_MHD PkgConfig::CJSON OpenSSL::Crypto Threads::Threads m)

# The hostile frames and peers of test_binary_hostile, then a session that
# compiles, executes (printing too), cancels and says goodbye, against the
# sanitized server; SIGTERM must end it with status 0 and no report.
add_test(NAME test_binary_leaks
  COMMAND sh -c "if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then exec /usr/bin/python3 \"$0\" \"$1\" \"$2\"; else exec python3 \"$0\" \"$1\" \"$2\"; fi"
          ${CMAKE_SOURCE_DIR}/tests/server/binary_hostile.py
          $<TARGET_FILE:shlo-server-asan> --sanitized)
set_tests_properties(test_binary_leaks PROPERTIES TIMEOUT 300
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16")

# Issue #14's teams test against the sanitized server: every SIGTERM must
# end it with status 0 and no report.
add_test(NAME test_server_teams_asan
  COMMAND sh -c "if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then exec /usr/bin/python3 \"$0\" \"$1\" \"$2\"; else exec python3 \"$0\" \"$1\" \"$2\"; fi"
          ${CMAKE_SOURCE_DIR}/tests/server/teams.py
          $<TARGET_FILE:shlo-server-asan> --sanitized)
set_tests_properties(test_server_teams_asan PROPERTIES TIMEOUT 300
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16")

# Issue #11's inline executions against the sanitized server: the loop
# thread's path and the worker's leak nothing and read nothing stray.
add_test(NAME test_server_binary_inline_asan
  COMMAND sh -c "if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then exec /usr/bin/python3 \"$0\" \"$1\"; else exec python3 \"$0\" \"$1\"; fi"
          ${CMAKE_SOURCE_DIR}/tests/server/binary_inline.py
          $<TARGET_FILE:shlo-server-asan>)
set_tests_properties(test_server_binary_inline_asan PROPERTIES TIMEOUT 300
  RUN_SERIAL TRUE ENVIRONMENT
  "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16;SHLO_TEST_START_S=30")

# Issue #30's memory bounds against the sanitized server: shed frames and
# bodies, the paused PING flood and the refused JSON answer leak nothing.
add_test(NAME test_server_robust_memory_asan
  COMMAND sh -c "if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then exec /usr/bin/python3 \"$0\" \"$1\" \"$2\"; else exec python3 \"$0\" \"$1\" \"$2\"; fi"
          ${CMAKE_SOURCE_DIR}/tests/server/robust_memory.py
          $<TARGET_FILE:shlo-server-asan> --sanitized)
set_tests_properties(test_server_robust_memory_asan PROPERTIES TIMEOUT 300
  RUN_SERIAL TRUE ENVIRONMENT
  "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16;SHLO_TEST_START_S=30")

# The streaming executions' test against the sanitized server: suspended
# uploads and readers, cancels and idle ends leak nothing.
add_test(NAME test_stream_http_asan
  COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/server/stream_http.py
          $<TARGET_FILE:shlo-server-asan> --sanitized)
set_tests_properties(test_stream_http_asan PROPERTIES TIMEOUT 300
  SKIP_RETURN_CODE 77
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16")
# Issue #30's streaming robustness against the sanitized server: withdrawn,
# idle and timed-out executions and uploads leak nothing.
add_test(NAME test_server_robust_streams_asan
  COMMAND sh -c "if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then py=/usr/bin/python3; else py=python3; fi; exec $py \"$@\"" sh
          ${CMAKE_SOURCE_DIR}/tests/server/robust_streams.py
          $<TARGET_FILE:shlo-server-asan> --sanitized)
set_tests_properties(test_server_robust_streams_asan PROPERTIES TIMEOUT 300
  RUN_SERIAL TRUE
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16")
# The same over the binary protocol: paused INFEEDs, subscriptions,
# disconnects and hostile frames leak nothing.
add_test(NAME test_stream_binary_asan
  COMMAND sh -c "if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then exec /usr/bin/python3 \"$0\" \"$1\" \"$2\"; else exec python3 \"$0\" \"$1\" \"$2\"; fi"
          ${CMAKE_SOURCE_DIR}/tests/server/stream_binary.py
          $<TARGET_FILE:shlo-server-asan> --sanitized)
set_tests_properties(test_stream_binary_asan PROPERTIES TIMEOUT 300
  SKIP_RETURN_CODE 77
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16")
# Issue #14's store, Open Inference Protocol and HTTPS tests against the
# sanitized server: any stray read or leak there fails them.
foreach(name store_module oip_routes model_names)
  add_test(NAME test_server_${name}_asan
    COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/server/${name}.py
            $<TARGET_FILE:shlo-server-asan>)
  set_tests_properties(test_server_${name}_asan PROPERTIES TIMEOUT 300
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;SHLO_TEST_START_S=30")
endforeach()
add_test(NAME test_server_oip_models_asan
  COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/server/oip_models.py
          $<TARGET_FILE:shlo-server-asan>)
set_tests_properties(test_server_oip_models_asan PROPERTIES TIMEOUT 300
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;SHLO_TEST_START_S=30")
if(TARGET shlo-cli) # `shlo serialize` makes the artifact
  add_test(NAME test_server_model_repository_asan
    COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/server/model_repository.py
            $<TARGET_FILE:shlo-server-asan> $<TARGET_FILE:shlo-cli>)
  set_tests_properties(test_server_model_repository_asan PROPERTIES
    TIMEOUT 600
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;SHLO_TEST_START_S=30")
endif()
add_test(NAME test_server_tls_asan
  COMMAND bash ${CMAKE_SOURCE_DIR}/tests/server/tls.sh
          $<TARGET_FILE:shlo-server-asan>)
set_tests_properties(test_server_tls_asan PROPERTIES TIMEOUT 300
  SKIP_RETURN_CODE 77 ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0")

# Issue #30 item 1 against the sanitized server: a missing tokens file was
# a double free; every refused start and every reload must be clean too
# (GnuTLS's own leak on a malformed certificate is suppressed, see the file).
add_test(NAME test_server_robust_ops_asan
  COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/server/robust_ops.py
          $<TARGET_FILE:shlo-server-asan> --sanitized)
set_tests_properties(test_server_robust_ops_asan PROPERTIES TIMEOUT 600
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16;LSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/tests/server/lsan_gnutls.supp;SHLO_TEST_START_S=30")

# Issue #30's nesting 100,000 deep against the sanitized server, whose
# frames are the largest: refused naming the limit, no crash, no report.
add_test(NAME test_server_robust_depth_asan
  COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/server/robust_depth.py
          $<TARGET_FILE:shlo-server-asan>)
set_tests_properties(test_server_robust_depth_asan PROPERTIES TIMEOUT 300
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16")

# Issue #32: the JAX export cases, shape_assertion's HTTP error included,
# against the sanitized server (LAPACK scratch, the JSON tensors, the
# dynamic refinement); SIGTERM must end it with status 0 and no report.
if(TARGET shlo-cli AND TARGET shlo-client)
  add_test(NAME test_jax_export_asan
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/server/jax_export.sh
            $<TARGET_FILE:shlo-server-asan> $<TARGET_FILE:shlo-cli>
            ${SHLO_CONFORMANCE_DIR} ${CMAKE_SOURCE_DIR})
  set_tests_properties(test_jax_export_asan PROPERTIES TIMEOUT 300
    SKIP_RETURN_CODE 77 ENVIRONMENT
    "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16")
endif()

# Issue #35's request ids and traces against the sanitized server: traces
# recorded, kept, evicted and read leak nothing.
add_test(NAME test_server_observability_asan
  COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/server/observability.py
          $<TARGET_FILE:shlo-server-asan> --sanitized)
set_tests_properties(test_server_observability_asan PROPERTIES TIMEOUT 300
  ENVIRONMENT
  "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16;SHLO_TEST_START_S=30")

# Issue #34's dynamic batching against the sanitized server: stacking,
# splitting and the queues leak nothing and read nothing stray.
add_test(NAME test_server_batching_asan
  COMMAND sh -c "if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then exec /usr/bin/python3 \"$0\" \"$1\" \"$2\"; else exec python3 \"$0\" \"$1\" \"$2\"; fi"
          ${CMAKE_SOURCE_DIR}/tests/server/batching.py
          $<TARGET_FILE:shlo-server-asan> --sanitized)
set_tests_properties(test_server_batching_asan PROPERTIES TIMEOUT 300
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=16;SHLO_TEST_START_S=30")
