/* A program of pthread mutexes, condition variables and rwlocks whose output shows whether
 * they kept their promises; lockbench's tests run it under the interposer on several locks.
 * Usage: locks TEST [THREADS [ITERATIONS]]; prints "ok TEST ..." and exits 0, or says what
 * broke and exits 1. TEST: mutex overlap cond recursive rwlock churn trylock timed hold. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int threads = 4;
static long iters = 20000;

static void run(void *(*f)(void *), int n) {
    pthread_t t[64];
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, f, (void *)i) != 0) { perror("pthread_create"); exit(1); }
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
}

/* mutex: a statically initialised mutex guards a plain counter. */
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile long counter;
static void *mutex_worker(void *arg) {
    (void)arg;
    for (long i = 0; i < iters; i++) {
        pthread_mutex_lock(&counter_lock);
        long c = counter; /* a lost update shows as a short count */
        for (volatile int s = 0; s < 100; s++) {} /* a critical section long enough to overlap */
        counter = c + 1;
        pthread_mutex_unlock(&counter_lock);
    }
    return NULL;
}
/* Runs THREADS `worker`s over the counter and checks that none of its updates was lost. */
static int counted(const char *test, void *(*worker)(void *)) {
    run(worker, threads);
    long want = threads * iters;
    if (counter != want) { printf("%s: counter %ld, want %ld\n", test, counter, want); return 1; }
    printf("ok %s %ld\n", test, counter);
    return 0;
}

/* overlap: the mutex test, but each holder stays inside until another thread has called
 * pthread_mutex_lock (or every other thread is done), then 200 us more. A correct lock runs it
 * like `mutex`, with someone waiting at nearly every passage; a lock that lets a second thread
 * in does so in every run, however the threads are scheduled. */
static volatile long at_lock, done_threads;
static void *overlap_worker(void *arg) {
    (void)arg;
    for (long i = 0; i < iters; i++) {
        __atomic_add_fetch(&at_lock, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_lock(&counter_lock);
        __atomic_sub_fetch(&at_lock, 1, __ATOMIC_SEQ_CST);
        long c = counter;
        while (__atomic_load_n(&at_lock, __ATOMIC_SEQ_CST) == 0 &&
               __atomic_load_n(&done_threads, __ATOMIC_SEQ_CST) < threads - 1)
            sched_yield();
        struct timespec moment = {0, 200000};
        nanosleep(&moment, NULL);
        counter = c + 1;
        pthread_mutex_unlock(&counter_lock);
    }
    __atomic_add_fetch(&done_threads, 1, __ATOMIC_SEQ_CST);
    return NULL;
}
/* cond: one producer, THREADS-1 consumers, a bounded buffer, two condition variables. */
#define SLOTS 8
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER, not_full = PTHREAD_COND_INITIALIZER;
static long q[SLOTS], q_head, q_len, consumed_sum, consumed_n;
static int producing_done;
static void *producer(void *arg) {
    (void)arg;
    for (long v = 1; v <= iters; v++) {
        pthread_mutex_lock(&q_lock);
        while (q_len == SLOTS) pthread_cond_wait(&not_full, &q_lock);
        q[(q_head + q_len++) % SLOTS] = v;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&q_lock);
    }
    pthread_mutex_lock(&q_lock);
    producing_done = 1;
    pthread_cond_broadcast(&not_empty);
    pthread_mutex_unlock(&q_lock);
    return NULL;
}
static void *consumer(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&q_lock);
        while (q_len == 0 && !producing_done) {
            struct timespec d;
            clock_gettime(CLOCK_REALTIME, &d);
            d.tv_sec += 1; /* timedwait too: a missed wake-up only slows, never hangs */
            pthread_cond_timedwait(&not_empty, &q_lock, &d);
        }
        if (q_len == 0) { pthread_mutex_unlock(&q_lock); return NULL; }
        long v = q[q_head];
        q_head = (q_head + 1) % SLOTS;
        q_len--;
        consumed_sum += v;
        consumed_n++;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&q_lock);
    }
}
static void *cond_role(void *arg) { return (long)arg == 0 ? producer(arg) : consumer(arg); }
static int test_cond(void) {
    run(cond_role, threads < 2 ? 2 : threads);
    long want = iters * (iters + 1) / 2;
    if (consumed_n != iters || consumed_sum != want) {
        printf("cond: consumed %ld items summing %ld, want %ld summing %ld\n", consumed_n, consumed_sum, iters, want);
        return 1;
    }
    printf("ok cond %ld\n", consumed_sum);
    return 0;
}

