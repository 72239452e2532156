//! Synthetic profiles: the deterministic folded-stack inputs (`small`, `large`, `huge`) that
//! the benches and tests measure flamesite on, made here so that every machine builds the
//! same reference bytes without downloading anything.
//!
//! A profile is grown as a prefix tree. A few process roots (`java;clone3;start_thread;…`,
//! `swapper;…_[k]`) form a narrow trunk; every new stack starts from an earlier one (most
//! often a recent one), climbs a few frames up from its leaf and walks down again through a
//! fixed per-function call graph, so leaves are bushy and prefixes long and shared, as in a
//! real profile. Callee lists favour hot functions (`malloc`, `memcpy`, `push_back`, …), keep
//! to a language (kernel frames only call kernel frames) and sometimes repeat a cycle of the
//! last frames (direct and mutual recursion). Names are the awkward ones real profilers print:
//! C++ templates, lambdas and operators, Rust trait impls, Java `_[j]`, kernel `_[k]`, Go
//! `pkg.(*T).Method`, libc, `[unknown]` and hex addresses. Counts are heavy-tailed: half the
//! stacks are seen once, a few about 10^5 times. Lines come out in the order they are made:
//! clustered, like py-spy's output, not sorted.
//!
//! Exactly [`SynthParams::stacks`] distinct stacks are written, none deeper than
//! [`SynthParams::max_depth`] (at least 1). The output is a pure function of the parameters:
//! the generator has its own PRNG, uses integer arithmetic and IEEE `+ - * /` only (no `powf`
//! or `ln`, whose last bits vary between libms), never iterates a hash map, and does not
//! depend on pointer width, so the same parameters give the same bytes on every platform and
//! release. Changing the algorithm changes the reference inputs: treat it as a format.
//!
//! Presets, measured with seed 1 (other seeds differ by up to about 10%): *small* 10,000
//! stacks, 34k boxes, 7.7 MB, depth ≤ 64; *large* 200,000 stacks, 764k boxes, 229 MB
//! (11.9 MB gzipped), depth ≤ 120, made in about a second; *huge* 1,000,000 stacks, 3.0M
//! boxes, 1.2 GB (55 MB gzipped). A box is a node of the merged flame-graph tree.

use std::io::{self, BufWriter, Write};

use rustc_hash::FxHashMap;

/// Preset sizes from the design's quality bars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// About 10k unique stacks (≈ 33k boxes), at most 64 deep.
    Small,
    /// About 200k unique stacks (≈ 780k boxes, ≈ 220 MB of text), at most 120 deep.
    Large,
    /// About 1M unique stacks (≈ 3M boxes), at most 120 deep.
    Huge,
}

impl Size {
    /// Reads `"small"`, `"large"` or `"huge"`; anything else is `None`.
    pub fn parse(s: &str) -> Option<Size> {
        match s {
            "small" => Some(Size::Small),
            "large" => Some(Size::Large),
            "huge" => Some(Size::Huge),
            _ => None,
        }
    }
}

/// Knobs of one generated profile.
#[derive(Clone, Debug)]
pub struct SynthParams {
    /// Number of distinct stacks (lines) to write.
    pub stacks: usize,
    /// Largest number of frames in a stack; 0 is taken as 1.
    pub max_depth: usize,
    /// Seed of the generator: another seed gives another profile of the same shape.
    pub seed: u64,
}

impl SynthParams {
    /// The parameters of a preset size.
    pub fn preset(size: Size, seed: u64) -> SynthParams {
        let (stacks, max_depth) = match size {
            Size::Small => (10_000, 64),
            Size::Large => (200_000, 120),
            Size::Huge => (1_000_000, 120),
        };
        SynthParams {
            stacks,
            max_depth,
            seed,
        }
    }
}

/// Writes the profile as folded stacks. Same params => same bytes, on every platform and release.
pub fn generate(params: &SynthParams, out: &mut dyn Write) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, out);
    if params.stacks > 0 {
        Generator::new(params).run(params.stacks, &mut out)?;
    }
    out.flush()
}

// ---------------------------------------------------------------------------------------
// Tuning. Each constant is a probability or a mean; they were calibrated against the
// preset targets above, so changing one changes the reference inputs.

/// Chance that a stack starts afresh from a process root instead of forking an earlier one.
const P_FRESH: f64 = 0.02;
/// Chance that the stack forked is one of the last [`RECENT`] ones rather than any earlier
/// one of a process chosen by its weight (by weight rather than by how many stacks it has so
/// far, so that the first process drawn does not snowball and the mix of languages, hence
/// the size of the output, is much the same for every seed).
const P_RECENT: f64 = 0.9;
/// How many of the latest stacks count as recent.
const RECENT: u64 = 8;
/// Chance of forking at a uniformly chosen depth rather than a few frames above the leaf;
/// this pulls depths back toward the middle so they do not drift as the profile grows.
const P_MID_FORK: f64 = 0.1;
/// ... plus this times (depth / depth limit)^2: deep stacks (recursion) have fewer deep
/// children, else their clusters would fill the profile.
const P_MID_FORK_DEEP: f64 = 0.5;
/// Mean number of frames climbed above the forked stack's leaf.
const MEAN_BACKOFF: f64 = 3.5;
/// Chance that the new stack ends right at the fork point (self time of an interior frame),
/// in a tiny profile ...
const P_SELF: f64 = 0.05;
/// ... plus this times (stacks / (stacks + [`SELF_STACKS`]))^2: the longer a recording, the
/// likelier that an interior frame was also sampled in its own code. This is what makes a
/// big profile's tree grow more slowly than its number of stacks (small ≈ 3.3 boxes per
/// stack, large ≈ 3.9 with its deeper stacks, huge ≈ 3).
const P_SELF_GROWTH: f64 = 1.2;
/// See [`P_SELF_GROWTH`].
const SELF_STACKS: f64 = 1_000_000.0;
/// Chance of a deep dive: recursion down to (nearly) the depth limit.
const P_DIVE: f64 = 0.004;
/// Per-frame chance of stopping the walk down, at depth 0 ...
const STOP_BASE: f64 = 0.03;
/// ... plus this times (depth / typical depth)^2, so deep stacks tend to end soon.
const STOP_GROWTH: f64 = 0.2;
/// Typical depth: this many frames plus [`TYPICAL_DEPTH`] times the depth limit. The
/// constant leaves room below the process trunks (up to 8 frames) even in shallow profiles.
const TYPICAL_DEPTH_BASE: f64 = 5.0;
/// See [`TYPICAL_DEPTH_BASE`].
const TYPICAL_DEPTH: f64 = 0.35;
/// Per-frame chance of a recursion burst: the last 1 to 3 frames repeated a few times.
const P_RECURSE: f64 = 0.02;
/// Mean number of extra repetitions in a recursion burst.
const MEAN_RECURSE_REPS: f64 = 2.5;
/// Per-frame chance of calling outside the callee list: virtual calls, callbacks, interrupts.
const P_INDIRECT: f64 = 0.1;
/// Chance that a call outside the callee list lands on any function, hot or not.
const P_RARE: f64 = 0.15;
/// Most callees a function has.
const MAX_FANOUT: u64 = 12;
/// Attempts at a new distinct stack before falling back to a fresh unsymbolized frame.
const MAX_ATTEMPTS: usize = 64;
/// Chance that a count doubles once more: P(count >= 2^k) = this^k, a Pareto tail of index
/// ~1.1 (0.4665 ≈ 2^-1.1).
const COUNT_TAIL: f64 = 0.4665;
/// Largest count exponent: counts stay below 2^(this+1).
const COUNT_MAX_EXP: u32 = 20;
/// Callee popularity within a language is Zipf-like, weight 1/(rank + this): with 1, the
/// few hottest functions are everywhere, as malloc and memcpy are in real profiles, and the
/// text compresses about as well as real folded stacks (≈ 18×); larger values flatten it.
const ZIPF_OFFSET: u64 = 1;

// ---------------------------------------------------------------------------------------
// PRNG

/// SplitMix64: tiny, fast, full period, and fully specified, so streams never change.
struct Rng(u64);

