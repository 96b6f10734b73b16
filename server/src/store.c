/* SPDX-License-Identifier: Apache-2.0 */
/* The module store and module names (see store.h). */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server.h"
#include "repository.h"
#include "store.h"

/* Format 2 names modules per team and version ("name TEAM VERSION TIME
 * NAME" lines); format 1 had one "name NAME" line, which reads as the
 * first team's version 1. */
#define STORE_MAGIC "shlo-module 2"
#define STORE_MAGIC_1 "shlo-module 1"
#define STORE_SUFFIX ".module"
/* Room for some thousands of teams' lines. */
#define STORE_HEADER_MAX 65536
/* A temporary file this old (seconds since its last write) is no write in
 * progress: one takes seconds at most, fsync included. */
#define STORE_TMP_STALE_S 600

void store_record_free(store_record *r) {
  free(r->entry);
  free(r->program);
  free(r->teams);
  free(r->names);
  free(r->batching);
  r->entry = r->program = NULL;
  r->teams = NULL;
  r->names = NULL;
  r->batching = NULL;
  r->n_teams = r->n_names = r->n_batching = 0;
}

bool store_record_has_team(const store_record *r, const char *team) {
  for (int i = 0; i < r->n_teams; i++)
    if (!strcmp(r->teams[i], team)) return true;
  return false;
}

int store_record_add_team(store_record *r, const char *team) {
  if (!*team || strlen(team) >= STORE_TEAM_LEN) return -1;
  if (store_record_has_team(r, team)) return 0;
  char(*g)[STORE_TEAM_LEN] =
      realloc(r->teams, (size_t)(r->n_teams + 1) * sizeof *g);
  if (!g) return -1;
  r->teams = g;
  strcpy(r->teams[r->n_teams++], team);
  return 0;
}

bool store_record_drop_team(store_record *r, const char *team) {
  for (int i = 0; i < r->n_teams; i++)
    if (!strcmp(r->teams[i], team)) {
      memmove(r->teams[i], r->teams[i + 1],
              (size_t)(r->n_teams - i - 1) * sizeof *r->teams);
      r->n_teams--;
      return true;
    }
  return false;
}

bool store_name_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= STORE_NAME_LEN) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return strcmp(s, ".") && strcmp(s, "..");
}

/* dir/<64 hex><suffix> for id "sha256:<hex>" (or bare hex); false if the
 * id is malformed. */
static bool record_path(const char *dir, const char *id, const char *suffix,
                        char *out, size_t cap) {
  uint8_t key[32];
  if (!cache_id_to_key(id, key)) return false;
  char canon[SRV_ID_LEN];
  cache_key_to_id(key, canon);
  int n = snprintf(out, cap, "%s/%s%s", dir, canon + 7, suffix);
  return n > 0 && (size_t)n < cap;
}

