/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the artifact reader and writer (not built by the
 * suite):
 *   clang -g -O1 -fsanitize=fuzzer,address -Iengine/include -Itests \
 *     tests/fuzz/fuzz_artifact.c build/engine/libshlo.a -lopenblas -lm \
 *     -lpthread -o fuzz_artifact
 *   ./fuzz_artifact -max_total_time=600 CORPUS_DIR ../shared/conformance/vhlo
 * The suite runs the same harness on seeded mutations
 * (tests/test_artifact_fuzz.c). */
#include "artifact_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (artifact_fuzz_one(data, size) < -1)
    __builtin_trap(); /* the writer failed on what the reader accepted */
  return 0;
}
