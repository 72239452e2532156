#!/usr/bin/env python3
"""Writes a synthetic pprof profile (profile.proto, uncompressed) for benches/compare-formats.sh.

Usage: gen-pprof.py [--samples N] [--seed S] [-o FILE]   (default: 250000 samples, seed 1,
standard output; gzip the output to get the `.pb.gz` that Go's tools write)

The profile is shaped like one a continuous profiler writes for a busy Go server: three
sample types (`samples`/count, `cpu`/nanoseconds, `wall`/nanoseconds; `cpu` the default),
one main binary mapping with symbols, a libc mapping without (its locations have addresses
and no lines, as in cgo calls), about 15,000 functions, each with several locations (call
sites), some of which carry inlined functions as extra lines, samples whose stacks go up to
64 locations deep through a fixed call graph (so prefixes are shared), heavy-tailed counts,
off-CPU samples (waiting in futex, netpoll, syscalls) with `cpu` 0 and `wall` > 0, and pprof
labels on a third of the samples (the same stack then appears as several samples, as it does
when Go's profiler keeps samples with different labels apart). Fields are written in the
order Go's `profile.Write` writes them.

The protobuf is written by hand (varints, length-delimited messages), so no package is
needed. The output is a pure function of the arguments: one seeded `random.Random`, no
hash-order iteration, no clock. Python 3.6 or later. Statistics go to standard error.
"""

import argparse
import random
import sys

# ---------------------------------------------------------------------------------------
# Protobuf writing: benches/protowire.py

from protowire import field_bytes, field_varint, packed, varint  # noqa: E402


class Strings:
    def __init__(self):
        self.index = {"": 0}
        self.table = [""]

    def __call__(self, s):
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.table)
            self.table.append(s)
        return i


# ---------------------------------------------------------------------------------------
# The program

PKGS = ["net/http", "encoding/json", "database/sql", "bufio", "crypto/tls", "compress/gzip",
        "google.golang.org/grpc", "google.golang.org/grpc/internal/transport", "google.golang.org/protobuf/proto",
        "github.com/acme/api/internal/store", "github.com/acme/api/internal/auth", "github.com/acme/api/internal/cache",
        "github.com/acme/api/internal/orders", "github.com/acme/api/internal/billing", "github.com/acme/api/internal/search",
        "github.com/acme/api/pkg/middleware", "github.com/acme/api/pkg/metrics", "github.com/jackc/pgx/v5/pgconn",
        "github.com/jackc/pgx/v5/pgtype", "github.com/redis/go-redis/v9", "go.opentelemetry.io/otel/sdk/trace",
        "go.uber.org/zap/zapcore", "github.com/prometheus/client_golang/prometheus", "golang.org/x/net/http2",
        "github.com/klauspost/compress/zstd", "github.com/acme/api/internal/inventory", "github.com/acme/api/internal/ratelimit",
        "regexp", "strconv", "sort", "strings", "bytes", "text/template", "html/template", "time", "sync",
        "context", "io", "os", "github.com/acme/api/internal/featureflags"]
TYPES = ["(*Server)", "(*Client)", "(*Conn)", "(*Store)", "(*Handler)", "(*Decoder)", "(*Encoder)", "(*Reader)",
         "(*Writer)", "(*Cache)", "(*Pool)", "(*Tx)", "(*Rows)", "(*Stmt)", "(*Span)", "(*Logger)", "(*Counter)",
         "(*Histogram)", "(*Limiter)", "(*Index)", "(*Query)", "(*Order)", "(*Invoice)", "(*Session)", "(*Token)",
         "(*Framer)", "(*Stream)", "(*Buffer)", "(*Regexp)", "(*Template)", "(*Map)", "(*Mutex)", "(*WaitGroup)",
         "decodeState", "encodeState", "serverHandler", "(*loopyWriter)", "(*http2Server)", "(*controlBuffer)",
         "(*batchSpanProcessor)", "(*jsonEncoder)", "(*ioCore)", "(*registry)", "(*baseClient)", "(*PgConn)",
         "(*frontend)", "(*blockDec)", "(*fseDecoder)", "(*bitReader)", "(*machine)", "(*inputString)",
         "(*state)", "(*Flag)", "(*Bucket)", "(*Item)", "(*Ledger)", "(*Catalog)", "(*Shard)", "(*Segment)", "(*Iter)"]
METHODS = ["ServeHTTP", "Serve", "Get", "Set", "Put", "Delete", "Query", "QueryRow", "Exec", "Scan", "Next",
           "Close", "Read", "Write", "Flush", "Decode", "Encode", "Marshal", "Unmarshal", "Lookup", "Insert",
           "Update", "Allow", "Wait", "Lock", "Unlock", "Observe", "Inc", "End", "Start", "Check", "Verify",
           "Sign", "Parse", "Format", "Execute", "Match", "FindAll", "Compile", "handle", "process", "run",
           "loop", "dispatch", "fill", "grow", "reset", "readFrame", "writeFrame", "operateHeaders"]
