#!/usr/bin/env python3
"""Writes a synthetic `perf script` text file for benches/compare-formats.sh.

Usage: gen-perf-script.py [--samples N] [--seed S] [-o FILE]   (default: 120000 samples,
seed 1, standard output)

The output is what `perf script -F comm,pid,tid,time,period,event,ip,sym,dso` prints for a
`perf record -g` of a busy machine: one record per sample, a header line
`comm pid/tid time: period cycles:` followed by the stack, leaf first, one frame a line
(`\\t<addr> func+0x<off> (/path/to/dso)`), then a blank line. It is not a real recording, but
it has the traits that make real ones costly to fold:

- several processes and threads in several languages: C (postgres), C++ with templates,
  operators and lambdas (envoy, argument lists that inferno strips), Rust (tokio), Go, Java
  (JIT frames in /tmp/perf-PID.map, JVM frames in libjvm.so, some `->` inlined chains),
  Python (interpreter recursion in libpython), kernel threads (kworker, ksoftirqd) and the
  idle task (swapper, kernel frames only); comms are at most 15 bytes, as the kernel keeps
  them, some with spaces or colons;
- stacks up to 60 frames deep, grown through a fixed per-program call graph so prefixes are
  shared, with kernel frames at the leaf end of some (system calls, page faults, timer
  interrupts), `[unknown]` frames with and without a DSO, and the leaf's offset different
  in every sample, as an instruction pointer is;
- heavy-tailed counts: a few stacks are sampled thousands of times, most once or twice;
- periods that vary from sample to sample, as `perf record -F` adapts them.

The output is a pure function of the arguments: one seeded `random.Random`, no hash-order
iteration, no clock. Python 3.6 or later.
"""

import argparse
import random
import sys

# ---------------------------------------------------------------------------------------
# Names


def kernel_names(rng):
    """About 600 kernel function names, realistic in shape."""
    subs = ["ext4", "xfs", "tcp", "ip", "udp", "skb", "sock", "page", "folio", "filemap",
            "mem_cgroup", "futex", "ep", "vfs", "dput", "d_alloc", "rcu", "sched", "task",
            "hrtimer", "irq", "blk_mq", "nvme", "lru", "kmem_cache", "mutex", "raw_spin",
            "nf_hook", "netif", "napi", "virtio_net", "copy", "iov_iter", "pipe", "inode",
            "security", "apparmor", "perf_event", "cgroup", "workqueue", "timerqueue"]
    verbs = ["_lock", "_unlock", "_alloc", "_free", "_read", "_write", "_sendmsg", "_recvmsg",
             "_wake_up", "_poll", "_lookup", "_insert", "_flush", "_update", "_queue",
             "_submit", "_complete", "_charge", "_rcv", "_xmit", "_get", "_put", "_release"]
    suffixes = ["", "", "", "_slowpath", ".isra.0", ".constprop.0", "_locked", "_common",
                "_one", "_nocheck"]
    names = set()
    out = []
    while len(out) < 600:
        n = rng.choice(["", "__", "do_", ""]) + rng.choice(subs) + rng.choice(verbs) + rng.choice(suffixes)
        if n not in names:
            names.add(n)
            out.append(n)
    return out


# Fixed kernel entry chains, root (outermost) first.
SYSCALL_ENTRY = ["entry_SYSCALL_64_after_hwframe", "do_syscall_64"]
SYSCALLS = ["__x64_sys_read", "__x64_sys_write", "__x64_sys_futex", "__x64_sys_epoll_wait",
            "__x64_sys_sendto", "__x64_sys_recvfrom", "__x64_sys_openat", "__x64_sys_mmap",
            "__x64_sys_pread64", "__x64_sys_clock_nanosleep", "__x64_sys_fsync"]
PAGE_FAULT = ["asm_exc_page_fault", "exc_page_fault", "do_user_addr_fault", "handle_mm_fault",
              "__handle_mm_fault", "do_anonymous_page", "vma_alloc_folio", "__alloc_pages",
              "get_page_from_freelist", "clear_page_erms"]
TIMER_IRQ = ["asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
             "__sysvec_apic_timer_interrupt", "hrtimer_interrupt", "__hrtimer_run_queues",
             "tick_nohz_highres_handler", "tick_sched_handle", "update_process_times",
             "sched_tick", "task_tick_fair", "update_curr"]
