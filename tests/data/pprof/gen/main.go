// Command gen writes the pprof fixtures of flamesite's tests: a CPU profile and a heap
// profile of a small, deterministic workload (recursion, an inlined function, allocation).
// tests/data/pprof/make.sh builds it with -trimpath and runs it; see that script.
//
// Usage: gen CPU_OUT HEAP_OUT
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// square is small enough for the compiler to inline, so the CPU profile has locations
// with several lines (inlined frames).
func square(x uint64) uint64 {
	return x * x
}

// spin burns CPU in a tight loop that calls the inlined square.
func spin(n int) uint64 {
	var acc uint64
	for i := 0; i < n; i++ {
		acc += square(uint64(i)) ^ acc>>3
	}
	return acc
}

// recurse descends depth levels before spinning, so stacks differ in depth.
//
//go:noinline
func recurse(depth, n int) uint64 {
	if depth == 0 {
		return spin(n)
	}
	return recurse(depth-1, n) + 1
}

// sink keeps allocations reachable so that some show as in use in the heap profile.
var sink [][]byte

//go:noinline
func allocSmall(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 64)
		if i%8 == 0 {
			sink = append(sink, b)
		}
	}
}

//go:noinline
func allocLarge(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 1<<16)
		if i%4 == 0 {
			sink = append(sink, b)
		}
	}
}

func work(deadline time.Time) uint64 {
	var total uint64
	for time.Now().Before(deadline) {
		total += recurse(3, 200000)
		total += recurse(6, 100000)
		total += spin(50000)
	}
	return total
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen CPU_OUT HEAP_OUT")
		os.Exit(2)
	}
	// Record every 4 KiB allocated rather than every 512 KiB, so the small workload shows.
	runtime.MemProfileRate = 4096

	cpu, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		panic(err)
	}
	total := work(time.Now().Add(600 * time.Millisecond))
	pprof.StopCPUProfile()
	if err := cpu.Close(); err != nil {
		panic(err)
	}

	allocSmall(20000)
	allocLarge(64)
	runtime.GC()
	heap, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	if err := pprof.WriteHeapProfile(heap); err != nil {
		panic(err)
	}
	if err := heap.Close(); err != nil {
		panic(err)
	}
	fmt.Println(total%10, len(sink))
}