RUNTIME = ["runtime.mallocgc", "runtime.memmove", "runtime.memclrNoHeapPointers", "runtime.growslice",
           "runtime.newobject", "runtime.makeslice", "runtime.mapaccess2_faststr", "runtime.mapassign_faststr",
           "runtime.mapaccess1", "runtime.concatstrings", "runtime.slicebytetostring", "runtime.convTstring",
           "runtime.assertE2I2", "runtime.typehash", "runtime.aeshashbody", "runtime.nextFreeFast",
           "runtime.(*mcache).nextFree", "runtime.(*mcache).refill", "runtime.(*mcentral).cacheSpan",
           "runtime.heapBitsSetType", "runtime.gcWriteBarrier", "runtime.wbBufFlush", "runtime.deferreturn",
           "runtime.selectgo", "runtime.chansend1", "runtime.chanrecv1", "runtime.lock2", "runtime.unlock2",
           "sync.(*Mutex).Lock", "sync.(*Mutex).lockSlow", "sync.(*Pool).Get", "sync.(*Pool).Put",
           "runtime.nanotime1", "runtime.procyield", "runtime.findObject", "runtime.scanobject", "runtime.greyobject",
           "runtime.markBits.isMarked", "runtime.spanOf", "runtime.(*gcWork).tryGet"]
# Functions where a goroutine waits: their samples are off-CPU (wall only).
WAITING = ["runtime.futex", "runtime.netpoll", "runtime.usleep", "internal/runtime/syscall.Syscall6",
           "runtime.notesleep", "runtime.gopark", "runtime.semasleep"]
ROOTS = [
    ["runtime.goexit", "net/http.(*conn).serve", "net/http.serverHandler.ServeHTTP",
     "github.com/acme/api/pkg/middleware.(*Chain).ServeHTTP", "net/http.HandlerFunc.ServeHTTP"],
    ["runtime.goexit", "google.golang.org/grpc.(*Server).serveStreams.func2.1",
     "google.golang.org/grpc.(*Server).handleStream", "google.golang.org/grpc.(*Server).processUnaryRPC"],
    ["runtime.goexit", "runtime.gcBgMarkWorker", "runtime.systemstack", "runtime.gcBgMarkWorker.func2",
     "runtime.gcDrain"],
    ["runtime.goexit", "github.com/acme/api/internal/store.(*Store).backgroundCompaction"],
    ["runtime.mstart", "runtime.mstart0", "runtime.mstart1", "runtime.schedule", "runtime.findRunnable"],
    ["runtime.main", "main.main", "github.com/acme/api/internal/store.(*Store).Open"],
]