int store_open_dir(const char *dir, char *why, size_t cap) {
  if (mkdir(dir, 0700) && errno != EEXIST) {
    snprintf(why, cap, "cannot create %s: %s", dir, strerror(errno));
    return -1;
  }
  struct stat st;
  if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK)) {
    snprintf(why, cap, "%s is not a writable directory", dir);
    return -1;
  }
  return 0;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* One "batching" header line into out (snprintf's count; -1 when the
 * entry's name would break the line). */
static int batching_line(const store_batching *b, char *out, size_t cap) {
  char pref[SRV_BATCH_MAX_PREFERRED * 8 + 2] = "-";
  size_t k = 0;
  for (int i = 0; i < b->cfg.n_preferred; i++)
    k += (size_t)snprintf(pref + k, sizeof pref - k, "%s%d", i ? "," : "",
                          b->cfg.preferred[i]);
  if (strpbrk(b->entry, "\n\r") || !b->entry[0]) return -1;
  return snprintf(out, cap, "batching %s %d %lld %d %s %s\n", b->team,
                  b->cfg.max_batch_size,
                  (long long)b->cfg.max_queue_delay_us, b->cfg.max_queue_size,
                  pref, b->entry);
}

/* The header of r: "key value" lines (a "team" line per team), then a
 * blank line. */
static int format_header(const store_record *r, char *out, size_t cap) {
  if (r->entry && strpbrk(r->entry, "\n\r")) return -1; /* a quoted name */
  if (r->n_teams < 1) return -1;
  size_t n = 0;
  int k = snprintf(out, cap, STORE_MAGIC "\nid %s\n", r->id);
  for (int i = 0; k > 0 && (size_t)k < cap - n && i < r->n_teams; i++) {
    n += (size_t)k;
    k = snprintf(out + n, cap - n, "team %s\n", r->teams[i]);
  }
  for (int i = 0; k > 0 && (size_t)k < cap - n && i < r->n_names; i++) {
    n += (size_t)k;
    const srv_name_row *nm = &r->names[i];
    k = snprintf(out + n, cap - n, "name %s %d %lld %s\n", nm->team,
                 nm->version, (long long)nm->registered_ns, nm->name);
  }
  for (int i = 0; k > 0 && (size_t)k < cap - n && i < r->n_batching; i++) {
    n += (size_t)k;
    k = batching_line(&r->batching[i], out + n, cap - n);
  }
  if (k < 0 || (size_t)k >= cap - n) return -1;
  n += (size_t)k;
  k = snprintf(out + n, cap - n,
               "entry %s\nreplicas %d\npartitions %d\n"
               "registered %lld\nprogram-bytes %zu\n\n",
               r->entry ? r->entry : "", r->replicas, r->partitions,
               (long long)r->registered_ns, r->program_len);
  if (k < 0 || (size_t)k >= cap - n) return -1;
  return (int)(n + (size_t)k);
}

int store_write(const char *dir, const store_record *r, char *why,
                size_t cap) {
  char path[4096], tmp[4160];
  static atomic_uint seq;
  char *head = malloc(STORE_HEADER_MAX);
  if (!head) {
    snprintf(why, cap, "out of memory");
    return -1;
  }
  int hn = format_header(r, head, STORE_HEADER_MAX);
  if (hn < 0 || !record_path(dir, r->id, STORE_SUFFIX, path, sizeof path)) {
    free(head);
    snprintf(why, cap, "the record of %s does not fit the format", r->id);
    return -1;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp-%d-%u", path, (int)getpid(),
           atomic_fetch_add(&seq, 1));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    free(head);
    snprintf(why, cap, "cannot create %s: %s", tmp, strerror(errno));
    return -1;
  }
  /* the data reaches the disk before the name does: a crash leaves the
   * old record or the new one, never a torn one under the final name */
  bool ok = !write_all(fd, head, (size_t)hn) &&
            !write_all(fd, r->program, r->program_len) && !fsync(fd);
  int err = errno;
  free(head);
  ok = !close(fd) && ok;
  if (ok && rename(tmp, path)) err = errno, ok = false;
  if (!ok) {
    unlink(tmp);
    snprintf(why, cap, "cannot write %s: %s", path, strerror(err));
    return -1;
  }
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) { /* make the rename itself durable */
    fsync(dfd);
    close(dfd);
  }
  return 0;
}

/* A format-2 name line's value, "TEAM VERSION TIME NAME", into r. */
static bool name_line(store_record *r, const char *val) {
  srv_name_row nm = {0};
  char team[STORE_TEAM_LEN], name[STORE_NAME_LEN];
  long long version, t;
  int used = 0;
  if (sscanf(val, "%63s %lld %lld %63s%n", team, &version, &t, name,
             &used) != 4 || val[used] || version < 1 || version > INT32_MAX ||
      !store_name_ok(name) || !store_name_ok(team))
    return false;
  snprintf(nm.team, sizeof nm.team, "%s", team);
  snprintf(nm.name, sizeof nm.name, "%s", name);
  snprintf(nm.id, sizeof nm.id, "%s", r->id);
  nm.version = (int)version;
  nm.registered_ns = t;
  srv_name_row *g = realloc(r->names, (size_t)(r->n_names + 1) * sizeof *g);
  if (!g) return false;
  r->names = g;
  r->names[r->n_names++] = nm;
  return true;
}

/* The preferred sizes of a batching line ("-", or ascending sizes of at
 * most max joined by ','); false when malformed. */
