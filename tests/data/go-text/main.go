// Writes Go's goroutine and threadcreate profiles of one moment in both forms: the text of
// debug=1 (NAME.txt) and the protobuf of debug=0 (NAME.pb.gz), with goroutines parked in
// known places so that both forms hold the same stacks.
package main

import (
	"os"
	"runtime/pprof"
	"sync"
	"time"
)

//go:noinline
func leaf(ch chan int) { <-ch }

//go:noinline
func mid(ch chan int) { leaf(ch) }

//go:noinline
func worker(ch chan int, wg *sync.WaitGroup) {
	wg.Done()
	mid(ch)
}

//go:noinline
func sleeper(ch chan int, wg *sync.WaitGroup) {
	wg.Done()
	<-ch
}

//go:noinline
func ticker(wg *sync.WaitGroup) {
	wg.Done()
	time.Sleep(time.Hour)
}

func main() {
	ch := make(chan int)
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go worker(ch, &wg)
	}
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go sleeper(ch, &wg)
	}
	wg.Add(1)
	go ticker(&wg)
	wg.Wait()
	time.Sleep(200 * time.Millisecond)
	for _, name := range []string{"goroutine", "threadcreate"} {
		p := pprof.Lookup(name)
		for _, form := range []struct {
			file  string
			debug int
		}{{name + ".txt", 1}, {name + ".pb.gz", 0}} {
			f, err := os.Create(form.file)
			if err != nil {
				panic(err)
			}
			if err := p.WriteTo(f, form.debug); err != nil {
				panic(err)
			}
			f.Close()
		}
	}
}