class Func:
    __slots__ = ("id", "name", "file", "line", "locs", "callees", "edge", "weights")

    def __init__(self, fid, name, file, line):
        self.id, self.name, self.file, self.line = fid, name, file, line
        self.locs = []      # location ids of this function's PCs
        self.callees = []   # functions called
        self.edge = []      # the location (call site) of each call, parallel to callees
        self.weights = []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=250000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    S = Strings()

    # Functions: the application's, the runtime's, the roots', and small ones that get inlined.
    names = []
    seen = set()
    while len(names) < 14000:
        pkg, t, m = rng.choice(PKGS), rng.choice(TYPES), rng.choice(METHODS)
        r = rng.random()
        if r < 0.15:
            n = "%s.%s" % (pkg, m.lower() + rng.choice(["", "Locked", "Slow", "Fast", "Internal", "Once"]))
        elif r < 0.3:
            n = "%s.%s.%s.func%d" % (pkg, t, m, rng.randint(1, 5))
        else:
            n = "%s.%s.%s" % (pkg, t, m)
        if n not in seen:
            seen.add(n)
            names.append(n)
    inline_names = []
    while len(inline_names) < 600:
        n = "%s.%s" % (rng.choice(PKGS), rng.choice(["min", "max", "isSpace", "grow", "len", "add", "hash",
                                                        "bucket", "next", "peek", "get", "valid", "unquote",
                                                        "appendInt", "readByte", "index", "reset"]) + str(rng.randint(0, 99)))
        if n not in seen:
            seen.add(n)
            inline_names.append(n)
    root_names = [n for chain in ROOTS for n in chain]
    funcs = {}
    order = []

    def func(name):
        f = funcs.get(name)
        if f is None:
            pkg = name.rsplit("/", 1)[-1].split(".", 1)[0]
            file = "/src/%s/%s.go" % (name.split(".")[0] if "/" in name else name.split(".")[0], pkg + str(rng.randint(0, 9)))
            f = funcs[name] = Func(len(order) + 1, name, file, rng.randint(10, 3000))
            order.append(f)
        return f

    app = [func(n) for n in names]
    rt = [func(n) for n in RUNTIME]
    waiting = [func(n) for n in WAITING]
    for n in root_names:
        func(n)
    inl = [func(n) for n in inline_names]

    # Locations: each function has 1..6 PCs; a fifth of them have 1 or 2 inlined callees.
    mapping_main, mapping_libc = 1, 2
    locations = []  # (id, mapping, address, [(function id, line)] innermost first)
    addr = 0x401000
    inl_set = set(inl)
    for f in order:
        if f in inl_set:
            continue
        for _ in range(rng.randint(1, 6)):
            lines = [(f.id, f.line + rng.randint(1, 80))]
            if rng.random() < 0.2:
                for g in rng.sample(inl, rng.randint(1, 2)):
                    lines.insert(0, (g.id, g.line + rng.randint(0, 10)))
            addr += rng.randint(4, 400)
            loc_id = len(locations) + 1
            locations.append((loc_id, mapping_main, addr, lines))
            f.locs.append(loc_id)
    main_limit = addr + 0x1000
    # Unsymbolised libc PCs (cgo).
    libc_locs = []
    for _ in range(300):
        loc_id = len(locations) + 1
        locations.append((loc_id, mapping_libc, 0x7f3a5c228000 + rng.randint(0, 0x1b0000), []))
        libc_locs.append(loc_id)
    cgocall = func("runtime.cgocall")
    cgocall.locs.append(len(locations) + 1)
    locations.append((len(locations) + 1, mapping_main, main_limit - 0x100, [(cgocall.id, 147)]))

    # The call graph.
    def call(f, g, w):
        f.callees.append(g)
        f.edge.append(rng.choice(f.locs))
        f.weights.append(w)

    for f in app:
        for _ in range(rng.randint(1, 7)):
            r = rng.random()
            if r < 0.06:
                call(f, rng.choice(rt), rng.choice([1, 2, 3]))
            elif r < 0.08:
                call(f, rng.choice(waiting), 1)
            elif r < 0.085:
                call(f, cgocall, 1)
            else:
                call(f, rng.choice(app), rng.choice([1, 1, 2, 3, 5]))
    for f in rt[:20]:
        for _ in range(rng.randint(0, 3)):
            call(f, rng.choice(rt), 2)
    for chain in ROOTS:
        fs = [funcs[n] for n in chain]
        for f, g in zip(fs, fs[1:]):
            if g not in f.callees:
                call(f, g, 5)
        last = fs[-1]
        pool = rt[-8:] if "gcDrain" in last.name else waiting[:2] if "findRunnable" in last.name else app
        for _ in range(12):
            call(last, rng.choice(pool), rng.choice([1, 2, 3]))
    roots = [[funcs[n] for n in chain] for chain in ROOTS]
    root_weights = [40, 25, 8, 6, 6, 1]

    def pick(f):
        x = rng.random() * sum(f.weights)
        for g, e, w in zip(f.callees, f.edge, f.weights):
            x -= w
            if x < 0:
                return g, e
        return f.callees[-1], f.edge[-1]

    def walk(start, start_locs, limit):
        stack, locs = list(start), list(start_locs)
        while len(stack) < limit:
            top = stack[-1]
            if not top.callees or rng.random() < 0.01 + len(stack) * 0.001:
                break
            g, e = pick(top)
            locs.append(e)
            stack.append(g)
        return stack, locs

    def chain_locs(chain):
        out = []
        for f, g in zip(chain, chain[1:]):
            out.append(f.edge[f.callees.index(g)])
        return out

    # Samples: (location ids leaf first, values, labels).
    known = []         # (location ids leaf first, whether off-CPU)
    known_stacks = []  # (functions root first, call-site locations between them)
    waiting_set = set(waiting)
    samples_pb = []
    distinct = set()
    n_lines = {loc_id: max(1, len(lines)) for loc_id, _, _, lines in locations}
    total_locs = total_frames = max_frames = merged = 0
    handlers = ["/api/v1/orders", "/api/v1/orders/{id}", "/api/v1/search", "/api/v1/invoices", "/healthz",
                "/api/v1/inventory", "/api/v1/login", "grpc:acme.Billing/Charge"]
    k_handler, k_tenant = S("handler"), S("tenant")
    handler_ids = [S(h) for h in handlers]
    period = 10_000_000
    r_total = sum(root_weights)
    for i in range(a.samples):
        r = rng.random()
        if known and r < 0.35:
            locs, off_cpu = known[int(len(known) * rng.random() ** 5)]
        else:
            if known and r < 0.75:
                base_stack, base_locs = known_stacks[int(len(known_stacks) * rng.random() ** 2)]
                cut = rng.randint(max(1, len(base_stack) // 3), len(base_stack))
                start, start_locs = base_stack[:cut], base_locs[:cut - 1]
            else:
                x = rng.random() * r_total
                k = 0
                while x >= root_weights[k]:
                    x -= root_weights[k]
                    k += 1
                start = roots[k]
                start_locs = chain_locs(start)
            depth = rng.randint(12, 64)
            stack, edge_locs = walk(start, start_locs, max(depth, len(start)))
            leaf = stack[-1]
            leaf_locs = [rng.choice(leaf.locs)]
            if leaf is cgocall:
                leaf_locs = [rng.choice(libc_locs) for _ in range(rng.randint(1, 3))] + leaf_locs
            # Leaf first: the leaf's own PC(s), then each caller's call site.
            locs = leaf_locs + list(reversed(edge_locs))
            if len(locs) > 64:
                locs = locs[:64]
            off_cpu = leaf in waiting_set
            known.append((locs, off_cpu))
            known_stacks.append((stack, edge_locs))
        distinct.add(tuple(locs))
        frames = sum(n_lines[x] for x in locs)
        total_locs += len(locs)
        total_frames += frames
        max_frames = max(max_frames, frames)
        count = 1 if rng.random() < 0.7 else rng.randint(2, 40)
        cpu = 0 if off_cpu else count * period + rng.randint(-period // 20, period // 20)
        wall = count * period * (rng.randint(2, 30) if off_cpu else 1) + rng.randint(0, period // 10)
        values = [count, max(cpu, 0), wall]
        merged += frames * sum(1 for v in values if v > 0)
        body = packed(1, locs) + packed(2, values)
        if rng.random() < 0.33:
            body += field_bytes(3, field_varint(1, k_handler) + field_varint(2, rng.choice(handler_ids)))
            if rng.random() < 0.5:
                body += field_bytes(3, field_varint(1, k_tenant) + field_varint(2, S("tenant-%d" % rng.randint(1, 40))))
        samples_pb.append(field_bytes(2, body))

    out = []
    # sample_type
    for t, u in (("samples", "count"), ("cpu", "nanoseconds"), ("wall", "nanoseconds")):
        out.append(field_bytes(1, field_varint(1, S(t)) + field_varint(2, S(u))))
    out.extend(samples_pb)
    # mapping
    out.append(field_bytes(3, field_varint(1, mapping_main) + field_varint(2, 0x400000) + field_varint(3, main_limit)
                           + field_varint(5, S("/usr/local/bin/apiserver")) + field_varint(6, S("a1f3c09d2b7e4c55"))
                           + field_varint(7, 1) + field_varint(8, 1) + field_varint(9, 1) + field_varint(10, 1)))
    out.append(field_bytes(3, field_varint(1, mapping_libc) + field_varint(2, 0x7f3a5c228000)
                           + field_varint(3, 0x7f3a5c3dd000) + field_varint(4, 0x28000)
                           + field_varint(5, S("/usr/lib/x86_64-linux-gnu/libc.so.6"))
                           + field_varint(6, S("c289da5071a3399de893d2af81d6a30c62646e1e"))))
    # location
    for loc_id, m, address, lines in locations:
        body = field_varint(1, loc_id) + field_varint(2, m) + field_varint(3, address)
        for fid, line in lines:
            body += field_bytes(4, field_varint(1, fid) + field_varint(2, line))
        out.append(field_bytes(4, body))
    # function
    for f in order:
        out.append(field_bytes(5, field_varint(1, f.id) + field_varint(2, S(f.name)) + field_varint(3, S(f.name))
                               + field_varint(4, S(f.file)) + field_varint(5, f.line)))
    # The scalars refer to strings, so they are made before the table is written.
    tail = (field_varint(9, 1795305600_000000000) + field_varint(10, 60_000_000_000)
            + field_bytes(11, field_varint(1, S("cpu")) + field_varint(2, S("nanoseconds")))
            + field_varint(12, period) + field_varint(13, S("synthetic profile: benches/gen-pprof.py --seed %d" % a.seed))
            + field_varint(14, S("cpu")))
    for s in S.table:
        out.append(field_bytes(6, s.encode("utf-8")))
    out.append(tail)

    data = b"".join(out)
    if a.output:
        with open(a.output, "wb") as f:
            f.write(data)
    else:
        sys.stdout.buffer.write(data)
    print("pprof: %d samples, %d distinct location lists, %.1f locations and %.1f frames (lines) a sample on average,"
          " %d at most; %d frames over the sample types with a value; %d locations, %d functions, %d strings, %d bytes"
          % (a.samples, len(distinct), total_locs / a.samples, total_frames / a.samples, max_frames, merged,
             len(locations), len(order), len(S.table), len(data)), file=sys.stderr)


if __name__ == "__main__":
    main()