IDLE = ["secondary_startup_64_no_verify", "start_secondary", "cpu_startup_entry", "do_idle",
        "cpuidle_idle_call", "cpuidle_enter", "cpuidle_enter_state", "acpi_idle_enter",
        "acpi_idle_do_entry", "acpi_processor_ffh_cstate_enter", "mwait_idle_with_hints.constprop.0"]
KTHREAD = ["ret_from_fork_asm", "ret_from_fork", "kthread", "worker_thread", "process_one_work"]
SOFTIRQ = ["ret_from_fork_asm", "ret_from_fork", "kthread", "smpboot_thread_fn", "run_ksoftirqd",
           "handle_softirqs", "net_rx_action", "__napi_poll", "virtnet_poll"]

LIBC = ["malloc", "free", "_int_malloc", "_int_free", "__memmove_avx_unaligned_erms",
        "__memset_avx2_unaligned_erms", "__strlen_avx2", "__memcmp_avx2_movbe",
        "pthread_mutex_lock", "pthread_mutex_unlock", "__pthread_cond_wait",
        "__futex_abstimed_wait_common", "__GI___libc_write", "__libc_read", "epoll_wait",
        "__libc_sendto", "__libc_recvfrom", "__open64", "mmap64", "__pread64",
        "clock_nanosleep@@GLIBC_2.17", "fsync", "cfree@GLIBC_2.2.5", "realloc", "calloc",
        "__qsort_r", "msort_with_tmp.part.0", "__vfprintf_internal", "__strchr_avx2"]
# libc functions that enter the kernel, and how.
LIBC_SYSCALL = {"__futex_abstimed_wait_common": "__x64_sys_futex", "__GI___libc_write": "__x64_sys_write",
                "__libc_read": "__x64_sys_read", "epoll_wait": "__x64_sys_epoll_wait",
                "__libc_sendto": "__x64_sys_sendto", "__libc_recvfrom": "__x64_sys_recvfrom",
                "__open64": "__x64_sys_openat", "mmap64": "__x64_sys_mmap", "__pread64": "__x64_sys_pread64",
                "clock_nanosleep@@GLIBC_2.17": "__x64_sys_clock_nanosleep", "fsync": "__x64_sys_fsync",
                "pthread_mutex_lock": "__x64_sys_futex"}


def c_names(rng, n):
    mods = ["Exec", "heap_", "btree", "Hash", "index_", "Agg", "Sort", "Buf", "XLog", "Lock",
            "tuplesort_", "slot_", "pg_", "Portal", "Plan", "exec_", "Mem", "List", "pq_", "Snapshot"]
    verbs = ["Scan", "Insert", "Fetch", "Next", "Init", "End", "Get", "Put", "Flush", "Read",
             "Write", "Build", "Probe", "Compute", "Eval", "Copy", "Release", "Acquire", "Step"]
    objs = ["", "Tuple", "Page", "Node", "Entry", "Buffer", "Slot", "Qual", "Expr", "Index",
            "Range", "Batch", "Group", "Key", "Record", "Context"]
    return uniq(rng, n, lambda: rng.choice(mods) + rng.choice(verbs) + rng.choice(objs))


