/* SPDX-License-Identifier: Apache-2.0 */
/* Span nodes of shlo_proto_json_parse's trees (json_read.c): the value of
 * a "data" member that is an array, or of a "b64" member that is a string
 * without escapes, is left in the text as checked JSON instead of being
 * built; the node points into the text, which must outlive the tree. */
#ifndef SHLO_PROTO_JSON_READ_H
#define SHLO_PROTO_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* Whether j is a span node. */
bool shlo__json_is_span(const cJSON *j);
/* A span's text and length: the array with its brackets, or the b64
 * string without its quotes. */
const char *shlo__json_span(const cJSON *j, size_t *len);
/* Past the JSON value at p (leading white space skipped), or NULL when it
 * is malformed or runs past end. */
const char *shlo__json_skip_value(const char *p, const char *end);
/* Whether the number token s[0..n) (integral: no fraction or exponent;
 * digits: its integer digits) is an integer beyond 2^53, which a double
 * may round. */
bool shlo__json_big_integer(const char *s, size_t n, bool integral,
                            size_t digits);

#endif
