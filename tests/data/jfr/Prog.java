// The workload of the JFR fixtures (make.sh): a few threads, each doing one thing a profiler
// should see, under names that say what it is. No lambdas: their hidden classes have names
// that the JDK's readers print differently from the raw recording.
import java.util.concurrent.locks.ReentrantLock;

public class Prog {
    static volatile long sink;
    static final Object MONITOR = new Object();
    static final ReentrantLock LOCK = new ReentrantLock();

    /** CPU: two hot leaves under a recursive caller, so stacks have depth and shared prefixes. */
    static final class Spinner implements Runnable {
        final long until;
        Spinner(long until) { this.until = until; }
        public void run() { while (System.nanoTime() < until) recurse(3); }
        static void recurse(int n) { if (n == 0) { hotA(); hotB(); } else recurse(n - 1); }
        static void hotA() { long s = 0; for (int i = 0; i < 200_000; i++) s += i * 31L ^ s; sink += s; }
        static void hotB() { double d = 1; for (int i = 1; i < 100_000; i++) d += Math.sqrt(i); sink += (long) d; }
    }

    /** Allocations: small arrays (in TLABs) and large ones (outside TLABs). */
    static final class Allocator implements Runnable {
        final long until;
        Allocator(long until) { this.until = until; }
        public void run() {
            while (System.nanoTime() < until) {
                for (int i = 0; i < 20_000; i++) small();
                large();
            }
        }
        static void small() { sink += new long[64].length; }
        static void large() { sink += new byte[1 << 20].length; }
    }

    /** Native code: reads /dev/zero, so the thread is sampled in a native method. */
    static final class Reader implements Runnable {
        final long until;
        Reader(long until) { this.until = until; }
        public void run() {
            byte[] buffer = new byte[8 << 20];
            try (java.io.FileInputStream in = new java.io.FileInputStream("/dev/zero")) {
                while (System.nanoTime() < until) sink += in.read(buffer);
            } catch (java.io.IOException e) {
                throw new RuntimeException(e);
            }
        }
    }

    /** Monitor contention: holds a synchronized block while sleeping, so others wait to enter. */
    static final class Contender implements Runnable {
        final long until;
        Contender(long until) { this.until = until; }
        public void run() { while (System.nanoTime() < until) enter(); }
        static void enter() {
            synchronized (MONITOR) { sleep(30); }
        }
    }

    /** Parking: a ReentrantLock held while sleeping, so others park. */
    static final class Parker implements Runnable {
        final long until;
        Parker(long until) { this.until = until; }
        public void run() { while (System.nanoTime() < until) lock(); }
        static void lock() {
            LOCK.lock();
            try { sleep(30); } finally { LOCK.unlock(); }
        }
    }

    static void sleep(long ms) {
        try { Thread.sleep(ms); } catch (InterruptedException e) { throw new RuntimeException(e); }
    }

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 3;
        long until = System.nanoTime() + seconds * 1_000_000_000L;
        Thread[] threads = {
            new Thread(new Spinner(until), "spinner"),
            new Thread(new Allocator(until), "allocator"),
            new Thread(new Contender(until), "contender-1"),
            new Thread(new Contender(until), "contender-2"),
            new Thread(new Parker(until), "parker-1"),
            new Thread(new Parker(until), "parker-2"),
            new Thread(new Reader(until), "reader"),
        };
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join();
        System.out.println(sink == 42 ? "" : "done");
    }
}