def cpp_names(rng, n):
    nss = ["Envoy::Http", "Envoy::Network", "Envoy::Router", "Envoy::Event", "Envoy::Upstream",
           "Envoy::Buffer", "Envoy::Stats", "absl::container_internal", "google::protobuf::internal",
           "nghttp2", "bssl", "Envoy::Extensions::Filters::Http"]
    classes = ["ConnectionManagerImpl", "Filter", "ActiveStream", "ClusterManagerImpl", "Dispatcher",
               "OwnedImpl", "FilterChain", "CodecClient", "ConnPoolImpl", "raw_hash_set", "Arena",
               "WireFormatLite", "HeaderMapImpl", "RouteEntryImpl", "ListenerImpl", "Watermark"]
    methods = ["onData", "decodeHeaders", "encodeData", "dispatch", "run", "write", "read",
               "onEvent", "drain", "add", "find", "resize", "lookup", "create", "onBelowLowWatermark",
               "continueDecoding", "chooseHost", "parse", "serialize", "operator()", "operator=="]
    args = ["()", "(Envoy::Buffer::Instance&, bool)", "(unsigned long)", "(absl::string_view)",
            "(std::unique_ptr<Envoy::Http::RequestHeaderMap, std::default_delete<Envoy::Http::RequestHeaderMap> >&&, bool)",
            "() const", "(int, unsigned int)", "(Envoy::Event::Dispatcher::RunType)"]

    def one():
        ns, cls, m = rng.choice(nss), rng.choice(classes), rng.choice(methods)
        k = rng.random()
        if k < 0.15:
            cls += "<" + rng.choice(["std::string", "int", "Envoy::Http::HeaderString",
                                     "std::pair<std::string const, std::shared_ptr<Envoy::Upstream::Host> >"]) + ">"
        elif k < 0.25:
            return "%s::%s::%s()::{lambda(%s)#%d}::operator()(%s) const" % (
                ns, cls, m, rng.choice(["", "int", "bool"]), rng.randint(1, 3), rng.choice(["", "bool"]))
        return "%s::%s::%s%s" % (ns, cls, m, rng.choice(args))

    return uniq(rng, n, one)


def rust_names(rng, n):
    crates = ["tokio::runtime", "hyper::proto::h1", "tower::util", "axum::routing", "serde_json::de",
              "myservice::handlers", "myservice::db", "sqlx_core::pool", "bytes::bytes", "h2::proto"]
    types = ["task::harness::Harness<T,S>", "scheduler::multi_thread::worker::Context",
             "dispatch::Dispatcher<D,Bs,I,T>", "Router<S>", "Deserializer<R>", "Handler", "Pool<DB>",
             "Bytes", "streams::Streams<B,P>", "conn::Conn<I,B,T>"]
    methods = ["poll", "run", "run_task", "poll_inner", "poll_read", "deserialize_struct", "call",
               "acquire", "clone", "drop", "send_data", "recv_frame", "{{closure}}"]

    def one():
        k = rng.random()
        if k < 0.2:
            return "<%s::%s as %s>::%s" % (rng.choice(crates), rng.choice(types),
                                            rng.choice(["core::future::future::Future", "core::ops::drop::Drop",
                                                        "tower_service::Service<Request>"]),
                                            rng.choice(["poll", "drop", "call"]))
        name = "%s::%s::%s" % (rng.choice(crates), rng.choice(types), rng.choice(methods))
        if rng.random() < 0.2:
            name += "::{{closure}}"
        return name

    return uniq(rng, n, one)


def go_names(rng, n):
    pkgs = ["net/http", "main", "github.com/acme/api/internal/store", "encoding/json",
            "google.golang.org/grpc", "github.com/acme/api/internal/auth", "database/sql", "bufio"]
    types = ["(*conn)", "(*Server)", "(*Store)", "(*decodeState)", "(*ClientConn)", "(*Reader)",
             "(*DB)", "(*Token)", "serverHandler", "(*Client)"]
    methods = ["serve", "ServeHTTP", "Get", "Put", "object", "value", "Invoke", "Read", "QueryContext",
               "Verify", "handle", "readRequest", "Do"]

    def one():
        k = rng.random()
        base = "%s.%s.%s" % (rng.choice(pkgs), rng.choice(types), rng.choice(methods))
        if k < 0.2:
            return base + ".func%d" % rng.randint(1, 4)
        if k < 0.3:
            return "%s.%s" % (rng.choice(pkgs), rng.choice(methods).lower())
        return base

    return uniq(rng, n, one)


def java_names(rng, n):
    pkgs = ["Lcom/acme/shop/", "Lorg/springframework/web/servlet/", "Ljava/util/", "Ljava/lang/",
            "Lcom/fasterxml/jackson/databind/", "Lorg/apache/catalina/core/", "Lio/netty/channel/",
            "Lorg/hibernate/internal/"]
    classes = ["CartService", "DispatcherServlet", "HashMap", "String", "ObjectMapper",
               "StandardWrapperValve", "AbstractChannelHandlerContext", "SessionImpl",
               "OrderRepository", "ArrayList", "ConcurrentHashMap", "StringBuilder"]
    methods = ["handle", "doDispatch", "get", "put", "hashCode", "equals", "readValue", "invoke",
               "fireChannelRead", "find", "add", "append", "toString", "computeIfAbsent", "checkout"]
    return uniq(rng, n, lambda: "%s%s;::%s" % (rng.choice(pkgs), rng.choice(classes), rng.choice(methods)))


