/* SPDX-License-Identifier: Apache-2.0 */
/* Diagnostics that name the op (or function) they are about. */
#ifndef SHLO_CORE_DIAG_H
#define SHLO_CORE_DIAG_H

#include <stdarg.h>

#include "shlo/status.h"

/* Set d to "<name>: <fmt ...>" at line:col of file; returns code.  The
 * compiler's and the refiner's failures share this one spelling. */
shlo_status shlo__diag_vset_named(shlo_diag *d, shlo_status code,
                                  const char *file, int line, int col,
                                  const char *name, const char *fmt,
                                  va_list ap);

#endif
