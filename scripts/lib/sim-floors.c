/* The floors under the simulator's two n = 500 points (Fig. 6(f)): the work each delivery
 * cannot skip, with nothing of the simulator around it. scripts/bench-sim.sh builds and runs it.
 *
 * sim-floors merge RECEIVERS SNAPSHOTS MERGES: RA2. Nanoseconds per merge of a 500-entry
 * snapshot into a receiver's values as a message in order is merged (src/mp/algo/ra2/vector.rs:
 * the snapshot's values without their ticks), reduced to what no such merge can skip: one pass
 * comparing the two runs of values, and the entries raised written (the receiver already holds
 * nearly every entry: one entry of each snapshot is above its receivers', raised at its first
 * merge). The simulator's loop compares runs of 16 and writes those with a raise; in C that
 * loop is slower than this one. Receivers and snapshots are picked at random among RECEIVERS
 * and SNAPSHOTS, each laid out as in the simulator while the values fit in 16 bits: a
 * receiver's 16-bit values and, apart, its 32-bit ticks; a snapshot's values, then its ticks
 * as 16-bit halves. With 4 and 4 everything stays in the first-level caches; with 500 and
 * 1 000 (4.5 MB) each merge streams its 2 KB from the last-level cache; with 500 and 20 000
 * (61.5 MB; RA2 at n = 500, 30 requests, peaks at 54 MB) from memory. Prints the ns per merge.
 *
 * sim-floors copy N BROADCASTS: TokenGME. Nanoseconds per copy of the work each copy of a
 * broadcast must do when copies are delivered one by one: a broadcast from a random sender
 * draws n - 1 exponential delays (one logarithm each, as `Core::cast_times`) and writes one
 * 16-byte record (time, letter) into each receiver's inbox (as `Deferred::defer`); after each
 * broadcast two random processes read their inboxes and raise request_i[j] in their 4 KB tables
 * (as `absorb` and `on_request_msg`). Prints the ns per copy of the logarithms alone, then of
 * the whole.
 *
 * sim-floors blocks N BROADCASTS: TokenGME, as the simulator now keeps copies
 * (src/mp/sim/casts.rs): each broadcast's n - 1 delays drawn and written into a receiver-major
 * table of 64 broadcasts a block; after each broadcast a random process absorbs with
 * probability N / 850 (at n = 500 a waiting process applies its copies about every 850
 * broadcasts), reading its run of each block since its cursor, raising request_i[j] for the
 * copies due (the next block's run and the entry eight copies ahead prefetched) and keeping the
 * others pending; a process 16 blocks behind is absorbed. Prints the ns per copy. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t state = 88172645463325252ull;
static uint64_t next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}
static double unit(void) { return ((next() >> 11) + 0.5) * 0x1.0p-53; }
static double secs(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define N 500

static uint64_t merge(uint16_t *restrict val, uint32_t *restrict at, const uint16_t *restrict vals,
                      uint32_t t) {
    uint16_t any = 0;
    for (int k = 0; k < N; k++) any |= vals[k] > val[k];
    if (!any) return 0;
    uint64_t added = 0;
    for (int k = 0; k < N; k++)
        if (vals[k] > val[k]) {
            added += vals[k] - val[k];
            val[k] = vals[k];
            at[k] = t;
        }
    return added;
}

static int merges(long recv, long snaps, long count) {
    uint16_t *rv = aligned_alloc(64, (size_t)recv * N * 2);
    uint32_t *ra = aligned_alloc(64, (size_t)recv * N * 4);
    uint16_t *s = aligned_alloc(64, (size_t)snaps * 3 * N * 2);
    if (!rv || !ra || !s) { perror("sim-floors"); return 1; }
    for (long i = 0; i < recv * N; i++) rv[i] = 1000 + next() % 1000, ra[i] = next();
    for (long i = 0; i < snaps * 3 * N; i++) s[i] = next() % 1000;
    for (long i = 0; i < snaps; i++) s[i * 3 * N + next() % N] = 1u << 15;
    uint64_t sum = 0;
    double t0 = secs();
    for (long i = 0; i < count; i++) {
        long to = next() % recv;
        sum += merge(rv + to * N, ra + to * N, s + (next() % snaps) * 3 * N, (uint32_t)i);
    }
    printf("%.1f %d\n", (secs() - t0) / count * 1e9, (int)(sum & 1));
    return 0;
}

struct rec { double t; uint32_t letter, from; };
struct inbox { struct rec *r; long len, cap; };

static int copies(long n, long casts) {
    struct inbox *in = calloc(n, sizeof *in);
    uint64_t *table = calloc(n * n, sizeof *table);
    if (!in || !table) { perror("sim-floors"); return 1; }
    double now = 0, sum = 0, t0 = secs();
    for (long c = 0; c < casts; c++)
        for (long j = 0; j < n - 1; j++) sum += -10.0 * log(unit());
    double logs = secs() - t0;
    t0 = secs();
    for (long c = 0; c < casts; c++) {
        long from = next() % n;
        now += 0.01;
        for (long j = 0; j < n; j++) {
            if (j == from) continue;
            struct inbox *b = &in[j];
            if (b->len == b->cap) {
                b->cap = b->cap ? 2 * b->cap : 64;
                b->r = realloc(b->r, b->cap * sizeof *b->r);
                if (!b->r) { perror("sim-floors"); return 1; }
            }
            b->r[b->len++] = (struct rec){now - 10.0 * log(unit()), (uint32_t)c, (uint32_t)from};
        }
        for (int k = 0; k < 2; k++) {
            long p = next() % n;
            uint64_t *row = table + p * n;
            for (long i = 0; i < in[p].len; i++) {
                struct rec r = in[p].r[i];
                if (r.letter + 1 > row[r.from]) row[r.from] = r.letter + 1;
                sum += r.t;
            }
            in[p].len = 0;
        }
    }
    double all = secs() - t0, total = (double)casts * (n - 1);
    printf("%.1f %.1f %d\n", logs / total * 1e9, all / total * 1e9, sum > 0);
    return 0;
}

#define BLK 64
#define RING 64
#define LAGB 16
#define NONE 0xffffffffffffffffull

struct blk { uint64_t *times; uint32_t from[BLK], num[BLK]; };

static uint64_t applied;

/* p's copies from its cursor to `upto` (broadcasts), those delivered before `now` applied. */
static void absorb(struct blk *ring, uint32_t *table, long n, long p, long *cursor, long upto,
                   long **pend, long *npend, double now) {
    uint32_t *row = table + p * n;
    long keep = 0;
    for (long i = 0; i < npend[p]; i++) {
        long g = pend[p][i];
        struct blk *b = &ring[(g / BLK) % RING];
        double t;
        memcpy(&t, &b->times[p * BLK + g % BLK], 8);
        if (t < now) {
            if (b->num[g % BLK] > row[b->from[g % BLK]]) row[b->from[g % BLK]] = b->num[g % BLK];
            applied++;
        } else
            pend[p][keep++] = g;
    }
    npend[p] = keep;
    for (long g = cursor[p]; g < upto;) {
        struct blk *b = &ring[(g / BLK) % RING], *nb = &ring[(g / BLK + 1) % RING];
        for (int l = 0; l < BLK; l += 8) __builtin_prefetch(&nb->times[p * BLK + l]);
        long end = (g / BLK + 1) * BLK < upto ? (g / BLK + 1) * BLK : upto;
        for (; g < end; g++) {
            long k = g % BLK;
            if (k + 8 < BLK) __builtin_prefetch(&row[b->from[k + 8]]);
            uint64_t bits = b->times[p * BLK + k];
            if (bits == NONE) continue;
            double t;
            memcpy(&t, &bits, 8);
            if (t < now) {
                if (b->num[k] > row[b->from[k]]) row[b->from[k]] = b->num[k];
                applied++;
            } else
                pend[p][npend[p]++] = g;
        }
    }
    cursor[p] = upto;
}