def uniq(rng, n, make):
    seen = set()
    out = []
    tries = 0
    while len(out) < n and tries < n * 50:
        tries += 1
        s = make()
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


# ---------------------------------------------------------------------------------------
# Symbols and programs


class Sym:
    """A function: its name, its DSO, its address range and whom it calls."""
    __slots__ = ("name", "dso", "addr", "size", "callees", "weights", "kernel", "offsets")

    def __init__(self, name, dso, addr, size, kernel=False, offsets=True):
        self.name, self.dso, self.addr, self.size = name, dso, addr, size
        self.kernel, self.offsets = kernel, offsets
        self.callees, self.weights = [], []


class Space:
    """Lays out symbols in an address range."""

    def __init__(self, rng, base):
        self.rng, self.next = rng, base

    def sym(self, name, dso, **kw):
        size = self.rng.randint(0x20, 0x1800)
        s = Sym(name, dso, self.next, size, **kw)
        self.next += size + self.rng.randint(0, 0x40) * 16
        return s


def wire(rng, syms, pool, hot, fanout):
    """Gives every symbol in `syms` 1..fanout callees from `pool`, hot ones more often."""
    for s in syms:
        k = rng.randint(1, fanout)
        for _ in range(k):
            if hot and rng.random() < 0.06:
                c = rng.choice(hot)
            else:
                c = rng.choice(pool)
            if c is not s:
                s.callees.append(c)
                s.weights.append(rng.choice([1, 1, 2, 3, 5]))


class Program:
    def __init__(self, name, comms, pid, roots, syms, leaves, weight):
        self.name, self.comms, self.pid, self.roots = name, comms, pid, roots
        self.syms, self.leaves, self.weight = syms, leaves, weight
        self.stacks = []  # stacks seen, as lists of Sym root first


