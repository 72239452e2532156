/* A small CPU-bound program with a known call tree, profiled by make.sh. */
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void leaf(int n) { for (int i = 0; i < n; i++) sink += i * 7; }
__attribute__((noinline)) static void parse(void) { leaf(3000000); }
__attribute__((noinline)) static void merge(void) { leaf(6000000); }
__attribute__((noinline)) static void work(int k) { if (k & 1) parse(); else merge(); }
int main(void) { for (int k = 0; k < 60; k++) work(k); printf("%lu\n", sink); return 0; }