impl Rng {
    /// A stream for one purpose (`lane`) of one seed, so the vocabulary does not shift when,
    /// say, the number of stacks changes.
    fn new(seed: u64, lane: u64) -> Rng {
        let mut r = Rng(seed ^ lane.wrapping_mul(0xA076_1D64_78BD_642F));
        r.next();
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift: no modulo bias worth the name.
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }

    fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// Uniform in [0, 1), exact: 53 random bits scaled by a power of two.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.index(xs.len())]
    }

    /// Failures before the first success, with the given mean.
    fn geometric(&mut self, mean: f64) -> usize {
        let go_on = mean / (mean + 1.0);
        let mut n = 0;
        while n < 10_000 && self.chance(go_on) {
            n += 1;
        }
        n
    }
}

/// A choice of `0..n` with fixed integer weights, so that it is exact.
struct Weighted {
    cumulative: Vec<u64>,
}

impl Weighted {
    fn new(weights: impl IntoIterator<Item = u64>) -> Weighted {
        let mut acc = 0u64;
        let cumulative = weights
            .into_iter()
            .map(|w| {
                acc += w;
                acc
            })
            .collect();
        Weighted { cumulative }
    }

    /// Zipf-like: weight 1/(i + [`ZIPF_OFFSET`]), so index 0 is the hottest.
    fn zipf(n: usize) -> Weighted {
        Weighted::new((0..n as u64).map(|i| (1u64 << 40) / (i + ZIPF_OFFSET)))
    }

    fn draw(&self, rng: &mut Rng) -> usize {
        let total = *self.cumulative.last().expect("a choice among nothing");
        let x = rng.below(total);
        self.cumulative.partition_point(|&c| c <= x)
    }
}

// ---------------------------------------------------------------------------------------
// Names

/// The kinds of code a profile mixes; each has its own names and its own callees.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lang {
    Cpp,
    Rust,
    Java,
    Go,
    Libc,
    Kernel,
    Unknown,
}

const LANGS: [Lang; 7] = [
    Lang::Cpp,
    Lang::Rust,
    Lang::Java,
    Lang::Go,
    Lang::Libc,
    Lang::Kernel,
    Lang::Unknown,
];

impl Lang {
    /// Share of the vocabulary, in percent.
    fn share(self) -> usize {
        match self {
            Lang::Cpp => 34,
            Lang::Rust => 17,
            Lang::Java => 16,
            Lang::Go => 12,
            Lang::Libc => 7,
            Lang::Kernel => 10,
            Lang::Unknown => 4,
        }
    }

    /// Weights of the languages a function of this language calls, in [`LANGS`] order:
    /// user code calls libc and is interrupted by the kernel; the kernel calls only itself.
    fn callee_mix(self) -> [u32; 7] {
        match self {
            Lang::Cpp => [80, 2, 0, 0, 12, 4, 2],
            Lang::Rust => [1, 84, 0, 0, 10, 3, 2],
            Lang::Java => [5, 0, 85, 0, 4, 3, 3],
            Lang::Go => [0, 0, 0, 94, 0, 4, 2],
            Lang::Libc => [0, 0, 0, 0, 55, 45, 0],
            Lang::Kernel => [0, 0, 0, 0, 0, 100, 0],
            Lang::Unknown => [20, 0, 0, 0, 30, 10, 40],
        }
    }

    /// Chance that a function calls nothing.
    fn leaf_chance(self) -> f64 {
        match self {
            Lang::Libc => 0.25,
            Lang::Kernel => 0.2,
            Lang::Unknown => 0.3,
            _ => 0.06,
        }
    }

    /// Extra per-frame chance of ending the walk in this language: kernel and libc paths
    /// are short.
    fn stop_bonus(self) -> f64 {
        match self {
            Lang::Kernel => 0.15,
            Lang::Libc => 0.1,
            _ => 0.0,
        }
    }

    /// Whether code of this language recurses (the kernel and libc, here, do not).
    fn recurses(self) -> bool {
        !matches!(self, Lang::Kernel | Lang::Libc)
    }

    /// Chance that a function calls itself (on top of recursion bursts): interpreters,
    /// tree walkers, `[unknown];[unknown];…` runs.
    fn self_call_chance(self) -> f64 {
        match self {
            Lang::Unknown => 0.3,
            Lang::Kernel => 0.01,
            _ => 0.04,
        }
    }

    /// Real hot spots, listed first so that the Zipf choice of callees favours them.
    fn hot(self) -> &'static [&'static str] {
        match self {
            Lang::Cpp => CPP_HOT,
            Lang::Rust => RUST_HOT,
            Lang::Java => JAVA_HOT,
            Lang::Go => GO_HOT,
            Lang::Libc => LIBC_HOT,
            Lang::Kernel => KERNEL_HOT,
            Lang::Unknown => UNKNOWN_HOT,
        }
    }

    fn make_name(self, rng: &mut Rng) -> String {
        match self {
            Lang::Cpp => cpp_name(rng),
            Lang::Rust => rust_name(rng),
            Lang::Java => java_name(rng),
            Lang::Go => go_name(rng),
            Lang::Libc => libc_name(rng),
            Lang::Kernel => kernel_name(rng),
            Lang::Unknown => unknown_name(rng),
        }
    }

    /// `name` made distinct by a suffix the toolchain itself would print, numbered `n`.
    fn disambiguate(self, name: &str, n: usize) -> String {
        match self {
            Lang::Cpp => format!("{name} [clone .constprop.{n}]"),
            Lang::Rust => format!("{name}::h{:016x}", mix64(n as u64)),
            Lang::Java => match name.strip_suffix("_[j]") {
                Some(stem) => format!("{stem}${n}_[j]"),
                None => format!("{name}${n}"),
            },
            Lang::Go => format!("{name}.func{n}"),
            Lang::Libc => format!("{name}.part.{n}"),
            Lang::Kernel => {
                let stem = name.strip_suffix("_[k]").unwrap_or(name);
                format!("{stem}.isra.{n}_[k]")
            }
            Lang::Unknown => format!("{name}+0x{:x}", 16 * n),
        }
    }
}

/// A 64-bit finalizer, for hash-looking suffixes.
fn mix64(x: u64) -> u64 {
    Rng(x).next()
}

const CPP_HOT: &[&str] = &[
    "operator new(unsigned long)",
    "operator delete(void*, unsigned long)",
    "std::vector<int, std::allocator<int> >::push_back(int const&)",
    "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_mutate(unsigned long, unsigned long, char const*, unsigned long)",
    "std::_Hashtable<unsigned long, std::pair<unsigned long const, Entry*>, std::allocator<std::pair<unsigned long const, Entry*> >, std::__detail::_Select1st, std::equal_to<unsigned long>, std::hash<unsigned long>, std::__detail::_Mod_range_hashing, std::__detail::_Default_ranged_hash, std::__detail::_Prime_rehash_policy, std::__detail::_Hashtable_traits<false, false, true> >::_M_find_before_node(unsigned long, unsigned long const&, unsigned long) const",
    "std::mutex::lock()",
    "std::__shared_count<(__gnu_cxx::_Lock_policy)2>::~__shared_count()",
    "std::_Rb_tree_increment(std::_Rb_tree_node_base*)",
    "std::condition_variable::wait(std::unique_lock<std::mutex>&)",
    "void std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >::_M_realloc_insert<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&>(__gnu_cxx::__normal_iterator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >*, std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > > >, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)",
];

#[rustfmt::skip]
const RUST_HOT: &[&str] = &[
    "__rust_alloc", "__rust_dealloc", "alloc::raw_vec::RawVec<T,A>::grow_one",
    "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop",
    "core::ptr::drop_in_place<alloc::string::String>",
    "hashbrown::raw::RawTable<T,A>::reserve_rehash",
    "<core::hash::sip::Hasher<S> as core::hash::Hasher>::write", "core::fmt::write",
    "<&T as core::fmt::Display>::fmt", "alloc::fmt::format::format_inner",
];

