/* SPDX-License-Identifier: Apache-2.0 */
/* A main for the fuzz targets outside libFuzzer: runs
 * LLVMFuzzerTestOneInput once on each file named (a folder: on each file
 * in it).  The default build links every target with it, so the harnesses
 * compile whenever the code they drive changes, and the sanitizer build's
 * suite replays their seed corpora (fuzz/replay.sh). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0, got;
  do {
    if (len == cap) {
      cap = cap ? 2 * cap : 65536;
      uint8_t *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
      }
      buf = nb;
    }
    got = fread(buf + len, 1, cap - len, f);
    len += got;
  } while (got > 0);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    fprintf(stderr, "%s: read error\n", path);
    free(buf);
    return -1;
  }
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  return 0;
}

/* Replays path (a file, or each regular file of a folder); returns the
 * count replayed, -1 on an unreadable path. */
static long replay_path(const char *path) {
  struct stat st;
  if (stat(path, &st)) {
    perror(path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) return replay_file(path) ? -1 : 1;
  DIR *d = opendir(path);
  if (!d) {
    perror(path);
    return -1;
  }
  long n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", path, e->d_name);
    if (replay_file(full)) {
      n = -1;
      break;
    }
    n++;
  }
  closedir(d);
  return n;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE|FOLDER...\n", argv[0]);
    return 2;
  }
  long total = 0;
  for (int i = 1; i < argc; i++) {
    long n = replay_path(argv[i]);
    if (n < 0) return 1;
    total += n;
  }
  printf("%s: %ld inputs replayed\n", argv[0], total);
  return 0;
}
