/* SPDX-License-Identifier: Apache-2.0 */
/* CHLO's broadcasting rule and the facts of its broadcasting ops, shared
 * by the verifier and the compiler (see chlo_bcast.h). */
#include <stdio.h>
#include <string.h>

#include "ops/chlo_bcast.h"

#define BC_INFO_SHLO_BCAST(inner, kinds, res) \
  {SHLO_OP_##inner, SHLO_BC_##kinds, SHLO_BC_RES_##res}
static const shlo_bcast_info infos[SHLO_OP_COUNT] = {
#define BC_ROW(e, name, c, v, fl, k, kw) [SHLO_OP_##e] = BC_INFO_##k,
    SHLO_OPS_CHLO_BROADCAST(BC_ROW)
#undef BC_ROW
};

shlo_bcast_info shlo__bcast_info(int code) {
  shlo_bcast_info none = {0, 0, 0};
  return code > 0 && code < SHLO_OP_COUNT ? infos[code] : none;
}

/* Where operand k's dims go: trailing alignment, or bd for the operand of
 * lower rank (XLA also wants bd strictly increasing and in range; CHLO's
 * own type inference does not check, shlo does). */
static int map_operand(int R, int rank, bool use_bd, const int64_t *bd,
                       int n_bd, int *map, char *msg, size_t cap) {
  if (!use_bd) {
    for (int i = 0; i < rank; i++) map[i] = R - rank + i;
    return 0;
  }
  if (n_bd != rank) {
    snprintf(msg, cap, "broadcast_dimensions has %d entries but the "
             "lower-rank operand has rank %d", n_bd, rank);
    return -1;
  }
  for (int i = 0; i < rank; i++) {
    if (bd[i] < 0 || bd[i] >= R || (i > 0 && bd[i] <= bd[i - 1])) {
      snprintf(msg, cap, "broadcast_dimensions must be increasing "
               "dimensions of the result, in [0, %d)", R);
      return -1;
    }
    map[i] = (int)bd[i];
  }
  return 0;
}

int shlo__bcast_shape(int n, const int *ranks, const int64_t *const *dims,
                      const int64_t *bd, int n_bd, int *out_rank,
                      int64_t *out_dims, int map[][SHLO_MAX_RANK], char *msg,
                      size_t cap) {
  int R = 0;
  for (int k = 0; k < n; k++) R = ranks[k] > R ? ranks[k] : R;
  bool ranks_differ = n == 2 && ranks[0] != ranks[1];
  for (int k = 0; k < n; k++) {
    bool use_bd = n_bd >= 0 && ranks_differ && ranks[k] < R;
    if (map_operand(R, ranks[k], use_bd, bd, n_bd, map[k], msg, cap))
      return -1;
  }
  for (int d = 0; d < R; d++) out_dims[d] = 1;
  bool seen_dyn[SHLO_MAX_RANK] = {0};
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < ranks[k]; i++) {
      int64_t s = dims[k][i], *o = &out_dims[map[k][i]];
      if (s < 0) {
        seen_dyn[map[k][i]] = true;
        continue;
      }
      if (s == 1) continue;
      if (*o != 1 && *o != s) {
        snprintf(msg, cap, "operand #%d's dimension %d (size %lld) does "
                 "not broadcast with size %lld of result dimension %d", k,
                 i, (long long)s, (long long)*o, map[k][i]);
        return -1;
      }
      *o = s;
    }
  }
  for (int d = 0; d < R; d++)
    if (seen_dyn[d] && out_dims[d] == 1) out_dims[d] = -1;
  *out_rank = R;
  return 0;
}
