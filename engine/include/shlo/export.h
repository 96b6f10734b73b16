/* SPDX-License-Identifier: Apache-2.0 */
/* SHLO_API marks the functions libshlo exports.
 *
 * The library is built with -fvisibility=hidden: a function is part of the
 * shared library's interface only when its declaration in these public
 * headers carries SHLO_API.  Everything else, internal helpers included, is
 * invisible to programs that link libshlo, so their names cannot clash. */
#ifndef SHLO_EXPORT_H
#define SHLO_EXPORT_H

#define SHLO_API __attribute__((visibility("default")))

#endif
