// Command labels writes the labelled CPU profile of flamesite's tests: goroutines that run
// under pprof labels set with pprof.Do (thread=worker-1, worker-2, worker-3, and a second
// key, kind), while the main goroutine works without labels. Go's CPU profiler writes each
// sample's labels into the profile. tests/data/pprof/make.sh builds it with -trimpath and
// runs it; see that script.
//
// Usage: labels CPU_OUT
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"time"
)

// square is small enough for the compiler to inline.
func square(x uint64) uint64 {
	return x * x
}

//go:noinline
func spin(n int) uint64 {
	var acc uint64
	for i := 0; i < n; i++ {
		acc += square(uint64(i)) ^ acc>>3
	}
	return acc
}

//go:noinline
func recurse(depth, n int) uint64 {
	if depth == 0 {
		return spin(n)
	}
	return recurse(depth-1, n) + 1
}

//go:noinline
func hashLoop(deadline time.Time) uint64 {
	var total uint64
	for time.Now().Before(deadline) {
		total += spin(100000)
	}
	return total
}

//go:noinline
func recurseLoop(deadline time.Time) uint64 {
	var total uint64
	for time.Now().Before(deadline) {
		total += recurse(4, 100000)
	}
	return total
}

//go:noinline
func unlabelled(deadline time.Time) uint64 {
	var total uint64
	for time.Now().Before(deadline) {
		total += recurse(2, 50000)
	}
	return total
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: labels CPU_OUT")
		os.Exit(2)
	}
	cpu, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		panic(err)
	}
	deadline := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total uint64
	for _, w := range []struct {
		thread, kind string
		loop         func(time.Time) uint64
	}{
		{"worker-1", "hash", hashLoop},
		{"worker-2", "recurse", recurseLoop},
		{"worker-3", "hash", hashLoop},
	} {
		w := w
		wg.Add(1)
		go func() {
			defer wg.Done()
			labels := pprof.Labels("thread", w.thread, "kind", w.kind)
			pprof.Do(context.Background(), labels, func(context.Context) {
				t := w.loop(deadline)
				mu.Lock()
				total += t
				mu.Unlock()
			})
		}()
	}
	t := unlabelled(deadline)
	wg.Wait()
	pprof.StopCPUProfile()
	if err := cpu.Close(); err != nil {
		panic(err)
	}
	fmt.Println((total + t) % 10)
}
