/* SPDX-License-Identifier: Apache-2.0 */
/* The server as a service under a supervisor: readiness and stopping told
 * to systemd (Type=notify), and SIGHUP, which reloads what can change
 * without a restart.  Loop thread only.
 *
 * sd_notify is written here rather than linked from libsystemd: the
 * protocol is one datagram of `KEY=VALUE` lines to the AF_UNIX socket named
 * by $NOTIFY_SOCKET (a leading '@' names an abstract socket), and writing
 * it keeps libsystemd out of the build and out of the container image,
 * where no systemd runs. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "repository.h"
#include "server.h"

int srv_service_notify(const char *state) {
  const char *path = getenv("NOTIFY_SOCKET");
  if (!path || !*path) return 0; /* not under systemd: nothing to tell */
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  size_t n = strlen(path);
  if (n >= sizeof a.sun_path || (path[0] != '/' && path[0] != '@'))
    return -1;
  memcpy(a.sun_path, path, n);
  if (path[0] == '@') a.sun_path[0] = 0;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  ssize_t sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
                        (struct sockaddr *)&a,
                        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n));
  int err = errno;
  close(fd);
  if (sent < 0) {
    fprintf(stderr, "shlo-server: sd_notify to %s: %s\n", path, strerror(err));
    return -1;
  }
  return 0;
}

/* Token lists replaced by a reload.  A request in flight may still point
 * at a name in one (its log line names the token), so they are freed only
 * when the loop has stopped. */
typedef struct retired {
  srv_token *tokens;
  int n;
  struct retired *next;
} retired;

static uv_signal_t sig_hup;
static retired *graveyard;

/* Read the tokens file again; on any error keep the tokens in force (a
 * half-edited file must not open the server or lock everyone out). */
static void reload_tokens(srv_server *s) {
  if (!s->cfg.tokens_file[0]) return;
  retired *old = malloc(sizeof *old);
  if (!old) return;
  old->tokens = s->tokens;
  old->n = s->n_tokens;
  s->tokens = NULL;
  s->n_tokens = 0;
  if (srv_auth_load(s, s->cfg.tokens_file)) {
    srv_auth_free(s);
    s->tokens = old->tokens;
    s->n_tokens = old->n;
    free(old);
    fprintf(stderr, "shlo-server: reload: kept the %d token(s) in force\n",
            s->n_tokens);
    return;
  }
  old->next = graveyard;
  graveyard = old;
  fprintf(stderr, "shlo-server: reload: %d bearer token(s) from %s\n",
          s->n_tokens, s->cfg.tokens_file);
}

/* Open the log the configuration names now (a file is reopened, after
 * logrotate moved it); keep the old one on error. */
static void reopen_log(srv_server *s) {
  FILE *f = NULL;
  if (!strcmp(s->cfg.log, "stderr")) f = stderr;
  else if (strcmp(s->cfg.log, "off") && !(f = fopen(s->cfg.log, "a"))) {
    fprintf(stderr, "shlo-server: reload: cannot reopen log %s: %s\n",
            s->cfg.log, strerror(errno));
    return;
  }
  if (f && f != stderr) setvbuf(f, NULL, _IOLBF, 0);
  if (s->log && s->log != stderr) fclose(s->log);
  s->log = f;
}

/* Load the configuration again from the same flags, environment and file,
 * and apply what may change while serving: limits, caps, deadlines, the
 * tokens file, the log.  A file with errors changes nothing. */
static bool reload_config(srv_server *s) {
  srv_config next;
  srv_config_defaults(&next);
  int rc = srv_config_load(&next, s->argc, s->argv);
  if (rc == 0) {
    int n = srv_config_reload(&s->cfg, &next, stderr);
    fprintf(stderr, "shlo-server: reload: %d option(s) changed\n", n);
    s->pool.max_queue = (int)s->cfg.max_queue;
    pool_set_short_reserved(&s->pool, (int)s->cfg.short_lane_workers);
  } else {
    fprintf(stderr, "shlo-server: reload: the configuration has errors; "
                    "kept the one in force\n");
  }
  srv_config_free(&next);
  return rc == 0;
}

/* SIGHUP: reload the configuration and the tokens file, reopen the log.
 * Requests in flight keep running; what changed applies to what comes. */
static void on_hup(uv_signal_t *h, int signum) {
  (void)signum;
  srv_server *s = h->data;
  if (s->draining) return;
  srv_service_notify("RELOADING=1");
  bool ok = s->argv ? reload_config(s) : true;
  reload_tokens(s);
  /* new quotas, teams and shares apply to what comes; on OOM the old
   * quotas stay */
  if (srv_quota_setup(s))
    fprintf(stderr, "shlo-server: reload: out of memory for the teams\n");
  srv_repository_reload(s); /* on its own thread: loads may compile */
  reopen_log(s);
  if (srv_audit_open(s))
    fprintf(stderr, "shlo-server: reload: kept the audit log open\n");
  if (ok) s->metrics.reloads++;
  else s->metrics.reload_failures++;
  srv_service_notify("READY=1\nSTATUS=reloaded");
}

void srv_service_start(srv_server *s) {
  uv_signal_init(s->loop, &sig_hup);
  sig_hup.data = s;
  uv_signal_start(&sig_hup, on_hup, SIGHUP);
  /* SIGHUP alone must not keep the loop running once HTTP has stopped. */
  uv_unref((uv_handle_t *)&sig_hup);
}

void srv_service_stop(srv_server *s) {
  (void)s;
  if (sig_hup.loop && !uv_is_closing((uv_handle_t *)&sig_hup)) {
    uv_close((uv_handle_t *)&sig_hup, NULL);
    uv_run(sig_hup.loop, UV_RUN_NOWAIT); /* its close callback */
  }
  while (graveyard) {
    retired *r = graveyard;
    graveyard = r->next;
    for (int i = 0; i < r->n; i++) {
      free(r->tokens[i].name);
      free(r->tokens[i].token);
    }
    free(r->tokens);
    free(r);
  }
}