static bool preferred_sizes(const char *p, srv_batch_cfg *c) {
  c->n_preferred = 0;
  if (!strcmp(p, "-")) return true;
  for (;;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 1 || v > c->max_batch_size ||
        c->n_preferred == SRV_BATCH_MAX_PREFERRED ||
        (c->n_preferred && v < c->preferred[c->n_preferred - 1]))
      return false;
    c->preferred[c->n_preferred++] = (int)v;
    if (!*end) return true;
    if (*end != ',') return false;
    p = end + 1;
  }
}

/* A "batching" line's value into r, within the bounds a registration's
 * "batching" has (batch.c); false for anything else. */
static bool batching_field(store_record *r, const char *val) {
  store_batching b = {0};
  char team[STORE_TEAM_LEN], pref[128];
  long long delay;
  int used = 0;
  if (sscanf(val, "%63s %d %lld %d %127s %n", team, &b.cfg.max_batch_size,
             &delay, &b.cfg.max_queue_size, pref, &used) != 5 || !used ||
      !store_name_ok(team) || b.cfg.max_batch_size < 1 ||
      b.cfg.max_batch_size > SRV_BATCH_MAX_SIZE || delay < 0 ||
      delay > SRV_BATCH_MAX_DELAY_US || b.cfg.max_queue_size < 0 ||
      b.cfg.max_queue_size > (1 << 20) || !preferred_sizes(pref, &b.cfg) ||
      !val[used] || strlen(val + used) >= SRV_BATCH_FN_LEN)
    return false;
  b.cfg.max_queue_delay_us = delay;
  snprintf(b.team, sizeof b.team, "%s", team);
  snprintf(b.entry, sizeof b.entry, "%s", val + used);
  store_batching *g = realloc(r->batching,
                              (size_t)(r->n_batching + 1) * sizeof *g);
  if (!g) return false;
  r->batching = g;
  r->batching[r->n_batching++] = b;
  return true;
}

/* One "key value" header line into r (a format-1 name into legacy); false
 * for anything unexpected. */
static bool header_field(store_record *r, const char *key, const char *val,
                         size_t *program_len, int *seen, int format,
                         char legacy[STORE_NAME_LEN]) {
  char *end;
  if (!strcmp(key, "id") && strlen(val) < SRV_ID_LEN) {
    strcpy(r->id, val);
    *seen |= 1;
  } else if (!strcmp(key, "team")) { /* one line per team */
    if (store_record_add_team(r, val)) return false;
  } else if (!strcmp(key, "name") && format == 1 &&
             strlen(val) < STORE_NAME_LEN) {
    if (*val && !store_name_ok(val)) return false;
    strcpy(legacy, val);
  } else if (!strcmp(key, "name") && format == 2) {
    if (!(*seen & 1) || !name_line(r, val)) return false; /* id first */
  } else if (!strcmp(key, "batching") && format == 2) {
    if (!batching_field(r, val)) return false;
  } else if (!strcmp(key, "entry")) {
    free(r->entry);
    r->entry = *val ? strdup(val) : NULL;
    if (*val && !r->entry) return false;
  } else if (!strcmp(key, "replicas") || !strcmp(key, "partitions")) {
    long v = strtol(val, &end, 10);
    if (*end || end == val || v < 0 || v > 4096) return false;
    *(key[0] == 'r' ? &r->replicas : &r->partitions) = (int)v;
  } else if (!strcmp(key, "registered")) {
    r->registered_ns = strtoll(val, &end, 10);
    if (*end || end == val) return false;
  } else if (!strcmp(key, "program-bytes")) {
    unsigned long long v = strtoull(val, &end, 10);
    if (*end || end == val || val[0] == '-') return false;
    *program_len = (size_t)v;
    *seen |= 2;
  } else {
    return false;
  }
  return true;
}

/* Parse the header in buf (n bytes read); *body is where the program
 * starts.  false with why set when malformed. */
