/* A program with a JIT-compiled function, as a JIT runtime (V8, the JVM with perf-map-agent)
 * makes one: machine code copied into an anonymous executable mapping, and its name written
 * to /tmp/perf-PID.map, where `perf script` looks up symbols of anonymous code. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* x86-64: push rbp; mov rbp, rsp; mov rax, rdi; 1: dec rax; jnz 1b; pop rbp; ret
 * (it keeps the frame pointer, so perf's unwinder finds its caller). */
static const unsigned char spin_code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0x48,
                                          0xff, 0xc8, 0x75, 0xfb, 0x5d, 0xc3};

typedef void (*spin_fn)(long);

__attribute__((noinline)) static void run_jit(spin_fn f) {
    for (int i = 0; i < 300; i++) f(1000000);
}

__attribute__((noinline)) static long native_work(void) {
    volatile long s = 0;
    for (long i = 0; i < 50000000; i++) s += i;
    return s;
}

int main(void) {
    void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return 1;
    memcpy(mem, spin_code, sizeof spin_code);
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    FILE *map = fopen(path, "w");
    if (!map) return 1;
    fprintf(map, "%lx %zx jit_spin\n", (unsigned long)mem, sizeof spin_code);
    fclose(map);
    run_jit((spin_fn)mem);
    return native_work() == 42;
}