#[rustfmt::skip]
const JAVA_HOT: &[&str] = &[
    "java/util/HashMap.getNode_[j]", "java/util/HashMap.putVal_[j]",
    "java/lang/String.hashCode_[j]", "java/lang/String.equals_[i]", "java/util/ArrayList.add_[j]",
    "java/util/Arrays.copyOf_[j]", "java/lang/StringBuilder.append_[j]",
    "java/util/concurrent/ConcurrentHashMap.get_[j]", "jdk/internal/misc/Unsafe.park_[j]",
    "java/lang/Object.<init>_[i]",
];

#[rustfmt::skip]
const GO_HOT: &[&str] = &[
    "runtime.mallocgc", "runtime.memmove", "runtime.growslice", "runtime.mapaccess2_faststr",
    "runtime.newobject", "runtime.memclrNoHeapPointers", "runtime.scanobject", "sync.(*Mutex).Lock",
    "runtime.selectgo", "runtime.mapassign_faststr",
];

#[rustfmt::skip]
const LIBC_HOT: &[&str] = &[
    "malloc", "free", "__memmove_avx_unaligned_erms", "memcpy", "_int_malloc", "_int_free",
    "__memset_avx2_unaligned_erms", "pthread_mutex_lock", "__strlen_avx2", "__lll_lock_wait",
];

#[rustfmt::skip]
const KERNEL_HOT: &[&str] = &[
    "clear_page_erms_[k]", "copy_user_enhanced_fast_string_[k]",
    "native_queued_spin_lock_slowpath_[k]", "_raw_spin_lock_[k]", "asm_exc_page_fault_[k]",
    "entry_SYSCALL_64_after_hwframe_[k]", "do_syscall_64_[k]", "__schedule_[k]",
    "finish_task_switch.isra.0_[k]", "handle_mm_fault_[k]",
];

#[rustfmt::skip]
const UNKNOWN_HOT: &[&str] = &[
    "[unknown]", "[vdso]", "[libjvm.so]", "[anon:v8]", "[libc.so.6]",
];

#[rustfmt::skip]
const CPP_NAMESPACES: &[&str] = &[
    "std", "std::__detail", "absl::lts_20240116", "absl::container_internal", "boost::asio::detail",
    "folly", "folly::detail", "llvm", "clang::Sema", "v8::internal", "rocksdb", "duckdb",
    "arrow::compute::internal", "grpc_core", "Envoy::Http", "mysql::binlog", "tensorflow::grappler",
    "pg", "shop::checkout", "shop::(anonymous namespace)", "render::gl", "net::quic",
];

#[rustfmt::skip]
const CPP_CLASSES: &[&str] = &[
    "RequestRouter", "ThreadPool", "BlockCache", "WriteBatch", "SkipList", "Arena", "StringPiece",
    "FlatHashMap", "Tokenizer", "AstVisitor", "Lexer", "QueryPlanner", "Compactor", "MemTable",
    "Iterator", "Status", "Slice", "EventLoop", "TimerWheel", "JsonWriter", "Decoder", "RingBuffer",
    "Worker", "Histogram", "Tensor", "Shape", "Graph", "Matrix4", "Allocator", "ObjectPool",
    "Session", "Connection", "Frame", "Codec",
];

#[rustfmt::skip]
const CPP_METHODS: &[&str] = &[
    "Run", "Process", "Lookup", "Insert", "Erase", "Flush", "Append", "Seek", "Next", "Compare",
    "Hash", "Serialize", "Parse", "Visit", "Emit", "Resize", "Reserve", "Get", "Put", "Schedule",
    "Wait", "Compute", "Apply", "Reduce", "MergeFrom", "handle_read", "do_complete", "try_emplace",
];

#[rustfmt::skip]
const CPP_OPERATORS: &[&str] = &[
    "operator()", "operator==", "operator<", "operator<=>", "operator<<", "operator>>",
    "operator[]", "operator->", "operator=", "operator&=", "operator&&", "operator*",
    "operator bool", "operator new[]", "operator delete", "operator\"\" _ms",
];

const CPP_SCALARS: &[&str] = &[
    "int",
    "long",
    "unsigned long",
    "unsigned char",
    "char",
    "char const*",
    "double",
    "float",
    "bool",
    "void*",
    "std::size_t",
    "std::string_view",
    "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
];

#[rustfmt::skip]
const RUST_CRATES: &[&str] = &[
    "myapp", "myapp::server", "myapp::storage::naïve",
    "tokio::runtime::scheduler::multi_thread::worker", "tokio::runtime::task::harness",
    "hyper::proto::h1::dispatch", "serde_json::de", "rayon_core::registry",
    "regex_automata::meta::strategy", "sqlx_core::pool::inner", "tracing_subscriber::fmt::format",
    "axum::routing", "image::codecs::png",
];

#[rustfmt::skip]
const RUST_TYPES: &[&str] = &[
    "Worker", "Harness", "Dispatcher", "Deserializer", "Registry", "Pool", "Router", "Encoder",
    "Cache", "Shard", "Segment", "Parser",
];

#[rustfmt::skip]
const RUST_METHODS: &[&str] = &[
    "run", "poll", "new", "get", "insert", "remove", "step", "flush", "parse_value", "handle",
    "try_recv", "with_capacity", "spawn", "search", "decode_row",
];

/// Self types of trait impls, with the generic parameters rustc prints.
#[rustfmt::skip]
const RUST_SELF_TYPES: &[&str] = &[
    "alloc::vec::Vec<T,A>", "alloc::vec::Vec<u8>", "hashbrown::map::HashMap<K,V,S,A>", "&'a mut W",
    "&T", "[T]", "(A, B)", "core::pin::Pin<P>",
    "alloc::boxed::Box<dyn core::error::Error + Send + Sync>", "core::option::Option<T>",
    "core::iter::adapters::map::Map<I,F>", "F", "std::io::buffered::bufwriter::BufWriter<W>",
    "tokio::runtime::task::core::Stage<T>",
];

/// Traits with methods they really have.
const RUST_TRAITS: &[(&str, &[&str])] = &[
    ("core::future::future::Future", &["poll"]),
    (
        "core::iter::traits::iterator::Iterator",
        &["next", "fold", "size_hint"],
    ),
    ("core::ops::function::FnOnce<()>", &["call_once"]),
    ("core::ops::function::FnMut<(&T,)>", &["call_mut"]),
    ("core::ops::drop::Drop", &["drop"]),
    ("core::clone::Clone", &["clone"]),
    ("core::fmt::Debug", &["fmt"]),
    ("serde::de::Deserialize", &["deserialize"]),
    ("std::io::Write", &["write", "write_all", "flush"]),
    ("core::hash::Hash", &["hash"]),
];

#[rustfmt::skip]
const JAVA_PACKAGES: &[&str] = &[
    "com/acme/orders", "com/acme/orders/internal", "org/apache/kafka/clients/consumer/internals",
    "java/util/concurrent", "java/util/stream", "io/netty/channel/epoll",
    "io/netty/handler/codec/http", "org/springframework/web/servlet",
    "com/fasterxml/jackson/databind/deser", "java/lang", "jdk/internal/misc",
    "scala/collection/immutable", "kotlinx/coroutines", "org/eclipse/jetty/server",
];

#[rustfmt::skip]
const JAVA_CLASSES: &[&str] = &[
    "OrderService", "OrderRepository", "Fetcher", "ThreadPoolExecutor", "ReferencePipeline",
    "EpollEventLoop", "HttpObjectDecoder", "DispatcherServlet", "BeanDeserializer", "Thread",
    "Unsafe", "HashMap", "Vector", "ContinuationImpl", "HttpChannel", "Größe",
];

#[rustfmt::skip]
const JAVA_METHODS: &[&str] = &[
    "run", "process", "doDispatch", "handle", "decode", "deserialize", "submit", "runWorker",
    "getTask", "fetchRecords", "poll", "resumeWith", "invokeSuspend", "<init>", "<clinit>",
    "lambda$run$0", "access$100", "forEach", "collect",
];

#[rustfmt::skip]
const GO_PACKAGES: &[&str] = &[
    "main", "net/http", "net", "runtime", "encoding/json", "github.com/acme/billing/internal/store",
    "github.com/acme/billing/api", "google.golang.org/grpc",
    "google.golang.org/protobuf/internal/impl", "go.uber.org/zap/zapcore", "sync", "bufio",
    "crypto/tls", "database/sql",
];