def build_world(rng):
    kspace = Space(rng, 0xffffffff81000000)
    K = "[kernel.kallsyms]"
    kfun = {}

    def ksym(name):
        if name not in kfun:
            kfun[name] = kspace.sym(name, K, kernel=True)
        return kfun[name]

    for chain in (SYSCALL_ENTRY, SYSCALLS, PAGE_FAULT, TIMER_IRQ, IDLE, KTHREAD, SOFTIRQ):
        for n in chain:
            ksym(n)
    kpool = [ksym(n) for n in kernel_names(rng)]
    wire(rng, kpool, kpool, kpool[:40], 4)
    for n in SYSCALLS:
        wire(rng, [kfun[n]], kpool, None, 3)
    kernel = {"fun": kfun, "pool": kpool}

    programs = []
    libc_base = 0x7f3a5c200000

    def user_space(base):
        return Space(rng, base)

    def libc_syms():
        sp = user_space(libc_base + rng.randint(0, 0xfff) * 0x100000)
        return [sp.sym(n, "/usr/lib/x86_64-linux-gnu/libc.so.6") for n in LIBC]

    def program(name, comms, pid, names, dso, base, root_names, weight, extra=None, fanout=6, exe=None):
        sp = user_space(base)
        exe_space = user_space(0x55a000000000 + rng.randint(0, 0xffff) * 0x10000) if exe else sp
        syms = [sp.sym(n, dso) for n in names]
        libc = libc_syms()
        pool = syms + (extra or [])
        wire(rng, pool, pool + libc, libc + (extra or [])[:10], fanout)
        wire(rng, libc[:4], libc[2:4], None, 1)  # malloc -> _int_malloc, …
        roots = []
        for chain in root_names:
            roots.append([sym_for(n, pool + libc, exe_space, exe or dso) for n in chain])
        for chain in roots:
            # A root chain leads to its last frame, which calls into the program.
            for a, b in zip(chain, chain[1:]):
                if b not in a.callees:
                    a.callees.append(b)
                    a.weights.append(5)
            wire(rng, [chain[-1]], pool[:200], None, 8)
        return Program(name, comms, pid, roots, pool + libc, libc, weight)

    def sym_for(n, known, sp, dso):
        """The symbol of a root chain's frame: one of the program's, else a new one."""
        for s in known:
            if s.name == n:
                return s
        if n.startswith("__libc_start") or n in ("start_thread", "__clone3"):
            return Sym(n, "/usr/lib/x86_64-linux-gnu/libc.so.6", known[-1].addr + 0x10000 + len(n) * 0x100, 0x200)
        return sp.sym(n, dso)

    main_roots = [["_start", "__libc_start_main_impl", "__libc_start_call_main", "main"]]
    thread_roots = [["__clone3", "start_thread", "thread_main"]]

    programs.append(program("postgres", ["postgres"] * 4, 4100, c_names(rng, 2500),
                            "/usr/lib/postgresql/16/bin/postgres", 0x55d0c0a00000,
                            [["_start", "__libc_start_main_impl", "__libc_start_call_main", "main",
                              "PostmasterMain", "ServerLoop", "BackendStartup", "PostgresMain",
                              "exec_simple_query", "PortalRun", "PortalRunSelect", "standard_ExecutorRun"]],
                            30))
    programs.append(program("envoy", ["envoy", "wrk:worker_0", "wrk:worker_1", "wrk:worker_2"], 5200,
                            cpp_names(rng, 3000), "/usr/local/bin/envoy", 0x5618e4000000,
                            thread_roots + [["__clone3", "start_thread", "Envoy::Thread::ThreadImplPosix::ThreadImplPosix(std::function<void ()>, std::optional<Envoy::Thread::Options> const&)::{lambda(void*)#1}::__invoke(void*)",
                                             "Envoy::Server::WorkerImpl::threadRoutine(Envoy::Server::GuardDog&, std::function<void ()> const&)",
                                             "Envoy::Event::DispatcherImpl::run(Envoy::Event::Dispatcher::RunType)",
                                             "event_base_loop"]], 25))
    programs.append(program("tokio", ["myservice", "tokio-runtime-w", "tokio-runtime-w"], 6300,
                            rust_names(rng, 2500), "/opt/myservice/bin/myservice", 0x5581aa000000,
                            thread_roots + [["__clone3", "start_thread", "std::sys::pal::unix::thread::Thread::new::thread_start",
                                             "core::ops::function::FnOnce::call_once{{vtable.shim}}",
                                             "std::sys_common::backtrace::__rust_begin_short_backtrace",
                                             "tokio::runtime::blocking::pool::Inner::run"]], 20))
    programs.append(program("go", ["apiserver"] * 6, 7400, go_names(rng, 400), "/usr/local/bin/apiserver",
                            0x400000, [["runtime.goexit.abi0", "net/http.(*conn).serve"],
                                       ["runtime.goexit.abi0", "runtime.main", "main.main"],
                                       ["runtime.mstart.abi0", "runtime.mstart0", "runtime.mstart1", "runtime.schedule",
                                        "runtime.findRunnable"]], 10))
    # Java: JIT frames in the perf map (no offsets), the JVM's own frames in libjvm.so.
    jit = Space(rng, 0x7f1e2c000000)
    jmap = "/tmp/perf-8500.map"
    jsyms = [jit.sym(n, jmap, offsets=False) for n in java_names(rng, 700)]
    jsyms += [jit.sym("Interpreter", jmap, offsets=False), jit.sym("call_stub", jmap, offsets=False)]
    jvm = Space(rng, 0x7f1e40000000)
    jvm_syms = [jvm.sym(n, "/usr/lib/jvm/java-21-openjdk-amd64/lib/server/libjvm.so") for n in [
        "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)",
        "InterpreterRuntime::resolve_from_cache(JavaThread*, Bytecodes::Code)",
        "SharedRuntime::resolve_opt_virtual_call_C(JavaThread*)", "OptoRuntime::new_instance_C(Klass*, JavaThread*)",
        "MemAllocator::allocate() const", "G1CollectedHeap::attempt_allocation_slow(unsigned long)",
        "ObjectMonitor::enter(JavaThread*)", "G1ParScanThreadState::trim_queue_to_threshold(unsigned int)",
        "G1ParEvacuateFollowersClosure::do_void()", "WorkerThread::run()", "Thread::call_run()",
        "thread_native_entry(Thread*)", "CompileBroker::compiler_thread_loop()", "C2Compiler::compile_method(ciEnv*, ciMethod*, int, bool, DirectiveSet*)",
        "PhaseIdealLoop::build_and_optimize()", "PhaseChaitin::Register_Allocate()"]]
    # A few JIT frames with inlined callees, as perf-map-agent's unfoldall writes them.
    for _ in range(40):
        a, b = rng.choice(jsyms[:700]), rng.choice(jsyms[:700])
        jsyms.append(jit.sym(a.name + "->" + b.name, jmap, offsets=False))
    java = program("java", ["java", "http-nio-8080-e", "http-nio-8080-e", "GC Thread#0", "C2 CompilerThre"],
                   8500, [], "/usr/lib/jvm/java-21-openjdk-amd64/bin/java", 0x55e1d0000000,
                   [["__clone3", "start_thread", "thread_native_entry(Thread*)", "Thread::call_run()",
                     "JavaThread::thread_main_inner()", "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)",
                     "call_stub"]], 25, extra=jsyms + jvm_syms, fanout=5)
    programs.append(java)
    programs.append(program("python", ["python3"] * 2, 9100,
                            ["_PyEval_EvalFrameDefault", "PyObject_Vectorcall", "_PyFunction_Vectorcall",
                             "PyObject_Call", "slot_tp_call", "method_vectorcall_O", "dict_subscript",
                             "list_append", "PyUnicode_Concat", "_PyObject_Malloc", "builtin_len",
                             "PyNumber_Add", "long_add", "_PyDict_GetItem_KnownHash", "lookdict_unicode_nodummy",
                             "PyObject_GetAttr", "_PyObject_GenericGetAttrWithDict", "_PyType_Lookup",
                             "cfunction_vectorcall_FASTCALL", "PyEval_EvalCode", "run_mod", "pymain_run_python"],
                            "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", 0x7f9a11000000,
                            [main_roots[0] + ["Py_BytesMain", "Py_RunMain", "pymain_run_python", "_PyRun_AnyFileObject",
                                              "_PyRun_SimpleFileObject", "run_mod", "run_eval_code_obj", "PyEval_EvalCode"]],
                            10, exe="/usr/bin/python3.11"))
    return kernel, programs


