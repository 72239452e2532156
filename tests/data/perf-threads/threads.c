/* Threads named as applications name theirs, with spaces and numbers in the name (Firefox's
 * "FS Broker 5906", thread pools' "Pool Worker 7"), profiled by make.sh. Each runs a call tree
 * of its own, sleeping between rounds (a context switch each time). With `exit`, the program
 * instead starts and joins short threads one after the other: samples taken while a thread
 * exits, after the kernel has let go of its id, are printed by perf with the thread -1. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
/* Spins until the thread has run `ms` milliseconds more, however busy the machine is. */
#define SPIN(ms)                                                                        \
    do {                                                                                \
        struct timespec t0, t;                                                          \
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);                                    \
        do {                                                                            \
            for (int i = 0; i < 10000; i++) sink += i * 7;                              \
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);                                 \
        } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < (ms) * 1000000L); \
    } while (0)
__attribute__((noinline)) static void compress(void) { SPIN(5); }
__attribute__((noinline)) static void hash(void) { SPIN(5); }
__attribute__((noinline)) static void broker(void) { SPIN(5); }
__attribute__((noinline)) static void render(void) { SPIN(5); }

struct job { const char *name; void (*round)(void); };

static void *run(void *arg) {
    const struct job *job = arg;
    pthread_setname_np(pthread_self(), job->name);
    for (int k = 0; k < 8; k++) {
        job->round();
        usleep(1000);
    }
    return NULL;
}

static void *brief(void *arg) { (void)arg; for (int i = 0; i < 2000; i++) sink += i * 7; return NULL; }

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "exit") == 0) {
        for (int i = 0; i < 400; i++) {
            pthread_t t;
            pthread_create(&t, NULL, brief, NULL);
            pthread_join(t, NULL);
        }
        printf("%lu\n", sink);
        return 0;
    }
    static const struct job jobs[] = { { "Worker 3", compress }, { "Pool Worker 7", hash }, { "FS Broker 5906", broker } };
    pthread_t threads[3];
    for (int i = 0; i < 3; i++) pthread_create(&threads[i], NULL, run, (void *)&jobs[i]);
    struct job self = { "threads", render };
    run(&self);
    for (int i = 0; i < 3; i++) pthread_join(threads[i], NULL);
    printf("%lu\n", sink);
    return 0;
}