#[rustfmt::skip]
const GO_TYPES: &[&str] = &[
    "conn", "Server", "Client", "decodeState", "Encoder", "DB", "Tx", "Stmt", "Conn", "Reader",
    "Writer", "ioEntry", "ClientConn", "Store", "Pool", "jsonEncoder",
];

#[rustfmt::skip]
const GO_METHODS: &[&str] = &[
    "serve", "ServeHTTP", "Read", "Write", "Flush", "object", "value", "Exec", "QueryContext",
    "Invoke", "Get", "Put", "handleStream", "processUnaryRPC", "readRecord", "EncodeEntry",
];

#[rustfmt::skip]
const LIBC_STEMS: &[&str] = &[
    "malloc", "free", "calloc", "realloc", "memcpy", "memmove", "memset", "memcmp", "memchr",
    "strlen", "strcmp", "strncmp", "strchr", "strstr", "qsort_r", "bsearch", "pthread_mutex_unlock",
    "pthread_cond_wait", "pthread_cond_signal", "pthread_once", "read", "write", "pread64",
    "pwrite64", "readv", "writev", "epoll_wait", "poll", "recvmsg", "sendmsg", "sendto", "recvfrom",
    "accept4", "connect", "open64", "close", "fstat64", "lseek64", "mmap64", "munmap", "mprotect",
    "madvise", "brk", "syscall", "clock_gettime", "nanosleep", "sched_yield", "fwrite", "fflush",
    "vfprintf", "snprintf", "strtod", "dl_iterate_phdr", "_dl_runtime_resolve_xsavec",
    "_dl_lookup_symbol_x", "__tls_get_addr", "inflate", "deflate_slow", "crc32_z", "adler32_z",
    "SSL_read", "SSL_write", "EVP_EncryptUpdate", "aesni_gcm_encrypt",
    "sha256_block_data_order_avx2", "ZSTD_compressBlock_doubleFast", "ZSTD_decompressDCtx",
    "LZ4_compress_fast", "sqlite3VdbeExec", "sqlite3BtreeTableMoveto", "_PyEval_EvalFrameDefault",
    "PyObject_Vectorcall", "luaV_execute", "sysmalloc", "malloc_consolidate", "unlink_chunk",
];

const LIBC_PREFIXES: &[&str] = &["", "", "", "", "__", "__GI_", "__libc_", "__GI___libc_"];

#[rustfmt::skip]
const LIBC_SUFFIXES: &[&str] = &[
    "", "", "", "_avx2", "_evex", "_sse2_unaligned", "_avx_unaligned_erms", "@plt", "@@GLIBC_2.2.5",
    "_nocancel", "_internal",
];

#[rustfmt::skip]
const KERNEL_HOT_STEMS: &[&str] = &[
    "do_user_addr_fault", "exc_page_fault", "__handle_mm_fault", "do_anonymous_page", "ep_poll",
    "do_epoll_wait", "futex_wait_queue", "do_futex", "__x64_sys_futex", "syscall_exit_to_user_mode",
    "__do_softirq", "net_rx_action", "tcp_sendmsg_locked", "schedule_hrtimeout_range_clock",
    "hrtimer_interrupt", "update_process_times", "asm_sysvec_apic_timer_interrupt",
];

#[rustfmt::skip]
const KERNEL_SUBSYSTEMS: &[&str] = &[
    "tcp_", "udp_", "ip_", "ext4_", "xfs_", "btrfs_", "nvme_", "blk_mq_", "folio_", "mem_cgroup_",
    "kmem_cache_", "vfs_", "sock_", "skb_", "netif_", "napi_", "sched_", "rcu_", "hrtimer_", "irq_",
    "kvm_", "bpf_", "filemap_", "shmem_", "do_", "__x64_sys_", "fsnotify_", "security_", "iommu_",
    "virtio_", "__",
];

const KERNEL_VERBS: &[&str] = &[
    "alloc", "free", "read", "write", "map", "unmap", "lookup", "insert", "update", "flush",
    "submit", "complete", "wake", "wait", "lock", "charge", "queue", "dequeue", "copy", "clear",
    "release", "get", "put", "account", "poll", "send", "recv", "rcv", "xmit", "fault", "scan",
    "reclaim", "migrate", "split",
];

#[rustfmt::skip]
const KERNEL_OBJECTS: &[&str] = &[
    "", "", "_page", "_pages", "_folio", "_skb", "_bio", "_rq", "_inode", "_dentry", "_entry",
    "_range", "_node", "_task", "_event", "_iter", "_irq", "_one", "_batch", "_locked", "_slowpath",
    "_fast",
];

#[rustfmt::skip]
const KERNEL_SUFFIXES: &[&str] = &[
    "", "", "", "", ".isra.0", ".constprop.0", ".part.0", ".cold",
];

#[rustfmt::skip]
const UNKNOWN_LIBS: &[&str] = &[
    "[libcrypto.so.3]", "[libstdc++.so.6.0.32]", "[libpython3.12.so.1.0]", "[perf-4242.map]",
    "[libnode.so.115]", "[anon:libc_malloc]",
];

/// Closes a C++ template argument list the way c++filt does: `> >`, never `>>`.
fn close_template(s: &mut String) {
    if s.ends_with('>') {
        s.push(' ');
    }
    s.push('>');
}

/// A C++ type as a demangler prints it, nested at most `depth` templates deep.
fn cpp_type(rng: &mut Rng, depth: u32) -> String {
    let mut t = if depth == 0 || rng.chance(0.7) {
        if rng.chance(0.5) {
            rng.pick(CPP_SCALARS).to_string()
        } else {
            let ns = rng.pick(CPP_NAMESPACES);
            format!("{ns}::{}", rng.pick(CPP_CLASSES))
        }
    } else {
        let inner = cpp_type(rng, depth - 1);
        let mut s = String::new();
        match rng.below(7) {
            0 => {
                s.push_str("std::vector<");
                s.push_str(&inner);
                s.push_str(", std::allocator<");
                s.push_str(&inner);
                close_template(&mut s);
            }
            1 => {
                s.push_str("std::unique_ptr<");
                s.push_str(&inner);
                s.push_str(", std::default_delete<");
                s.push_str(&inner);
                close_template(&mut s);
            }
            2 => {
                s.push_str("std::shared_ptr<");
                s.push_str(&inner);
            }
            3 => {
                s.push_str("std::optional<");
                s.push_str(&inner);
            }
            4 => {
                s.push_str("std::function<");
                s.push_str(rng.pick(&["void", "bool", "int"]));
                s.push_str(" (");
                s.push_str(&inner);
                s.push_str("&)");
            }
            5 => {
                s.push_str("std::pair<");
                s.push_str(rng.pick(CPP_SCALARS));
                s.push_str(" const, ");
                s.push_str(&inner);
            }
            _ => {
                s.push_str("absl::flat_hash_map<");
                s.push_str(rng.pick(&["int", "unsigned long", "std::string_view"]));
                s.push_str(", ");
                s.push_str(&inner);
            }
        }
        close_template(&mut s);
        s
    };
    if rng.chance(0.2) {
        t.push_str(rng.pick(&["*", "&", " const&", "&&", " const*"]));
    }
    t
}

fn cpp_params(rng: &mut Rng) -> String {
    let n = rng.below(3);
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&cpp_type(rng, 1));
    }
    if rng.chance(0.03) {
        s = if s.is_empty() {
            "...".into()
        } else {
            s + ", ..."
        };
    }
    s
}

