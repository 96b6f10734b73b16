/* SPDX-License-Identifier: Apache-2.0 */
/* The console's history (docs/observability.md): a ring of per-second
 * samples of the last hour and one of per-minute samples of the last day
 * (requests, errors, execution latency, queue, per team), and the most
 * recent errors with their request ids, so that a console page opened now
 * shows the past.  GET /v1/console/history answers them: every team's to
 * an admin token, the caller's own team's to any other.  Loop thread
 * only. */
#ifndef SHLO_SRV_HISTORY_H
#define SHLO_SRV_HISTORY_H

struct srv_server;
struct srv_request;
struct srv_team;

/* Start sampling (a 1 s timer on the loop); -1 on OOM. */
int srv_history_start(struct srv_server *s);
/* Close the timer (shutdown); srv_history_free frees the rings after
 * the loop ended. */
void srv_history_stop(struct srv_server *s);
void srv_history_free(struct srv_server *s);

/* A finished request (HTTP or binary): its team (may be NULL), status
 * (0: the client went away), run time (< 0: it did not execute), and for
 * an error its request id, route, module id and error kind (-1: none). */
void srv_history_request(struct srv_server *s, const struct srv_team *team,
                         int status, double exec_s, const char *request_id,
                         const char *route, const char *module, int err_kind);

/* GET /v1/console/history?res=1s|1m&n=N: the answer set on r. */
void srv_history_answer(struct srv_request *r, const char *res,
                        const char *n);

#endif