/* recursive: a recursive mutex (initialised both ways) taken three deep, by several threads. */
static pthread_mutex_t rec_static = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t rec_init;
static volatile long rec_count;
static void *recursive_worker(void *arg) {
    pthread_mutex_t *m = (long)arg % 2 ? &rec_static : &rec_init;
    for (long i = 0; i < iters / 10; i++) {
        pthread_mutex_lock(m);
        pthread_mutex_lock(m);
        if (pthread_mutex_trylock(m) != 0) { printf("recursive: trylock by the holder failed\n"); exit(1); }
        pthread_mutex_lock(&counter_lock); /* a normal mutex inside: still interposed */
        rec_count++;
        pthread_mutex_unlock(&counter_lock);
        pthread_mutex_unlock(m);
        pthread_mutex_unlock(m);
        pthread_mutex_unlock(m);
    }
    return NULL;
}
static int test_recursive(void) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&rec_init, &a);
    pthread_mutexattr_destroy(&a);
    run(recursive_worker, threads);
    long want = threads * (iters / 10);
    if (rec_count != want) { printf("recursive: %ld, want %ld\n", rec_count, want); return 1; }
    pthread_mutexattr_t e;
    pthread_mutexattr_init(&e);
    pthread_mutexattr_settype(&e, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_t ec;
    pthread_mutex_init(&ec, &e);
    if (pthread_mutex_unlock(&ec) != EPERM) { printf("recursive: error-checking unlock of a free mutex did not fail\n"); return 1; }
    pthread_mutex_lock(&ec);
    if (pthread_mutex_lock(&ec) != EDEADLK) { printf("recursive: error-checking relock did not say EDEADLK\n"); return 1; }
    pthread_mutex_unlock(&ec);
    pthread_mutex_destroy(&ec);
    printf("ok recursive %ld\n", rec_count);
    return 0;
}

/* rwlock: writers keep a == b; readers (nested read locks too) must never see them differ. */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static volatile long rw_a, rw_b, torn;
static void *rw_worker(void *arg) {
    long id = (long)arg;
    for (long i = 0; i < iters; i++) {
        if (id == 0 || i % 8 == 0) {
            pthread_rwlock_wrlock(&rw);
            rw_a++;
            for (volatile int s = 0; s < 20; s++) {}
            rw_b++;
            pthread_rwlock_unlock(&rw);
        } else {
            pthread_rwlock_rdlock(&rw);
            if (i % 16 == 1) pthread_rwlock_rdlock(&rw); /* pthread allows nesting reads */
            if (rw_a != rw_b) __sync_fetch_and_add(&torn, 1);
            if (i % 16 == 1) pthread_rwlock_unlock(&rw);
            pthread_rwlock_unlock(&rw);
        }
    }
    return NULL;
}
static int test_rwlock(void) {
    run(rw_worker, threads);
    long writes = iters + (threads - 1) * ((iters + 7) / 8);
    if (torn || rw_a != writes || rw_b != writes) {
        printf("rwlock: %ld torn reads, a=%ld b=%ld, want %ld\n", torn, rw_a, rw_b, writes);
        return 1;
    }
    printf("ok rwlock %ld\n", rw_a);
    return 0;
}

/* churn: many short-lived threads, a few at a time, each taking the lock: ids are recycled. */
static void *churn_worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 10; i++) {
        pthread_mutex_lock(&counter_lock);
        counter++;
        pthread_mutex_unlock(&counter_lock);
    }
    return NULL;
}
static int test_churn(void) {
    long rounds = iters;
    for (long r = 0; r < rounds; r++) run(churn_worker, threads);
    long want = rounds * threads * 10;
    if (counter != want) { printf("churn: %ld, want %ld\n", counter, want); return 1; }
    printf("ok churn %ld threads\n", rounds * threads);
    return 0;
}

