/* SPDX-License-Identifier: Apache-2.0 */
/* The library's own version, for programs that link libshlo.so and want to
 * know which one they got (shlo/version.h holds the one they were built
 * against). */
#include "shlo/version.h"

const char *shlo_version(void) { return SHLO_VERSION_STRING; }