fn cpp_name(rng: &mut Rng) -> String {
    let ns = rng.pick(CPP_NAMESPACES);
    let class = rng.pick(CPP_CLASSES);
    if rng.chance(0.12) {
        // a free function, sometimes a template with its return type printed first
        let func = rng.pick(&[
            "visit_all",
            "hash_combine",
            "encode_varint",
            "sort_runs",
            "dispatch",
        ]);
        return if rng.chance(0.4) {
            let t = cpp_type(rng, 1);
            let mut name = format!("void {ns}::{func}<{t}");
            close_template(&mut name);
            format!("{name}({t})")
        } else {
            format!("{ns}::{func}({})", cpp_params(rng))
        };
    }
    let mut scope = format!("{ns}::{class}");
    if rng.chance(0.3) {
        scope.push('<');
        for i in 0..1 + rng.below(2) {
            if i > 0 {
                scope.push_str(", ");
            }
            scope.push_str(&cpp_type(rng, 2));
        }
        close_template(&mut scope);
    }
    let method = match rng.below(10) {
        0 => class.to_string(),
        1 => format!("~{class}"),
        2 | 3 => rng.pick(CPP_OPERATORS).to_string(),
        _ => rng.pick(CPP_METHODS).to_string(),
    };
    let params = cpp_params(rng);
    let mut name = format!("{scope}::{method}({params})");
    let r = rng.unit();
    if r < 0.08 {
        let lambda_arg = cpp_type(rng, 1);
        let n = 1 + rng.below(3);
        name = format!("{name}::{{lambda({lambda_arg})#{n}}}::operator()({lambda_arg}) const");
    } else if r < 0.2 {
        name.push_str(" const");
    } else if r < 0.24 {
        name.push_str(rng.pick(&[" [clone .cold]", " [clone .isra.0]", " &&"]));
    }
    name
}

fn rust_name(rng: &mut Rng) -> String {
    let krate = rng.pick(RUST_CRATES);
    let ty = rng.pick(RUST_TYPES);
    let mut name = match rng.below(10) {
        0..=3 => {
            let (tr, methods) = RUST_TRAITS[rng.index(RUST_TRAITS.len())];
            let method = rng.pick(methods);
            let self_ty = if rng.chance(0.4) {
                format!("{krate}::{ty}")
            } else {
                rng.pick(RUST_SELF_TYPES).to_string()
            };
            format!("<{self_ty} as {tr}>::{method}")
        }
        4..=6 => format!("{krate}::{ty}::{}", rng.pick(RUST_METHODS)),
        7 => format!("{krate}::{ty}<T>::{}", rng.pick(RUST_METHODS)),
        8 => format!("core::ptr::drop_in_place<{krate}::{ty}>"),
        _ => format!("{krate}::{}", rng.pick(RUST_METHODS)),
    };
    if rng.chance(0.2) {
        name.push_str(if rng.chance(0.8) {
            "::{{closure}}"
        } else {
            "::{{closure}}::{{closure}}"
        });
    }
    name
}

fn java_name(rng: &mut Rng) -> String {
    let pkg = rng.pick(JAVA_PACKAGES);
    let mut class = rng.pick(JAVA_CLASSES).to_string();
    match rng.below(10) {
        0 => class = format!("{class}$Worker"),
        1 => {
            class = format!(
                "{class}$$Lambda/0x{:016x}",
                0x8_0000_0000 + 8 * rng.below(1 << 20)
            )
        }
        _ => {}
    }
    let method = rng.pick(JAVA_METHODS);
    // async-profiler and perf-map-agent mark compiled `_[j]` and inlined `_[i]` frames;
    // interpreted frames carry no suffix
    let suffix = match rng.below(20) {
        0..=13 => "_[j]",
        14..=16 => "_[i]",
        _ => "",
    };
    format!("{pkg}/{class}.{method}{suffix}")
}

fn go_name(rng: &mut Rng) -> String {
    let pkg = rng.pick(GO_PACKAGES);
    let ty = rng.pick(GO_TYPES);
    let method = rng.pick(GO_METHODS);
    let mut name = match rng.below(8) {
        0..=3 => format!("{pkg}.(*{ty}).{method}"),
        4 => format!("{pkg}.{ty}.{method}"),
        5 => format!("{pkg}.{method}[go.shape.*uint8,go.shape.string]"),
        _ => format!("{pkg}.{method}"),
    };
    if rng.chance(0.25) {
        name.push_str(&format!(".func{}", 1 + rng.below(5)));
        if rng.chance(0.3) {
            name.push_str(&format!(".{}", 1 + rng.below(3)));
        }
    }
    name
}

fn libc_name(rng: &mut Rng) -> String {
    let prefix = rng.pick(LIBC_PREFIXES);
    let suffix = rng.pick(LIBC_SUFFIXES);
    format!("{prefix}{}{suffix}", rng.pick(LIBC_STEMS))
}

fn kernel_name(rng: &mut Rng) -> String {
    let stem = if rng.chance(0.1) {
        rng.pick(KERNEL_HOT_STEMS).to_string()
    } else {
        let sub = rng.pick(KERNEL_SUBSYSTEMS);
        format!(
            "{sub}{}{}",
            rng.pick(KERNEL_VERBS),
            rng.pick(KERNEL_OBJECTS)
        )
    };
    format!("{stem}{}_[k]", rng.pick(KERNEL_SUFFIXES))
}

fn unknown_name(rng: &mut Rng) -> String {
    if rng.chance(0.1) {
        rng.pick(UNKNOWN_LIBS).to_string()
    } else {
        // user-space addresses of unsymbolized code: 12 hex digits, 0x7f... or 0x55...
        let base: u64 = if rng.chance(0.7) {
            0x7f00_0000_0000
        } else {
            0x5500_0000_0000
        };
        format!("0x{:012x}", base + rng.below(1 << 40))
    }
}

// ---------------------------------------------------------------------------------------
// The call graph

/// Every function's name, language and likely callees.
struct CallGraph {
    names: Vec<String>,
    lang: Vec<Lang>,
    /// `callees[callee_start[f]..callee_start[f + 1]]`, most likely first.
    callee_start: Vec<u32>,
    callees: Vec<u32>,
    /// First id and Zipf choice of each language's contiguous range of ids.
    range_start: [u32; 7],
    range_pick: Vec<Weighted>,
    /// Process roots: frame ids from the process name down to the first frame of real work.
    roots: Vec<Vec<u32>>,
    root_pick: Weighted,
    /// Name → id, for the roots and to keep names distinct; never iterated.
    ids: FxHashMap<String, u32>,
}

/// Processes and the frames every one of their stacks starts with, the language the last
/// frame calls into, and the process's share of the stacks (relative weight).
const ROOTS: &[(&[&str], Lang, u32)] = &[
    (
        &[
            "java",
            "clone3",
            "start_thread",
            "thread_native_entry(Thread*)",
            "Thread::call_run()",
            "JavaThread::thread_main_inner()",
            "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)",
            "call_stub",
        ],
        Lang::Java,
        20,
    ),
    (
        &[
            "mysqld",
            "_start",
            "__libc_start_main_impl",
            "__libc_start_call_main",
            "main",
            "mysqld_main(int, char**)",
        ],
        Lang::Cpp,
        14,
    ),
    (
        &[
            "tokio-runtime-w",
            "clone3",
            "start_thread",
            "std::sys::pal::unix::thread::Thread::new::thread_start",
            "core::ops::function::FnOnce::call_once{{vtable.shim}}",
            "std::sys::backtrace::__rust_begin_short_backtrace",
            "tokio::runtime::scheduler::multi_thread::worker::run",
        ],
        Lang::Rust,
        12,
    ),
    (
        &[
            "swapper",
            "secondary_startup_64_no_verify_[k]",
            "start_secondary_[k]",
            "cpu_startup_entry_[k]",
            "do_idle_[k]",
        ],
        Lang::Kernel,
        5,
    ),
    (&["billing-svc", "runtime.goexit.abi0"], Lang::Go, 10),
    (
        &[
            "envoy",
            "clone3",
            "start_thread",
            "Envoy::Thread::ThreadImplPosix::ThreadImplPosix(std::function<void ()>, std::optional<Envoy::Thread::Options> const&)::{lambda(void*)#1}::__invoke(void*)",
        ],
        Lang::Cpp,
        10,
    ),
    (
        &[
            "java",
            "clone3",
            "start_thread",
            "thread_native_entry(Thread*)",
            "Thread::call_run()",
            "WorkerThread::run()",
            "G1ConcurrentMarkThread::run_service()",
        ],
        Lang::Cpp,
        5,
    ),
    (
        &[
            "kworker/u16:3",
            "ret_from_fork_asm_[k]",
            "ret_from_fork_[k]",
            "kthread_[k]",
            "worker_thread_[k]",
            "process_one_work_[k]",
        ],
        Lang::Kernel,
        3,
    ),
    (
        &[
            "myapp",
            "_start",
            "__libc_start_main_impl",
            "__libc_start_call_main",
            "main",
            "std::rt::lang_start_internal",
            "std::rt::lang_start::{{closure}}",
            "myapp::main",
        ],
        Lang::Rust,
        6,
    ),
    (
        &[
            "billing-svc",
            "runtime.mstart.abi0",
            "runtime.mstart0",
            "runtime.mstart1",
            "runtime.schedule",
        ],
        Lang::Go,
        4,
    ),
    (
        &["python3", "_start", "__libc_start_main_impl", "main", "Py_BytesMain", "Py_RunMain"],
        Lang::Libc,
        5,
    ),
    (&["node", "[unknown]"], Lang::Unknown, 6),
];