static bool parse_header(char *buf, size_t n, store_record *r,
                         size_t *program_len, size_t *body, char *why,
                         size_t cap) {
  char *stop = memmem(buf, n, "\n\n", 2);
  size_t ml = strlen(STORE_MAGIC);
  int format = n < ml + 1                                   ? 0
               : !memcmp(buf, STORE_MAGIC "\n", ml + 1)   ? 2
               : !memcmp(buf, STORE_MAGIC_1 "\n", ml + 1) ? 1
                                                           : 0;
  if (!stop || !format) {
    snprintf(why, cap, "no " STORE_MAGIC " (or 1) header");
    return false;
  }
  char legacy[STORE_NAME_LEN] = "";
  *stop = 0;
  *body = (size_t)(stop - buf) + 2;
  int seen = 0;
  for (char *line = buf + ml + 1, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    char *sp = strchr(line, ' ');
    if (!sp || !(*sp = 0, header_field(r, line, sp + 1, program_len, &seen,
                                       format, legacy))) {
      snprintf(why, cap, "bad header line \"%.40s\"", line);
      return false;
    }
  }
  if (seen != 3) {
    snprintf(why, cap, "the header lacks id or program-bytes");
    return false;
  }
  if (legacy[0] && r->n_teams > 0) { /* the first team's version 1 */
    char line[3 * STORE_NAME_LEN];
    snprintf(line, sizeof line, "%s 1 %lld %s", r->teams[0],
             (long long)r->registered_ns, legacy);
    if (!name_line(r, line)) {
      snprintf(why, cap, "out of memory");
      return false;
    }
  }
  return true;
}

/* The program that follows the header, and the check that its SHA-256
 * (with the grid) is the id the file is named by. */
static int read_program(int fd, store_record *r, const char *buf, size_t got,
                        size_t body, size_t want, const char *id, char *why,
                        size_t cap) {
  r->program = malloc(want + 1);
  if (!r->program) {
    snprintf(why, cap, "out of memory for %zu bytes", want);
    return -1;
  }
  size_t have = got - body < want ? got - body : want;
  memcpy(r->program, buf + body, have);
  while (have < want) {
    ssize_t k = read(fd, r->program + have, want - have);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    have += (size_t)k;
  }
  char extra;
  if (have != want || read(fd, &extra, 1) != 0) {
    snprintf(why, cap, "the program is %s than its header's %zu bytes",
             have != want ? "shorter" : "longer", want);
    return -1;
  }
  r->program[want] = 0;
  r->program_len = want;
  uint8_t key[32], named[32];
  cache_key(r->program, want, r->replicas, r->partitions, key);
  if (!cache_id_to_key(id, named) || memcmp(key, named, 32)) {
    snprintf(why, cap, "the program does not hash to its id");
    return -1;
  }
  return 0;
}

int store_read(const char *dir, const char *id, bool header_only,
               store_record *out, char *why, size_t cap) {
  memset(out, 0, sizeof *out);
  char path[4096];
  if (!record_path(dir, id, STORE_SUFFIX, path, sizeof path)) {
    snprintf(why, cap, "malformed id");
    return -1;
  }
  /* O_NONBLOCK: a FIFO under a record's name must not hang the reader
   * (regular files ignore the flag) */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    snprintf(why, cap, "%s", strerror(errno));
    return errno == ENOENT ? 1 : -1;
  }
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
    close(fd);
    snprintf(why, cap, "not a regular file");
    return -1;
  }
  char *buf = malloc(STORE_HEADER_MAX);
  if (!buf) {
    close(fd);
    snprintf(why, cap, "out of memory");
    return -1;
  }
  size_t got = 0;
  while (got < STORE_HEADER_MAX - 1) {
    ssize_t k = read(fd, buf + got, STORE_HEADER_MAX - 1 - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (size_t)k;
  }
  buf[got] = 0;
  size_t want = 0, body = 0;
  int rc = 0;
  if (!parse_header(buf, got, out, &want, &body, why, cap)) rc = -1;
  else if (strlen(out->id) != SRV_ID_LEN - 1 ||
           strncmp(out->id, "sha256:", 7) ||
           strncmp(out->id + 7, strrchr(path, '/') + 1, 64))
    rc = -1, snprintf(why, cap, "the header's id is not the file's name");
  else if (fstat(fd, &st) || (uint64_t)st.st_size != body + want)
    rc = -1, snprintf(why, cap, "%lld bytes, the header says %zu",
                      (long long)st.st_size, body + want);
  else if (!header_only)
    rc = read_program(fd, out, buf, got, body, want, id, why, cap);
  close(fd);
  free(buf);
  if (rc) store_record_free(out);
  return rc;
}