static int blocks(long n, long casts) {
    struct blk *ring = calloc(RING, sizeof *ring);
    uint32_t *table = calloc(n * n, sizeof *table);
    long *cursor = calloc(n, sizeof *cursor), *npend = calloc(n, sizeof *npend);
    long **pend = calloc(n, sizeof *pend);
    if (!ring || !table || !cursor || !npend || !pend) { perror("sim-floors"); return 1; }
    for (int i = 0; i < RING; i++)
        if (!(ring[i].times = malloc(n * BLK * sizeof(uint64_t)))) { perror("sim-floors"); return 1; }
    for (long p = 0; p < n; p++)
        if (!(pend[p] = malloc(RING * BLK * sizeof(long)))) { perror("sim-floors"); return 1; }
    double now = 0, t0 = secs();
    for (long c = 0; c < casts; c++) {
        long from = next() % n, k = c % BLK;
        struct blk *b = &ring[(c / BLK) % RING];
        if (k == 0 && c / BLK >= LAGB)
            for (long p = 0; p < n; p++)
                if (cursor[p] < (c / BLK - LAGB) * BLK)
                    absorb(ring, table, n, p, cursor, c, pend, npend, now);
        now += 1.2;
        b->from[k] = (uint32_t)from;
        b->num[k] = (uint32_t)c + 1;
        for (long to = 0; to < n; to++) {
            double t = now - 10.0 * log(unit());
            uint64_t bits;
            memcpy(&bits, &t, 8);
            b->times[to * BLK + k] = to == from ? NONE : bits;
        }
        if (next() % 850 < (uint64_t)n) {
            long p = next() % n;
            absorb(ring, table, n, p, cursor, c + 1, pend, npend, now);
        }
    }
    double all = secs() - t0;
    printf("%.1f %d\n", all / ((double)casts * (n - 1)) * 1e9, applied > 0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && !strcmp(argv[1], "merge")) {
        long recv = atol(argv[2]), snaps = atol(argv[3]), count = atol(argv[4]);
        if (recv > 0 && snaps > 0 && count > 0) return merges(recv, snaps, count);
    }
    if (argc == 4 && !strcmp(argv[1], "copy")) {
        long n = atol(argv[2]), casts = atol(argv[3]);
        if (n >= 2 && casts > 0) return copies(n, casts);
    }
    if (argc == 4 && !strcmp(argv[1], "blocks")) {
        long n = atol(argv[2]), casts = atol(argv[3]);
        if (n >= 2 && n <= 850 && casts > 0) return blocks(n, casts);
    }
    fprintf(stderr, "usage: sim-floors merge RECEIVERS SNAPSHOTS MERGES | copy N BROADCASTS | "
                    "blocks N BROADCASTS (positive sizes, N >= 2; blocks: N <= 850)\n");
    return 2;
}