# ---------------------------------------------------------------------------------------
# Samples

MAX_DEPTH = 60


def pick(rng, s):
    w = s.weights
    total = sum(w)
    x = rng.random() * total
    for c, wi in zip(s.callees, w):
        x -= wi
        if x < 0:
            return c
    return s.callees[-1]


def walk(rng, start, limit):
    """Extends `start` (a list of Sym, root first) down the call graph."""
    stack = list(start)
    while len(stack) < limit:
        top = stack[-1]
        if not top.callees or rng.random() < 0.01 + len(stack) * 0.001:
            break
        c = pick(rng, top)
        # Recursion: sometimes repeat the last few frames.
        if rng.random() < 0.02 and len(stack) > 4:
            k = rng.randint(1, 3)
            for _ in range(rng.randint(1, 4)):
                if len(stack) + k >= limit:
                    break
                stack.extend(stack[-k:])
        else:
            stack.append(c)
    return stack[:limit]


def kernel_tail(rng, kernel, user_leaf, room):
    """Kernel frames below a user stack (root first), or [] when the sample is in user space."""
    kf = kernel["fun"]
    chain = None
    sc = LIBC_SYSCALL.get(user_leaf.name)
    if sc and rng.random() < 0.8:
        chain = [kf[n] for n in SYSCALL_ENTRY] + [kf[sc]]
    elif rng.random() < 0.06:
        chain = [kf[n] for n in PAGE_FAULT[:rng.randint(4, len(PAGE_FAULT))]]
    elif rng.random() < 0.04:
        chain = [kf[n] for n in TIMER_IRQ[:rng.randint(3, len(TIMER_IRQ))]]
    if chain is None or room <= 0:
        return []
    return walk(rng, chain, min(room, len(chain) + rng.randint(0, 12)))


