// The workload of the CPU-time fixture (make.sh): JDK 25's CPU-time sampler writes
// jdk.CPUTimeSample events (a stack, the thread, `samplingPeriod` as a Tickspan, `failed`,
// `biased`) and jdk.CPUTimeSamplesLost (`lostSamples`). This JDK has no such sampler, so the
// program declares events of the same names and fields and commits them from known stacks:
// the recording then holds exactly what its expected graph says.
import jdk.jfr.Event;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

public class CpuTime {
    @Name("jdk.CPUTimeSample")
    @StackTrace(true)
    static final class Sample extends Event {
        boolean failed;
        @Timespan(Timespan.TICKS) long samplingPeriod;
        boolean biased;
    }

    @Name("jdk.CPUTimeSamplesLost")
    @StackTrace(false)
    static final class Lost extends Event {
        int lostSamples;
    }

    static void sample(long period) {
        Sample s = new Sample();
        s.samplingPeriod = period;
        s.commit();
    }

    static void parse() { for (int i = 0; i < 3; i++) sample(10_000_000L); }
    static void render() { for (int i = 0; i < 2; i++) sample(20_000_000L); }
    static void handle() { parse(); render(); }

    public static void main(String[] args) {
        handle();
        render();
        Lost l = new Lost();
        l.lostSamples = 4;
        l.commit();
    }
}
