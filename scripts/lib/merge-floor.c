/* The floor under RA2's merge at n = 500: nanoseconds per merge of a 500-entry snapshot (values
 * and change ticks) into a receiver's values and ticks, with the loop of `Vector::merge`
 * (src/mp/algo/ra2/vector.rs), picked at random among RECEIVERS receivers and SNAPSHOTS
 * snapshots. With 4 and 4 everything stays in the first-level caches (the loop's arithmetic
 * alone); with 500 and 1 000 (8 MB) each merge streams its 8 KB from the last-level cache; with
 * 500 and 10 000 (44 MB; an n = 500 run of RA2 peaks at 48 MB) from memory.
 * Usage: merge-floor RECEIVERS SNAPSHOTS MERGES; prints the ns per merge (bench-sim.sh builds
 * and runs it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 500

static uint64_t state = 88172645463325252ull;
static uint64_t next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static uint64_t merge(uint32_t *restrict val, uint32_t *restrict at, const uint32_t *restrict vals,
                      const uint32_t *restrict ticks, uint32_t since, uint32_t t) {
    uint64_t added = 0;
    for (int k = 0; k < N; k++) {
        uint32_t a = val[k], b = vals[k];
        uint32_t mask = 0u - (uint32_t)((ticks[k] > since) & (b > a));
        uint32_t d = (b - a) & mask;
        val[k] = a + d;
        at[k] = (at[k] & ~mask) | (t & mask);
        added += d;
    }
    return added;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: merge-floor RECEIVERS SNAPSHOTS MERGES\n"); return 2; }
    long recv = atol(argv[1]), snaps = atol(argv[2]), merges = atol(argv[3]);
    if (recv < 1 || snaps < 1 || merges < 1) { fprintf(stderr, "merge-floor: sizes must be positive\n"); return 2; }
    uint32_t *r = aligned_alloc(64, (size_t)recv * 2 * N * 4);
    uint32_t *s = aligned_alloc(64, (size_t)snaps * 2 * N * 4);
    if (!r || !s) { perror("merge-floor"); return 1; }
    for (long i = 0; i < recv * 2 * N; i++) r[i] = next() % 1000;
    for (long i = 0; i < snaps * 2 * N; i++) s[i] = next() % 1000;
    struct timespec a, b;
    uint64_t sum = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < merges; i++) {
        uint32_t *to = r + (next() % recv) * 2 * N, *from = s + (next() % snaps) * 2 * N;
        sum += merge(to, to + N, from, from + N, 500, (uint32_t)i);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / merges;
    printf("%.1f %llu\n", ns, (unsigned long long)(sum & 1));
    return 0;
}
