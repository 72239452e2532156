// Command main is a synthetic CPU-bound workload used to produce the real
// Go CPU profiles (runtime/pprof) in tests/data/go-series/.
//
// Made 2026-11-28 with go1.19.8 linux/amd64 (Debian golang-go), 3 s each:
//
//	go mod init workload && go build -o workload .
//	./workload -cpuprofile steady/run-NN.pb.gz -duration 3s           # steady, runs 01-10
//	./workload -cpuprofile shift/run-NN.pb.gz -duration 3s            # shift, runs 01-06
//	./workload -cpuprofile shift/run-NN.pb.gz -duration 3s -slow 1    # shift, runs 07-10
//
// The main loop calls five functions with fixed shares of the work
// (parseRequest 30%, hashKeys 25%, compress 20%, encodeJSON 15%,
// sortResults 10%). Per-call costs are calibrated before profiling starts,
// so the shares hold regardless of machine speed. With -slow s > 0 an extra
// function, validateSchema, takes 20*s percentage points of the work and the
// other five shrink proportionally.
package main

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"os"
	"regexp"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"
)

var sink uint64

type record struct {
	ID      int               `json:"id"`
	Name    string            `json:"name"`
	Score   float64           `json:"score"`
	Tags    []string          `json:"tags"`
	Attrs   map[string]string `json:"attrs"`
	Enabled bool              `json:"enabled"`
}

var (
	requestText string
	hashBuf     []byte
	compressBuf []byte
	records     []record
	results     []float64
	schemaDocs  []string
	compressOut bytes.Buffer
	compressor  *flate.Writer
	fieldRe     = regexp.MustCompile(`"([a-z_]+)":\s*("[^"]*"|-?[0-9]+(\.[0-9]+)?|true|false)`)
)

func setup() {
	rng := rand.New(rand.NewSource(42))
	var sb strings.Builder
	for i := 0; i < 400; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "k%d=%d:%.4f", i, rng.Intn(1000000), rng.Float64()*1000)
	}
	requestText = sb.String()

	hashBuf = make([]byte, 16<<10)
	rng.Read(hashBuf)

	words := []string{"alpha", "beta", "gamma", "delta", "flame", "graph", "stack", "frame"}
	var cb bytes.Buffer
	for cb.Len() < 16<<10 {
		cb.WriteString(words[rng.Intn(len(words))])
		cb.WriteByte(byte('0' + rng.Intn(10)))
		cb.WriteByte(' ')
	}
	compressBuf = cb.Bytes()
	var err error
	if compressor, err = flate.NewWriter(&compressOut, flate.BestSpeed); err != nil {
		log.Fatal(err)
	}

	for i := 0; i < 40; i++ {
		records = append(records, record{
			ID:      i,
			Name:    words[i%len(words)] + strconv.Itoa(i),
			Score:   rng.Float64() * 100,
			Tags:    []string{words[rng.Intn(8)], words[rng.Intn(8)]},
			Attrs:   map[string]string{"region": "eu", "tier": strconv.Itoa(i % 3)},
			Enabled: i%2 == 0,
		})
	}

	results = make([]float64, 2000)
	for i := range results {
		results[i] = rng.Float64()
	}

	for i := 0; i < 20; i++ {
		doc, _ := json.Marshal(records[i])
		schemaDocs = append(schemaDocs, string(doc))
	}
}

//go:noinline
func parseRequest() {
	var acc uint64
	rest := requestText
	for len(rest) > 0 {
		field := rest
		if i := strings.IndexByte(rest, ','); i >= 0 {
			field, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		eq := strings.IndexByte(field, '=')
		colon := strings.IndexByte(field, ':')
		n, err := strconv.Atoi(field[eq+1 : colon])
		if err != nil {
			log.Fatal(err)
		}
		f, err := strconv.ParseFloat(field[colon+1:], 64)
		if err != nil {
			log.Fatal(err)
		}
		acc += uint64(n) + uint64(f)
	}
	sink += acc
}

//go:noinline
func hashKeys() {
	sum := sha256.Sum256(hashBuf)
	for i := 0; i < 4; i++ {
		h := sha256.New()
		h.Write(sum[:])
		h.Write(hashBuf[i*1024 : (i+1)*1024])
		copy(sum[:], h.Sum(nil))
	}
	sink += uint64(sum[0])
}

//go:noinline
func compress() {
	compressOut.Reset()
	compressor.Reset(&compressOut)
	compressor.Write(compressBuf)
	compressor.Close()
	sink += uint64(compressOut.Len())
}

//go:noinline
func encodeJSON() {
	b, err := json.Marshal(records)
	if err != nil {
		log.Fatal(err)
	}
	sink += uint64(len(b))
}

//go:noinline
func sortResults() {
	s := make([]float64, len(results))
	copy(s, results)
	sort.Float64s(s)
	idx := make([]int, 200)
	for i := range idx {
		idx[i] = len(idx) - i
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	sink += uint64(s[0]*1000) + uint64(idx[0])
}

//go:noinline
func validateSchema() {
	n := 0
	for _, doc := range schemaDocs {
		for _, m := range fieldRe.FindAllStringSubmatch(doc, -1) {
			if len(m[1]) > 0 && len(m[2]) > 0 {
				n++
			}
		}
	}
	sink += uint64(n)
}

type task struct {
	name   string
	fn     func()
	weight float64
	iters  int
}

// calibrate returns the per-call wall time of fn: the fastest of several
// short trials, so that load from other processes does not skew it.
func calibrate(fn func()) time.Duration {
	fn() // warm up
	best := time.Duration(1<<63 - 1)
	for trial := 0; trial < 7; trial++ {
		start := time.Now()
		n := 0
		for time.Since(start) < 15*time.Millisecond {
			fn()
			n++
		}
		if d := time.Since(start) / time.Duration(n); d < best {
			best = d
		}
	}
	return best
}

func main() {
	out := flag.String("cpuprofile", "cpu.pb.gz", "write the CPU profile to this file")
	duration := flag.Duration("duration", 3*time.Second, "how long to run the profiled workload")
	slow := flag.Float64("slow", 0, "when > 0, validateSchema takes 20*slow percentage points of the work")
	flag.Parse()

	setup()
	extra := 0.0
	if *slow > 0 {
		extra = 0.20 * *slow
		if extra > 0.9 {
			extra = 0.9
		}
	}
	tasks := []*task{
		{"parseRequest", parseRequest, 0.30, 0},
		{"hashKeys", hashKeys, 0.25, 0},
		{"compress", compress, 0.20, 0},
		{"encodeJSON", encodeJSON, 0.15, 0},
		{"sortResults", sortResults, 0.10, 0},
	}
	for _, t := range tasks {
		t.weight *= 1 - extra
	}
	if extra > 0 {
		tasks = append(tasks, &task{"validateSchema", validateSchema, extra, 0})
	}
	const round = 50 * time.Millisecond
	for _, t := range tasks {
		cost := calibrate(t.fn)
		t.iters = int(t.weight*float64(round)/float64(cost) + 0.5)
		if t.iters < 1 {
			t.iters = 1
		}
		fmt.Fprintf(os.Stderr, "%-15s cost %-10v weight %.3f iters/round %d\n", t.name, cost, t.weight, t.iters)
	}

	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	rounds := 0
	for time.Since(start) < *duration {
		for _, t := range tasks {
			for i := 0; i < t.iters; i++ {
				t.fn()
			}
		}
		rounds++
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "%d rounds in %v, sink %d\n", rounds, time.Since(start), sink%1000)
}