int store_remove(const char *dir, const char *id) {
  char path[4096];
  if (!record_path(dir, id, STORE_SUFFIX, path, sizeof path)) return -1;
  return unlink(path) && errno != ENOENT ? -1 : 0;
}

/* ---- the server's store ---- */

static bool store_on(const srv_server *s) { return s->cfg.store[0] != 0; }

static int64_t wall_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void store_log(srv_server *s, const char *what, const char *file,
                      const char *why) {
  char when[48];
  srv_log_time(when);
  fprintf(stderr, "time=%s event=store_%s file=%s reason=\"%s\"\n", when,
          what, file, why);
  if (s->log && s->log != stderr)
    fprintf(s->log, "time=%s event=store_%s file=%s reason=\"%s\"\n", when,
            what, file, why);
}

/* Parse a record's program into a new unlinked cache entry. */
static cache_entry *entry_of_record(srv_server *s, const store_record *rec,
                                    char *why, size_t cap) {
  bool cached;
  double ms = 0;
  shlo_proto_error err;
  cache_entry *e = srv_module_get(s, rec->program, rec->program_len,
                                  rec->replicas, rec->partitions, NULL,
                                  &cached, &ms, &err);
  if (!e) {
    snprintf(why, cap, "%s: %s", shlo_proto_err_name(err.kind), err.message);
    return NULL;
  }
  if (!cached) e->cost_ms = ms; /* its parse; compiles add to it */
  if (!cached && rec->entry && cache_entry_set_entry(e, rec->entry)) {
    cache_release(&s->cache, e);
    snprintf(why, cap, "out of memory");
    return NULL;
  }
  if (cached) return e;
  bool too_big;
  return cache_insert(&s->cache, e, &too_big); /* too big: lives unlinked */
}

/* The names rec's header gives its module, into the server's table. */
static void record_names(srv_server *s, const store_record *rec) {
  for (int i = 0; i < rec->n_names; i++) {
    const srv_name_row *nm = &rec->names[i];
    if (store_record_has_team(rec, nm->team))
      srv_names_put(&s->names, nm->team, nm->name, nm->version, rec->id,
                    nm->registered_ns);
  }
}

/* The batching rec's header gives its teams, into the batcher. */
static void record_batching(srv_server *s, const store_record *rec) {
  for (int i = 0; i < rec->n_batching; i++) {
    const store_batching *b = &rec->batching[i];
    if (store_record_has_team(rec, b->team) &&
        srv_batch_configure(s->batcher, b->team, rec->id, b->entry, &b->cfg))
      store_log(s, "unbatched", rec->id + 7, "out of memory");
  }
}

/* Load one file of the directory into the cache; false when skipped. */
static bool load_file(srv_server *s, const char *file) {
  char id[SRV_ID_LEN], why[1400];
  size_t n = strlen(file), sl = strlen(STORE_SUFFIX);
  if (n != 64 + sl || strcmp(file + 64, STORE_SUFFIX)) {
    store_log(s, "skipped", file, "not a module file");
    return false;
  }
  snprintf(id, sizeof id, "sha256:%.64s", file);
  store_record rec;
  int rc = store_read(s->cfg.store, id, false, &rec, why, sizeof why);
  if (rc) {
    store_log(s, "skipped", file, why);
    return false;
  }
  cache_entry *e = entry_of_record(s, &rec, why, sizeof why);
  /* the module is each of its teams' again (teams persist across
   * reloads) */
  for (int i = 0; e && i < rec.n_teams; i++) {
    srv_team *team = srv_team_get(&s->teams, rec.teams[i]);
    if (team) cache_adopt(&s->cache, e, team, false);
  }
  if (!e) {
    store_log(s, "skipped", file, why);
  } else {
    record_names(s, &rec);
    record_batching(s, &rec);
  }
  cache_release(&s->cache, e);
  store_record_free(&rec);
  return e != NULL;
}

/* A temporary file left by a write that a crash cut short: removed when
 * untouched for STORE_TMP_STALE_S (a younger one may be another server's
 * write in progress on the same directory).  True when removed. */
