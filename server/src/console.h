/* SPDX-License-Identifier: Apache-2.0 */
/* The web console: static HTML, CSS and JavaScript from server/console/,
 * embedded at build time (server/embed_console.cmake writes the asset
 * table), served under /console/ on the HTTP port.  The pages talk to the
 * server's own JSON routes only; they carry no data, so serving them needs
 * no token (the pages ask for one when a route answers 401). */
#ifndef SHLO_SRV_CONSOLE_H
#define SHLO_SRV_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct srv_console_asset {
  const char *path;         /* "/console/overview.html" */
  const char *content_type;
  const unsigned char *data;
  size_t size;
  const char *etag;         /* quoted, from the file's SHA-256 */
} srv_console_asset;

/* The generated table (console_assets.c). */
extern const srv_console_asset srv_console_assets[];
extern const int srv_console_n_assets;

/* The asset a URL names ("/console" and "/console/" name the overview),
 * or NULL. */
const srv_console_asset *srv_console_find(const char *url);

/* Whether the console answers this URL: it is on (the `console` option)
 * and the URL is /console or below. */
struct srv_server;
bool srv_console_route(const struct srv_server *s, const char *url);

/* Answer a console URL on connection c, from the request's first callback:
 * GET/HEAD of an asset (304 when If-None-Match holds its ETag), 404 for a
 * name that is none, 405 for any other method.  Every answer carries the
 * Content-Security-Policy and the other headers that keep the pages from
 * running anything but their own files. */
struct MHD_Connection;
int srv_console_answer(struct MHD_Connection *c, const char *url,
                       const char *method);

#endif
