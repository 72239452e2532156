import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedObject;
import jdk.jfr.consumer.RecordingFile;

/**
 * The folded stacks of a recording's jdk.ExecutionSample events whose thread state is one of
 * those named, each worth the same value, as the JDK's own reader (jdk.jfr.consumer) sees them:
 * frames root first, each `class.method` with the class name as the recording stores it, or the
 * method alone when it has no class; values summed per stack; lines sorted.
 *
 * Usage: java FoldStates.java RECORDING NANOS_PER_SAMPLE STATE... > GRAPH.folded
 */
public class FoldStates {
    public static void main(String[] args) throws Exception {
        Path recording = Path.of(args[0]);
        long value = Long.parseLong(args[1]);
        Set<String> states = Set.copyOf(List.of(args).subList(2, args.length));
        Map<String, Long> sums = new TreeMap<>();
        try (RecordingFile file = new RecordingFile(recording)) {
            while (file.hasMoreEvents()) {
                RecordedEvent e = file.readEvent();
                if (!e.getEventType().getName().equals("jdk.ExecutionSample")) {
                    continue;
                }
                if (!states.contains(state(e))) {
                    continue;
                }
                if (e.getStackTrace() != null && e.getStackTrace().isTruncated()) {
                    throw new IllegalStateException("a truncated stack");
                }
                StringBuilder stack = new StringBuilder();
                List<RecordedFrame> frames = e.getStackTrace() == null ? List.of() : e.getStackTrace().getFrames();
                for (int i = frames.size() - 1; i >= 0; i--) {
                    RecordedMethod m = frames.get(i).getMethod();
                    // The name as stored (`java/lang/Thread`): getName() would turn its slashes to dots.
                    String cls = m.getType() == null ? "" : m.getType().getString("name");
                    if (stack.length() > 0) {
                        stack.append(';');
                    }
                    stack.append(cls == null || cls.isEmpty() ? m.getName() : cls + "." + m.getName());
                }
                if (stack.length() == 0) {
                    stack.append("[unknown]");
                }
                sums.merge(stack.toString(), value, Long::sum);
            }
        }
        StringBuilder out = new StringBuilder();
        sums.forEach((stack, sum) -> out.append(stack).append(' ').append(sum).append('\n'));
        System.out.print(out);
    }

    static String state(RecordedEvent e) {
        Object s = e.getValue("state");
        if (s instanceof RecordedObject o) {
            return o.getString("name");
        }
        return s == null ? null : s.toString();
    }
}
