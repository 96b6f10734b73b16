/* SPDX-License-Identifier: Apache-2.0 */
/* A model repository's config.pbtxt (Triton's model configuration in
 * protobuf's text format), read as the JSON object config.json would be.
 *
 * The subset read: fields `key: value` and `key { ... }` (or `key: {`,
 * `<...>`), lists `key: [a, b]` (of scalars or messages), strings in
 * double or single quotes (with backslash escapes of one character),
 * numbers, identifiers (enum values such as TYPE_FP32; true and false are
 * booleans), `#` comments, and `,` or `;` after a field.  Not read:
 * extensions (`[...]` keys), `Any` messages, adjacent strings, octal and
 * hex escapes: each is an error with its line, never a guess.
 *
 * Repeated fields: a field given more than once, or one that Triton's
 * schema repeats (input, output, dims, model_warmup,
 * preferred_batch_size, versions, instance_group), is a JSON list; a map
 * (model_warmup's inputs, parameters: entries `{key: K value: {...}}`) is
 * a JSON object.  Nesting deeper than 32 levels is refused. */
#ifndef SHLO_SRV_PBTXT_H
#define SHLO_SRV_PBTXT_H

#include <stddef.h>

struct cJSON;

/* text (len bytes, no NUL needed) as a JSON object; NULL with why set
 * ("config.pbtxt:LINE: ...") when it is not the subset above or memory
 * runs out.  The caller owns the result (cJSON_Delete). */
struct cJSON *srv_pbtxt_parse(const char *text, size_t len, char *why,
                              size_t cap);

#endif