impl CallGraph {
    fn new(seed: u64, vocab: usize) -> CallGraph {
        let mut names_rng = Rng::new(seed, 1);
        let mut graph = CallGraph {
            names: Vec::with_capacity(vocab + 64),
            lang: Vec::with_capacity(vocab + 64),
            callee_start: Vec::new(),
            callees: Vec::new(),
            range_start: [0; 7],
            range_pick: Vec::new(),
            roots: Vec::new(),
            root_pick: Weighted::new(ROOTS.iter().map(|r| u64::from(r.2))),
            ids: FxHashMap::default(),
        };
        // Vocabulary: each language a contiguous range, hottest first.
        for (li, &lang) in LANGS.iter().enumerate() {
            let start = graph.names.len();
            graph.range_start[li] = start as u32;
            let want = (vocab * lang.share() / 100).max(lang.hot().len() + 8);
            for hot in lang.hot() {
                graph.intern(hot.to_string(), lang);
            }
            let mut collisions = 0;
            while graph.names.len() - start < want {
                let mut name = lang.make_name(&mut names_rng);
                while graph.ids.contains_key(&name) {
                    collisions += 1;
                    name = lang.disambiguate(&name, collisions);
                }
                graph.intern(name, lang);
            }
            graph
                .range_pick
                .push(Weighted::zipf(graph.names.len() - start));
        }
        // Root frames that are not in the vocabulary yet join it, in their root's language.
        for (chain, lang, _) in ROOTS {
            let ids = chain
                .iter()
                .map(|name| match graph.ids.get(*name) {
                    Some(&id) => id,
                    None => graph.intern(name.to_string(), *lang),
                })
                .collect();
            graph.roots.push(ids);
        }
        // A root's last frame is the entry into real work: it calls many functions, all in
        // the root's language (a JVM's call_stub calls Java).
        let mut entry_lang: Vec<Option<Lang>> = vec![None; graph.names.len()];
        for (ri, (_, lang, _)) in ROOTS.iter().enumerate() {
            let last = *graph.roots[ri].last().expect("roots are not empty");
            entry_lang[last as usize] = Some(*lang);
        }
        // Callee lists, drawn once: a function calls the same few functions every time.
        let mut graph_rng = Rng::new(seed, 2);
        graph.callee_start.push(0);
        for (f, entry) in entry_lang.into_iter().enumerate() {
            let lang = graph.lang[f];
            if let Some(entry) = entry {
                for _ in 0..2 * MAX_FANOUT {
                    let callee = graph.random_in(entry, &mut graph_rng);
                    graph.callees.push(callee);
                }
            } else if !graph_rng.chance(lang.leaf_chance()) {
                let n = 1 + graph_rng.below(MAX_FANOUT);
                for _ in 0..n {
                    let callee = graph.random_callee(lang, &mut graph_rng);
                    graph.callees.push(callee);
                }
                if graph_rng.chance(lang.self_call_chance()) {
                    graph.callees.push(f as u32);
                }
            }
            graph.callee_start.push(graph.callees.len() as u32);
        }
        graph
    }

    fn intern(&mut self, name: String, lang: Lang) -> u32 {
        debug_assert!(!name.is_empty() && !name.contains([';', '\n', '\r']));
        let id = self.names.len() as u32;
        self.ids.insert(name.clone(), id);
        self.names.push(name);
        self.lang.push(lang);
        id
    }

    /// A callee for a function of `lang`: first the callee's language, then a function of it.
    fn random_callee(&self, lang: Lang, rng: &mut Rng) -> u32 {
        let li = self.random_lang(lang, rng);
        self.random_in(LANGS[li], rng)
    }

    /// A callee outside `lang`'s callee lists. What a virtual call or an interrupt lands in
    /// is mostly the usual suspects, hotter still than [`Self::random_callee`], which keeps
    /// the text compressible; now and then it is any function at all, which brings in the
    /// long tail of names seen once or twice.
    fn indirect_callee(&self, lang: Lang, rng: &mut Rng) -> u32 {
        let li = self.random_lang(lang, rng);
        let size = self.range_pick[li].cumulative.len();
        if rng.chance(P_RARE) {
            return self.range_start[li] + rng.index(size) as u32;
        }
        let a = self.range_pick[li].draw(rng);
        let b = self.range_pick[li].draw(rng);
        self.range_start[li] + a.min(b) as u32
    }

    /// The language of a callee of `lang`, as an index into [`LANGS`].
    fn random_lang(&self, lang: Lang, rng: &mut Rng) -> usize {
        let mix = lang.callee_mix();
        let total: u32 = mix.iter().sum();
        let mut x = rng.below(total as u64) as u32;
        let mut li = 0;
        while x >= mix[li] {
            x -= mix[li];
            li += 1;
        }
        li
    }

    /// A function of `lang`, hot ones more likely.
    fn random_in(&self, lang: Lang, rng: &mut Rng) -> u32 {
        let li = lang as usize;
        self.range_start[li] + self.range_pick[li].draw(rng) as u32
    }

    fn callees_of(&self, f: u32) -> &[u32] {
        let f = f as usize;
        &self.callees[self.callee_start[f] as usize..self.callee_start[f + 1] as usize]
    }

    /// What `f` calls next, the first callees more often; `None` for a leaf function.
    fn next_callee(&self, f: u32, rng: &mut Rng) -> Option<u32> {
        let cs = self.callees_of(f);
        if cs.is_empty() {
            return None;
        }
        // the smallest of three uniform picks: a bias toward the head of the list
        let n = cs.len();
        let i = rng.index(n).min(rng.index(n)).min(rng.index(n));
        Some(cs[i])
    }
}

// ---------------------------------------------------------------------------------------
// The generator

/// Node 0 of the tree: the synthetic root above every process name.
const TREE_ROOT: u32 = 0;
const END: u8 = 1;
const TRUNK: u8 = 2;

/// The prefix tree of the stacks written so far: one node per distinct prefix.
struct Tree {
    parent: Vec<u32>,
    frame: Vec<u32>,
    /// [`END`]: a stack ends here (was written); [`TRUNK`]: a process root's fixed prefix.
    flags: Vec<u8>,
    /// (parent << 32 | frame) → child; looked up, never iterated.
    child: FxHashMap<u64, u32>,
}

impl Tree {
    fn new() -> Tree {
        Tree {
            parent: vec![u32::MAX],
            frame: vec![u32::MAX],
            flags: vec![0],
            child: FxHashMap::default(),
        }
    }

    fn find(&self, parent: u32, frame: u32) -> Option<u32> {
        self.child
            .get(&(((parent as u64) << 32) | frame as u64))
            .copied()
    }

    fn find_or_add(&mut self, parent: u32, frame: u32) -> u32 {
        let next = self.parent.len() as u32;
        let node = *self
            .child
            .entry(((parent as u64) << 32) | frame as u64)
            .or_insert(next);
        if node == next {
            self.parent.push(parent);
            self.frame.push(frame);
            self.flags.push(0);
        }
        node
    }

    /// Whether `frames` below `from` is the path of a stack already written.
    fn is_written(&self, from: u32, frames: &[u32]) -> bool {
        let mut node = from;
        for &f in frames {
            match self.find(node, f) {
                Some(n) => node = n,
                None => return false,
            }
        }
        self.flags[node as usize] & END != 0
    }
}

