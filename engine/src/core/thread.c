/* SPDX-License-Identifier: Apache-2.0 */
#include "core/thread.h"

int shlo__thread_start(pthread_t *t, void *(*run)(void *), void *arg) {
  pthread_attr_t attr;
  int rc = pthread_attr_init(&attr);
  if (rc) return rc;
  size_t size = 0;
  rc = pthread_attr_getstacksize(&attr, &size);
  if (!rc && size < SHLO_THREAD_STACK)
    rc = pthread_attr_setstacksize(&attr, SHLO_THREAD_STACK);
  if (!rc) rc = pthread_create(t, &attr, run, arg);
  pthread_attr_destroy(&attr);
  return rc;
}