static bool remove_stale_tmp(srv_server *s, int dfd, const char *file) {
  struct stat st;
  if (fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
    return false;
  if (time(NULL) - st.st_mtime < STORE_TMP_STALE_S) return false;
  if (unlinkat(dfd, file, 0)) {
    store_log(s, "remove_failed", file, strerror(errno));
    return false;
  }
  store_log(s, "removed", file, "a temporary file a crash left");
  return true;
}

int srv_store_start(srv_server *s) {
  srv_names_init(&s->names);
  if (!store_on(s)) return 0;
  char why[512];
  if (store_open_dir(s->cfg.store, why, sizeof why)) {
    fprintf(stderr, "shlo-server: --store: %s\n", why);
    return -1;
  }
  DIR *d = opendir(s->cfg.store);
  if (!d) {
    fprintf(stderr, "shlo-server: --store %s: %s\n", s->cfg.store,
            strerror(errno));
    return -1;
  }
  int loaded = 0, skipped = 0, removed = 0;
  for (struct dirent *de; (de = readdir(d));) {
    /* a temporary name is a write in progress (here or in another
     * server) or one a crash cut short: never a record */
    if (strstr(de->d_name, ".tmp-")) {
      removed += remove_stale_tmp(s, dirfd(d), de->d_name);
      continue;
    }
    if (de->d_name[0] == '.') continue;
    if (load_file(s, de->d_name)) loaded++;
    else skipped++;
  }
  closedir(d);
  fprintf(stderr, "shlo-server: store %s: %d module(s) loaded, %d skipped, "
                  "%d stale temporary file(s) removed\n",
          s->cfg.store, loaded, skipped, removed);
  return 0;
}

void srv_store_stop(srv_server *s) { srv_names_free(&s->names); }

/* Records are read, changed and written again under this lock (two teams
 * registering one module at once must both end up in its record). */
static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;

/* Write e's record with teams (taken over) and every team's names of it
 * (the table's), as written at t.  -1 with why set. */
static int write_record(srv_server *s, cache_entry *e, store_record *teams,
                        int64_t t, char *why, size_t cap) {
  /* the grid as the id has it: none when the id is the text's hash
   * alone, even for a module whose own attributes name a grid */
  uint8_t plain[32];
  cache_key(e->text, e->text_len, 0, 0, plain);
  bool gridless = !memcmp(plain, e->key, 32);
  store_record rec = {.teams = teams->teams, .n_teams = teams->n_teams,
                      .entry = e->entry,
                      .replicas = gridless ? 0 : e->replicas,
                      .partitions = gridless ? 0 : e->partitions,
                      .registered_ns = t, .program = e->text,
                      .program_len = e->text_len};
  memcpy(rec.id, e->id, SRV_ID_LEN);
  int n = srv_names_of(&s->names, NULL, e->id, NULL, 0);
  if (n > 0 && !(rec.names = malloc((size_t)n * sizeof *rec.names))) {
    snprintf(why, cap, "out of memory");
    return -1;
  }
  rec.n_names = n > 0 ? srv_names_of(&s->names, NULL, e->id, rec.names, n)
                      : 0;
  if (rec.n_names > n) rec.n_names = n; /* named meanwhile: next write */
  /* only the teams of the record may name it */
  for (int i = 0; i < rec.n_names; i++)
    if (!store_record_has_team(&rec, rec.names[i].team))
      rec.names[i--] = rec.names[--rec.n_names];
  /* each team's batching of it, as the batcher has it now */
  if (!(rec.batching = calloc((size_t)rec.n_teams, sizeof *rec.batching))) {
    free(rec.names);
    snprintf(why, cap, "out of memory");
    return -1;
  }
  for (int i = 0; i < rec.n_teams; i++) {
    store_batching *b = &rec.batching[rec.n_batching];
    snprintf(b->team, sizeof b->team, "%s", rec.teams[i]);
    if (srv_batch_cfg_get(s->batcher, b->team, e->id, &b->cfg, b->entry))
      rec.n_batching++;
  }
  int rc = store_write(s->cfg.store, &rec, why, cap);
  free(rec.names);
  free(rec.batching);
  return rc;
}

int srv_store_registered(srv_server *s, cache_entry *e, const char *team,
                         const char *name, bool batching_set, int *version,
                         char *why, size_t cap) {
  int64_t now = wall_ns();
  char had[SRV_ID_LEN] = "";
  int old_version = 0;
  if (name && srv_names_find(&s->names, team, name, 0, had, &old_version) &&
      strcmp(had, e->id))
    old_version = 0; /* the latest names another module */
  if (name) {
    *version = srv_names_put(&s->names, team, name, 0, e->id, now);
    if (*version < 0) {
      snprintf(why, cap, "out of memory");
      return -1;
    }
  }
  bool renamed = name && *version != old_version;
  if (!store_on(s)) return 0;
  pthread_mutex_lock(&record_lock);
  store_record old;
  int rc = store_read(s->cfg.store, e->id, true, &old, why, cap);
  if (rc != 0) memset(&old, 0, sizeof old); /* none, or one not to trust */
  bool held = store_record_has_team(&old, team);
  /* a module already stored is written again only for a new version of
   * a name or a new team */
  int wrc = 0;
  if (rc != 0 || renamed || !held || batching_set) {
    int64_t t = rc != 0 || renamed ? now : old.registered_ns;
    if (store_record_add_team(&old, team)) {
      snprintf(why, cap, "team %s does not fit a record", team);
      wrc = -1;
    } else {
      wrc = write_record(s, e, &old, t, why, cap);
    }
  }
  store_record_free(&old);
  pthread_mutex_unlock(&record_lock);
  return wrc;
}

cache_entry *srv_module_by_id(srv_server *s, const uint8_t key[32],
                              const void *owner, bool count_stats) {
  cache_entry *e = cache_get_for(&s->cache, key, owner, count_stats);
  if (e || !store_on(s)) return e;
  char id[SRV_ID_LEN], why[1400];
  cache_key_to_id(key, id);
  store_record rec;
  int rc = store_read(s->cfg.store, id, false, &rec, why, sizeof why);
  if (rc) {
    if (rc < 0) store_log(s, "skipped", id + 7, why);
    return NULL;
  }
  /* a record that does not list owner's team is as absent as none */
  if (owner && !store_record_has_team(&rec, ((const srv_team *)owner)->name)) {
    store_record_free(&rec);
    return NULL;
  }
  e = entry_of_record(s, &rec, why, sizeof why);
  if (e && owner) cache_adopt(&s->cache, e, owner, true);
  if (!e) {
    store_log(s, "skipped", id + 7, why);
  } else {
    record_names(s, &rec);
    record_batching(s, &rec);
  }
  store_record_free(&rec);
  return e;
}

/* Another server may have named a module (or made a version) since this
 * one started: the records of the directory that give team's name that
 * version (0: the highest one), into the table; false when none does. */
static bool name_in_store(srv_server *s, const char *team, const char *name,
                          int version) {
  DIR *d = opendir(s->cfg.store);
  if (!d) return false;
  bool found = false;
  size_t sl = strlen(STORE_SUFFIX);
  for (struct dirent *de; (de = readdir(d));) {
    size_t n = strlen(de->d_name);
    if (n != 64 + sl || strcmp(de->d_name + 64, STORE_SUFFIX)) continue;
    char fid[SRV_ID_LEN], why[256];
    snprintf(fid, sizeof fid, "sha256:%.64s", de->d_name);
    store_record rec;
    if (store_read(s->cfg.store, fid, true, &rec, why, sizeof why)) continue;
    for (int i = 0; i < rec.n_names; i++) {
      const srv_name_row *nm = &rec.names[i];
      if (strcmp(nm->team, team) || strcmp(nm->name, name) ||
          (version && nm->version != version) ||
          !store_record_has_team(&rec, team))
        continue;
      srv_names_put(&s->names, team, name, nm->version, rec.id,
                    nm->registered_ns);
      found = true;
    }
    store_record_free(&rec);
  }
  closedir(d);
  return found;
}

/* The team whose name a bare name is for the caller: its own team, or
 * for an admin the one team that has it.  NULL with why set. */
static const char *name_team(srv_server *s, const srv_team *team, bool admin,
                             const char *name, char buf[SRV_NAME_LEN],
                             char *why, size_t cap) {
  char id[SRV_ID_LEN];
  if (team && (!admin || srv_names_find(&s->names, team->name, name, 0, id,
                                        NULL)))
    return team->name;
  if (!admin) {
    snprintf(why, cap, "no model %s", name);
    return NULL;
  }
  int n = srv_names_teams(&s->names, name, buf);
  if (n == 1) return buf;
  if (n == 0) snprintf(why, cap, "no model %s in any team", name);
  else snprintf(why, cap, "%d teams have a model %s: address it as TEAM/%s",
                n, name, name);
  return NULL;
}

cache_entry *srv_module_by_name(srv_server *s, const srv_team *team,
                                bool admin, const char *name, int version,
                                int *found, char whose[SRV_NAME_LEN],
                                char *why, size_t cap) {
  char id[SRV_ID_LEN], buf[SRV_NAME_LEN];
  uint8_t key[32];
  *found = 0;
  whose[0] = 0;
  const void *owner = admin ? NULL : team;
  if (cache_id_to_key(name, key))
    return srv_module_by_id(s, key, owner, true);
  const char *slash = strchr(name, '/');
  const char *who;
  if (slash) { /* TEAM/NAME: an admin's */
    size_t tn = (size_t)(slash - name);
    if (!admin || tn >= sizeof buf) {
      snprintf(why, cap, "no model %s (only an admin addresses TEAM/NAME)",
               name);
      return NULL;
    }
    memcpy(buf, name, tn);
    buf[tn] = 0;
    who = buf;
    name = slash + 1;
  } else if (!(who = name_team(s, team, admin, name, buf, why, cap))) {
    return NULL;
  }
  if (!store_name_ok(name) || !store_name_ok(who)) {
    snprintf(why, cap, "no model %s", name);
    return NULL;
  }
  if (!srv_names_find(&s->names, who, name, version, id, found) &&
      !(store_on(s) && name_in_store(s, who, name, version) &&
        srv_names_find(&s->names, who, name, version, id, found))) {
    if (version) snprintf(why, cap, "model %s has no version %d", name,
                          version);
    else snprintf(why, cap, "no model %s", name);
    return NULL;
  }
  if (!cache_id_to_key(id, key)) return NULL;
  snprintf(whose, SRV_NAME_LEN, "%s", who);
  cache_entry *e = srv_module_by_id(s, key, owner, true);
  if (!e) e = srv_repository_entry(s, id); /* evicted: the repository's */
  if (!e) snprintf(why, cap, "model %s version %d is no longer stored", name,
                   *found);
  return e;
}

/* The record's part of a DELETE (record_lock held): owner's team leaves
 * it (NULL: every team); true when a team is left in it. */
static bool record_deleted(srv_server *s, cache_entry *e, const srv_team *owner) {
  store_record rec;
  char why[1400];
  int rc = store_read(s->cfg.store, e->id, true, &rec, why, sizeof why);
  if (rc) return false; /* none (or corrupt: never trusted, kept as is) */
  bool dropped = owner && store_record_drop_team(&rec, owner->name);
  bool left = owner && rec.n_teams > 0;
  if (!left) {
    if (store_remove(s->cfg.store, e->id))
      store_log(s, "remove_failed", e->id + 7, strerror(errno));
  } else if (dropped &&
             write_record(s, e, &rec, rec.registered_ns, why, sizeof why)) {
    store_log(s, "write_failed", e->id + 7, why);
  }
  store_record_free(&rec);
  return left;
}

void srv_store_deleted(srv_server *s, cache_entry *e, const void *owner) {
  /* the deleting team's names of it go (an admin's delete: every team's);
   * the other teams keep theirs */
  srv_names_drop(&s->names, owner ? ((const srv_team *)owner)->name : NULL,
                 e->id);
  /* and so does its batching: registered again, it starts unbatched */
  srv_batch_cfg off = {0};
  for (const srv_team *t = owner ? owner : s->teams.list; t;
       t = owner ? NULL : t->next)
    srv_batch_configure(s->batcher, t->name, e->id, "", &off);
  if (!store_on(s)) return;
  pthread_mutex_lock(&record_lock);
  record_deleted(s, e, owner);
  pthread_mutex_unlock(&record_lock);
}