struct Generator {
    graph: CallGraph,
    tree: Tree,
    rng: Rng,
    max_depth: usize,
    /// Depth around which the stop rule starts to bite.
    typical_depth: f64,
    /// Chance of a self-time stack, for this profile's size.
    p_self: f64,
    /// Stack-end nodes in the order written, and the process root each one is under.
    ends: Vec<u32>,
    end_root: Vec<u8>,
    /// Stack-end nodes of each process root.
    by_root: Vec<Vec<u32>>,
    /// Process root of the stack being made.
    root: usize,
    /// Whether the stack being made ends at its fork point.
    self_time: bool,
    /// Node path of each root's trunk, once made.
    trunks: Vec<Vec<u32>>,
    /// Scratch: the candidate stack's frames and the nodes of its existing prefix.
    frames: Vec<u32>,
    nodes: Vec<u32>,
    line: Vec<u8>,
    /// Unsymbolized frames made when no new stack could be found otherwise.
    fallbacks: u64,
}

impl Generator {
    fn new(params: &SynthParams) -> Generator {
        // More stacks want more distinct functions, but real programs stop at tens of
        // thousands.
        let vocab = (4_000 + params.stacks / 10).min(30_000);
        let max_depth = params.max_depth.max(1);
        let stacks = params.stacks as f64;
        let grown = stacks / (stacks + SELF_STACKS);
        Generator {
            graph: CallGraph::new(params.seed, vocab),
            tree: Tree::new(),
            rng: Rng::new(params.seed, 3),
            max_depth,
            typical_depth: TYPICAL_DEPTH_BASE + max_depth as f64 * TYPICAL_DEPTH,
            p_self: P_SELF + P_SELF_GROWTH * grown * grown,
            ends: Vec::with_capacity(params.stacks),
            end_root: Vec::with_capacity(params.stacks),
            by_root: vec![Vec::new(); ROOTS.len()],
            root: 0,
            self_time: false,
            trunks: vec![Vec::new(); ROOTS.len()],
            frames: Vec::with_capacity(max_depth + 1),
            nodes: Vec::with_capacity(max_depth + 1),
            line: Vec::with_capacity(1 << 14),
            fallbacks: 0,
        }
    }

    fn run(&mut self, stacks: usize, out: &mut dyn Write) -> io::Result<()> {
        for _ in 0..stacks {
            self.self_time = false;
            let end = match (0..MAX_ATTEMPTS).find_map(|_| self.attempt()) {
                Some(end) => end,
                None => self.fallback(),
            };
            // A self-time stack is a prefix of others: forking it again would only climb
            // higher and drag the depths up the tree.
            if !self.self_time {
                self.ends.push(end);
                self.end_root.push(self.root as u8);
                self.by_root[self.root].push(end);
            }
            self.write_line(end, out)?;
        }
        Ok(())
    }

    /// Tries to make one new stack; `None` when it came out as one already written.
    fn attempt(&mut self) -> Option<u32> {
        self.root = self.graph.root_pick.draw(&mut self.rng);
        self.frames.clear();
        self.nodes.clear();
        self.self_time = false;
        let mut dive = false;
        let base = if self.ends.is_empty() || self.rng.chance(P_FRESH) {
            None
        } else {
            self.pick_base()
        };
        if let Some(base) = base {
            self.load_path(base);
            let len = self.frames.len();
            let trunk = self.trunk_len();
            let deep = len as f64 / self.max_depth as f64;
            let cut = if self.rng.chance(P_MID_FORK + P_MID_FORK_DEEP * deep * deep) {
                trunk + self.rng.index(len - trunk + 1)
            } else {
                len.saturating_sub(self.rng.geometric(MEAN_BACKOFF))
                    .max(trunk)
            };
            self.frames.truncate(cut);
            self.nodes.truncate(cut);
            let r = self.rng.unit();
            if cut == 0 {
                // a fallback stack has no trunk: start over from its root
                self.enter_trunk(self.root);
            } else if r < P_DIVE {
                dive = true;
            } else if r < P_DIVE + self.p_self && cut < len {
                self.self_time = true;
            }
        } else {
            self.enter_trunk(self.root);
        }
        let fork_len = self.nodes.len();
        if !self.self_time {
            let trunk = self.trunk_len();
            self.walk_down(trunk, dive);
        }
        let from = self.nodes.last().copied().unwrap_or(TREE_ROOT);
        if self.tree.is_written(from, &self.frames[fork_len..]) {
            return None;
        }
        Some(self.commit(from, fork_len))
    }

    /// Chooses the stack to fork and sets `root`: usually a recent stack, so that
    /// neighbouring lines share prefixes. `None` (with `root` set) to start from a trunk.
    fn pick_base(&mut self) -> Option<u32> {
        if self.rng.chance(P_RECENT) {
            let n = self.ends.len() as u64;
            let i = (n - 1 - self.rng.below(n.min(RECENT))) as usize;
            self.root = self.end_root[i] as usize;
            return Some(self.ends[i]);
        }
        self.root = self.graph.root_pick.draw(&mut self.rng);
        let theirs = &self.by_root[self.root];
        if theirs.is_empty() {
            return None;
        }
        Some(theirs[self.rng.index(theirs.len())])
    }

    /// Puts a root's trunk (made on first use) in `frames` and `nodes`.
    fn enter_trunk(&mut self, root: usize) {
        if self.trunks[root].is_empty() {
            let chain = &self.graph.roots[root];
            let mut node = TREE_ROOT;
            for &f in &chain[..chain.len().min(self.max_depth)] {
                node = self.tree.find_or_add(node, f);
                self.tree.flags[node as usize] |= TRUNK;
                self.trunks[root].push(node);
            }
        }
        for &n in &self.trunks[root] {
            self.nodes.push(n);
            self.frames.push(self.tree.frame[n as usize]);
        }
    }

    /// Puts the path from the tree root to `node` in `frames` and `nodes`.
    fn load_path(&mut self, mut node: u32) {
        while node != TREE_ROOT {
            self.nodes.push(node);
            self.frames.push(self.tree.frame[node as usize]);
            node = self.tree.parent[node as usize];
        }
        self.nodes.reverse();
        self.frames.reverse();
    }

    /// How many of the leading `nodes` are a process root's fixed prefix (never forked).
    fn trunk_len(&self) -> usize {
        self.nodes
            .iter()
            .take_while(|&&n| self.tree.flags[n as usize] & TRUNK != 0)
            .count()
    }

    /// Appends frames by walking the call graph: at least one, then until a leaf function or
    /// the stop rule. Recursion bursts repeat only frames below the trunk, in user code.
    fn walk_down(&mut self, trunk: usize, dive: bool) {
        if dive {
            self.dive(trunk);
        }
        let start = self.frames.len();
        while self.frames.len() < self.max_depth {
            let len = self.frames.len();
            let f = *self.frames.last().expect("walks start below a trunk");
            let lang = self.graph.lang[f as usize];
            if len > start {
                let x = len as f64 / self.typical_depth;
                if self
                    .rng
                    .chance(STOP_BASE + lang.stop_bonus() + STOP_GROWTH * x * x)
                {
                    break;
                }
            }
            if len > trunk && lang.recurses() && self.rng.chance(P_RECURSE) {
                let k = (1 + self.rng.index(3)).min(len - trunk);
                let reps = 1 + self.rng.geometric(MEAN_RECURSE_REPS);
                for _ in 0..reps {
                    let len = self.frames.len();
                    if len + k > self.max_depth {
                        break;
                    }
                    self.frames.extend_from_within(len - k..len);
                }
                continue;
            }
            if self.rng.chance(P_INDIRECT) {
                let c = self.graph.indirect_callee(lang, &mut self.rng);
                self.frames.push(c);
                continue;
            }
            match self.graph.next_callee(f, &mut self.rng) {
                Some(c) => self.frames.push(c),
                None if len == start => {
                    // a leaf, but this walk must add a frame: an interrupt or a callback
                    let c = self.graph.indirect_callee(lang, &mut self.rng);
                    self.frames.push(c);
                }
                None => break,
            }
        }
    }