/* trylock: succeeds on a free mutex, fails with EBUSY while another thread holds it. */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static void *try_other(void *arg) {
    *(int *)arg = pthread_mutex_trylock(&held);
    if (*(int *)arg == 0) pthread_mutex_unlock(&held);
    return NULL;
}
static int test_trylock(void) {
    if (pthread_mutex_trylock(&held) != 0) { printf("trylock: a free mutex was busy\n"); return 1; }
    int rc = -1;
    pthread_t t;
    pthread_create(&t, NULL, try_other, &rc);
    pthread_join(t, NULL);
    if (rc != EBUSY) { printf("trylock: a held mutex gave %d, want EBUSY\n", rc); return 1; }
    pthread_mutex_unlock(&held);
    pthread_create(&t, NULL, try_other, &rc);
    pthread_join(t, NULL);
    if (rc != 0) { printf("trylock: the released mutex gave %d\n", rc); return 1; }
    pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
    if (pthread_rwlock_trywrlock(&l) != 0 || pthread_rwlock_unlock(&l) != 0) { printf("trylock: trywrlock\n"); return 1; }
    printf("ok trylock\n");
    return 0;
}

/* timed: a timed lock of a held mutex gives ETIMEDOUT after its deadline, then succeeds. */
static void *timed_other(void *arg) {
    struct timespec d;
    clock_gettime(CLOCK_REALTIME, &d);
    d.tv_nsec += 20 * 1000 * 1000;
    if (d.tv_nsec >= 1000000000) { d.tv_sec++; d.tv_nsec -= 1000000000; }
    *(int *)arg = pthread_mutex_timedlock(&held, &d);
    if (*(int *)arg == 0) pthread_mutex_unlock(&held);
    return NULL;
}
static int test_timed(void) {
    pthread_mutex_lock(&held);
    int rc = -1;
    pthread_t t;
    pthread_create(&t, NULL, timed_other, &rc);
    pthread_join(t, NULL);
    pthread_mutex_unlock(&held);
    if (rc != ETIMEDOUT) { printf("timed: gave %d, want ETIMEDOUT\n", rc); return 1; }
    pthread_create(&t, NULL, timed_other, &rc);
    pthread_join(t, NULL);
    if (rc != 0) { printf("timed: a free mutex gave %d\n", rc); return 1; }
    printf("ok timed\n");
    return 0;
}

/* hold: THREADS threads each take a lock and keep running until all have: needs THREADS ids. */
static pthread_barrier_t all_in;
static pthread_mutex_t per_thread[64];
static void *hold_worker(void *arg) {
    long id = (long)arg;
    pthread_mutex_lock(&per_thread[id]);
    pthread_barrier_wait(&all_in);
    pthread_mutex_unlock(&per_thread[id]);
    return NULL;
}
static int test_hold(void) {
    for (int i = 0; i < threads; i++) pthread_mutex_init(&per_thread[i], NULL);
    pthread_barrier_init(&all_in, NULL, threads);
    run(hold_worker, threads);
    printf("ok hold %d\n", threads);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: locks TEST [THREADS [ITERATIONS]]\n"); return 2; }
    if (argc > 2) threads = atoi(argv[2]);
    if (argc > 3) iters = atol(argv[3]);
    if (threads < 1 || threads > 64 || iters < 1) { fprintf(stderr, "bad sizes\n"); return 2; }
    const char *t = argv[1];
    if (!strcmp(t, "mutex")) return counted("mutex", mutex_worker);
    if (!strcmp(t, "overlap")) return counted("overlap", overlap_worker);
    if (!strcmp(t, "cond")) return test_cond();
    if (!strcmp(t, "recursive")) return test_recursive();
    if (!strcmp(t, "rwlock")) return test_rwlock();
    if (!strcmp(t, "churn")) return test_churn();
    if (!strcmp(t, "trylock")) return test_trylock();
    if (!strcmp(t, "timed")) return test_timed();
    if (!strcmp(t, "hold")) return test_hold();
    fprintf(stderr, "unknown test %s\n", t);
    return 2;
}