def make_stack(rng, kernel, prog):
    """A new stack of `prog`, root first, user frames then kernel frames."""
    stacks = prog.stacks
    r = rng.random()
    if stacks and r < 0.4:
        # A hot stack again: early stacks are picked far more often.
        return stacks[int(len(stacks) * rng.random() ** 6)]
    if stacks and r < 0.8:
        # Branch off a known stack part of the way down.
        base = stacks[int(len(stacks) * rng.random() ** 2)]
        user = [s for s in base if not s.kernel]
        cut = rng.randint(max(1, len(user) // 3), len(user))
        start = user[:cut]
    else:
        start = rng.choice(prog.roots)
    depth = rng.randint(20, MAX_DEPTH)
    user = walk(rng, start, max(depth - 12, len(start)))
    stack = user + kernel_tail(rng, kernel, user[-1], MAX_DEPTH - len(user))
    if rng.random() < 0.03:
        # An unwinding failure: the stack ends in an unknown frame.
        stack.insert(0, UNKNOWN_DSO if rng.random() < 0.5 else UNKNOWN)
    stacks.append(stack)
    return stack


UNKNOWN = Sym("[unknown]", "[unknown]", 0x7f50a90f2ad7, 1, offsets=False)
UNKNOWN_DSO = Sym("[unknown]", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", 0x7f50a8e12000, 0x200000, offsets=False)


def kernel_only(rng, kernel, chain_names):
    kf = kernel["fun"]
    chain = [kf[n] for n in chain_names]
    if chain_names is IDLE:
        cut = rng.randint(len(chain) - 4, len(chain))
        stack = chain[:cut]
        if rng.random() < 0.2:
            stack = stack + [kf[n] for n in TIMER_IRQ[:rng.randint(3, len(TIMER_IRQ))]]
        return stack
    return walk(rng, chain, len(chain) + rng.randint(0, 15))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=120000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    kernel, programs = build_world(rng)
    weights = [p.weight for p in programs] + [10, 3, 2]  # + swapper, kworker, ksoftirqd
    total_w = sum(weights)
    out = open(a.output, "w", encoding="utf-8", newline="\n") if a.output else sys.stdout
    buf = []
    t = 84123.000000
    frame_cache = {}

    def frame(s, leaf):
        # `\t<addr> func+0x<off> (dso)`: the offset of a return address is fixed per call
        # site, the leaf's is wherever the instruction pointer was.
        if not s.offsets:
            return "\t%16x %s (%s)\n" % (s.addr + (rng.randrange(s.size) if leaf else 0), s.name, s.dso)
        if leaf:
            off = rng.randrange(s.size)
            return "\t%16x %s+0x%x (%s)\n" % (s.addr + off, s.name, off, s.dso)
        f = frame_cache.get(id(s))
        if f is None:
            off = rng.randrange(1, s.size)
            f = frame_cache[id(s)] = "\t%16x %s+0x%x (%s)\n" % (s.addr + off, s.name, off, s.dso)
        return f

    for i in range(a.samples):
        t += rng.random() * 0.0004
        x = rng.random() * total_w
        k = 0
        while x >= weights[k]:
            x -= weights[k]
            k += 1
        if k < len(programs):
            p = programs[k]
            ti = rng.randrange(len(p.comms))
            comm, pid, tid = p.comms[ti], p.pid, p.pid + ti
            stack = make_stack(rng, kernel, p)
        elif k == len(programs):
            comm, pid, tid = "swapper", 0, 0
            stack = kernel_only(rng, kernel, IDLE)
        elif k == len(programs) + 1:
            comm, pid, tid = "kworker/u16:3", 312, 312
            stack = kernel_only(rng, kernel, KTHREAD)
        else:
            comm, pid, tid = "ksoftirqd/1", 24, 24
            stack = kernel_only(rng, kernel, SOFTIRQ)
        period = rng.randint(150000, 2600000)
        buf.append("%s %7d/%-7d %.6f: %10d cycles: \n" % (comm, pid, tid, t, period))
        n = len(stack)
        for j in range(n - 1, -1, -1):
            buf.append(frame(stack[j], j == n - 1))
        buf.append("\n")
        if len(buf) > 20000:
            out.write("".join(buf))
            buf.clear()
    out.write("".join(buf))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