    /// Deep stacks in real profiles are recursion (parsers, tree walks, GC marking): repeats
    /// a cycle of the last 1 to 3 user-code frames until close to the depth limit.
    fn dive(&mut self, trunk: usize) {
        let graph = &self.graph;
        let user = self.frames[trunk..]
            .iter()
            .rev()
            .take_while(|&&f| graph.lang[f as usize].recurses())
            .count();
        if user == 0 {
            return;
        }
        let k = (1 + self.rng.index(3)).min(user);
        let until = self.max_depth.saturating_sub(self.rng.index(6));
        while self.frames.len() + k <= until {
            let len = self.frames.len();
            self.frames.extend_from_within(len - k..len);
        }
    }

    /// Adds the candidate's new frames below node `from` and marks the end as written.
    fn commit(&mut self, from: u32, fork_len: usize) -> u32 {
        let mut node = from;
        for i in fork_len..self.frames.len() {
            node = self.tree.find_or_add(node, self.frames[i]);
        }
        self.tree.flags[node as usize] |= END;
        node
    }

    /// A stack that cannot have been written: an earlier one (cut to leave room) ending in
    /// an unsymbolized address never used before. Only needed when tiny limits leave few
    /// distinct stacks to find.
    fn fallback(&mut self) -> u32 {
        self.fallbacks += 1;
        // 16 hex digits, where vocabulary addresses have 12: never equal to one of them
        let address = 0x0000_7ffc_0000_0000u64 + 16 * self.fallbacks;
        let name = format!("0x{address:016x}");
        let f = self.graph.intern(name, Lang::Unknown);
        self.graph
            .callee_start
            .push(self.graph.callees.len() as u32);
        self.frames.clear();
        self.nodes.clear();
        if let Some(base) = self.pick_base() {
            self.load_path(base);
            self.nodes.truncate(self.max_depth - 1);
            self.frames.truncate(self.max_depth - 1);
        }
        let from = self.nodes.last().copied().unwrap_or(TREE_ROOT);
        let node = self.tree.find_or_add(from, f);
        self.tree.flags[node as usize] |= END;
        node
    }

    /// Writes the stack ending at `end` with a heavy-tailed count.
    fn write_line(&mut self, end: u32, out: &mut dyn Write) -> io::Result<()> {
        self.frames.clear();
        self.nodes.clear();
        self.load_path(end);
        self.line.clear();
        for (i, &f) in self.frames.iter().enumerate() {
            if i > 0 {
                self.line.push(b';');
            }
            self.line
                .extend_from_slice(self.graph.names[f as usize].as_bytes());
        }
        self.line.push(b' ');
        let count = self.count();
        push_decimal(&mut self.line, count);
        self.line.push(b'\n');
        out.write_all(&self.line)
    }

    /// A Pareto-like count: 2^k to 2^(k+1)-1 with P(k) falling geometrically, so about half
    /// the stacks have count 1.
    fn count(&mut self) -> u64 {
        let mut k = 0;
        while k < COUNT_MAX_EXP && self.rng.chance(COUNT_TAIL) {
            k += 1;
        }
        (1u64 << k) + self.rng.below(1u64 << k)
    }
}

fn push_decimal(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashSet;

    fn make(stacks: usize, max_depth: usize, seed: u64) -> String {
        let mut out = Vec::new();
        generate(
            &SynthParams {
                stacks,
                max_depth,
                seed,
            },
            &mut out,
        )
        .unwrap();
        String::from_utf8(out).expect("output is UTF-8")
    }

    /// Checks every line's shape and returns (lines, max depth).
    fn check(text: &str, max_depth: usize) -> (usize, usize) {
        assert!(text.is_empty() || text.ends_with('\n'));
        let mut seen = FxHashSet::default();
        let mut deepest = 0;
        for line in text.lines() {
            let (stack, count) = line.rsplit_once(' ').expect("stack and count");
            assert!(
                !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()),
                "{line}"
            );
            assert!(count.parse::<u64>().unwrap() > 0, "{line}");
            assert!(!count.starts_with('0'), "{line}");
            assert!(!stack.contains(";;") && !stack.starts_with(';') && !stack.ends_with(';'));
            assert!(!stack.contains(['\n', '\r']));
            let depth = stack
                .split(';')
                .inspect(|f| assert!(!f.is_empty(), "{line}"))
                .count();
            assert!(depth <= max_depth, "{depth} frames > {max_depth}: {line}");
            deepest = deepest.max(depth);
            assert!(seen.insert(stack.to_string()), "duplicate stack {stack}");
        }
        (seen.len(), deepest)
    }

    #[test]
    fn same_seed_same_bytes() {
        assert_eq!(make(2_000, 40, 7), make(2_000, 40, 7));
    }

    #[test]
    fn different_seeds_differ() {
        assert_ne!(make(500, 40, 1), make(500, 40, 2));
    }

    #[test]
    fn lines_are_well_formed_unique_and_exactly_as_many_as_asked() {
        for (stacks, depth, seed) in [(2_000, 30, 1), (1_000, 8, 2), (1_000, 120, 3)] {
            let (lines, deepest) = check(&make(stacks, depth, seed), depth);
            assert_eq!(lines, stacks);
            // recursion dives go (nearly) all the way down
            assert!(deepest + 6 >= depth, "deepest {deepest} of {depth}");
        }
    }

    #[test]
    fn tiny_limits_still_give_distinct_stacks() {
        for depth in [0, 1, 2] {
            let text = make(300, depth, 5);
            let (lines, _) = check(&text, depth.max(1));
            assert_eq!(lines, 300);
        }
        assert_eq!(make(0, 10, 1), "");
    }

    #[test]
    fn names_are_hostile_and_varied() {
        let text = make(2_000, 64, 11);
        for needle in [
            "<", ">", "&", " ", "(", ")", ",", "::", "*", "~", "_[k]", "_[j]", " as ",
        ] {
            assert!(text.contains(needle), "no {needle:?} in any name");
        }
        assert!(text.contains("[unknown]") && text.contains(";0x7f"));
        assert!(text.contains(".(*") && text.contains("operator"));
    }

    #[test]
    fn vocabulary_names_are_clean_and_distinct() {
        let graph = CallGraph::new(3, 20_000);
        let mut seen = FxHashSet::default();
        for name in &graph.names {
            assert!(
                !name.is_empty() && !name.contains([';', '\n', '\r']),
                "{name:?}"
            );
            assert_eq!(name.trim(), name);
            assert!(seen.insert(name), "duplicate {name}");
        }
    }

    #[test]
    fn counts_are_heavy_tailed() {
        let text = make(5_000, 64, 4);
        let counts: Vec<u64> = text
            .lines()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse().unwrap())
            .collect();
        let ones = counts.iter().filter(|&&c| c == 1).count();
        assert!(ones * 2 > counts.len(), "most stacks are seen once: {ones}");
        assert!(counts.iter().any(|&c| c >= 1_000));
    }

    #[test]
    fn output_is_not_sorted() {
        let text = make(1_000, 40, 9);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.windows(2).any(|w| w[0] > w[1]));
    }

    #[test]
    fn small_preset_has_its_size() {
        let params = SynthParams::preset(Size::Small, 1);
        let text = make(params.stacks, params.max_depth, params.seed);
        let (lines, deepest) = check(&text, 64);
        assert_eq!(lines, 10_000);
        assert!(deepest <= 64);
        // boxes: distinct prefixes of the stacks
        let mut prefixes = FxHashSet::default();
        for line in text.lines() {
            let stack = line.rsplit_once(' ').unwrap().0;
            for (i, _) in stack.match_indices(';') {
                prefixes.insert(&stack[..i]);
            }
            prefixes.insert(stack);
        }
        let boxes = prefixes.len();
        assert!(
            (28_000..=38_000).contains(&boxes),
            "{boxes} boxes, want about 33k"
        );
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(Size::parse("small"), Some(Size::Small));
        assert_eq!(Size::parse("large"), Some(Size::Large));
        assert_eq!(Size::parse("huge"), Some(Size::Huge));
        assert_eq!(Size::parse("Large"), None);
        assert_eq!(SynthParams::preset(Size::Large, 3).max_depth, 120);
    }
}
