/* SPDX-License-Identifier: Apache-2.0 */
/* Serving the embedded web console (console.h).  Loop thread. */
#include <string.h>

#include "console.h"
#include "server.h"

/* Only the console's own files, no inline script or style, no frames, no
 * form posts elsewhere: a name or message that slipped into markup could
 * still run nothing. */
static const char csp[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

bool srv_console_route(const srv_server *s, const char *url) {
  return s->cfg.console && !strncmp(url, "/console", 8) &&
         (url[8] == 0 || url[8] == '/');
}

const srv_console_asset *srv_console_find(const char *url) {
  if (!strcmp(url, "/console") || !strcmp(url, "/console/"))
    url = "/console/overview.html";
  for (int i = 0; i < srv_console_n_assets; i++)
    if (!strcmp(srv_console_assets[i].path, url))
      return &srv_console_assets[i];
  return NULL;
}

static void add_guard_headers(struct MHD_Response *resp) {
  MHD_add_response_header(resp, "Content-Security-Policy", csp);
  MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(resp, "X-Frame-Options", "DENY");
  MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
  MHD_add_response_header(resp, "Cross-Origin-Opener-Policy", "same-origin");
}

/* A short text answer (404, 405). */
static int answer_text(struct MHD_Connection *c, unsigned status,
                       const char *text) {
  struct MHD_Response *resp = MHD_create_response_from_buffer(
      strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
  if (!resp) return MHD_NO;
  add_guard_headers(resp);
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "text/plain; charset=utf-8");
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  enum MHD_Result ret = MHD_queue_response(c, status, resp);
  MHD_destroy_response(resp);
  return ret;
}

/* If-None-Match holds etag: as the whole header, or one of a list. */
static bool etag_matches(const char *inm, const char *etag) {
  if (!inm) return false;
  size_t n = strlen(etag);
  for (const char *p = inm; (p = strstr(p, etag)); p += n)
    if ((p == inm || p[-1] == ' ' || p[-1] == ',') &&
        (p[n] == 0 || p[n] == ',' || p[n] == ' '))
      return true;
  return !strcmp(inm, "*");
}

int srv_console_answer(struct MHD_Connection *c, const char *url,
                       const char *method) {
  if (strcmp(method, "GET") && strcmp(method, "HEAD"))
    return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                       "the console's pages take GET and HEAD only\n");
  const srv_console_asset *a = srv_console_find(url);
  if (!a) return answer_text(c, MHD_HTTP_NOT_FOUND, "no such console page\n");
  const char *inm =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
  bool fresh = etag_matches(inm, a->etag);
  struct MHD_Response *resp = MHD_create_response_from_buffer(
      fresh ? 0 : a->size, (void *)a->data, MHD_RESPMEM_PERSISTENT);
  if (!resp) return MHD_NO;
  add_guard_headers(resp);
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
  MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, a->etag);
  /* revalidate each time: a new server binary may carry new files, and a
   * 304 costs one small round trip */
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  enum MHD_Result ret = MHD_queue_response(
      c, fresh ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, resp);
  MHD_destroy_response(resp);
  return ret;
}
