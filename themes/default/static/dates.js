// Dates no profile can have, flagged where a page shows them. A date before 2000 (a clock that
// was never set) is flagged by the build, in the page; a date in the future is flagged here,
// against the reader's clock, so that the same inputs give the same site whatever day it is
// built. Each <time datetime> more than a day past now gets a flag after it, as the build's
// own looks (class fs-dateflag).

/** A day, in milliseconds: clocks and time zones differ by less. */
const SLACK = 86_400_000;

/** Whether ISO date `iso` is more than a day past `now` (milliseconds since 1970). */
export function inFuture(iso, now) {
  const t = Date.parse(iso);
  return Number.isFinite(t) && t > now + SLACK;
}

/** Flag each <time datetime> under `root` whose date is in the future. */
export function flagFutureDates(root = document, now = Date.now()) {
  for (const t of root.querySelectorAll("time[datetime]")) {
    if (!inFuture(t.dateTime, now) || t.nextElementSibling?.classList.contains("fs-dateflag")) continue;
    const flag = document.createElement("span");
    flag.className = "fs-dateflag";
    flag.title = "This date is more than a day past your clock: the profile's clock, or the date in its path, may be wrong";
    flag.textContent = "in the future";
    t.after(" ", flag);
  }
}

if (typeof document !== "undefined") flagFutureDates();
