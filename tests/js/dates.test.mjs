// dates.js: which dates the pages flag as in the future, against the reader's clock.
import { test } from "node:test";
import assert from "node:assert/strict";
import { inFuture } from "../../themes/default/static/dates.js";

const now = Date.parse("2026-11-28T12:00:00Z");

test("a date more than a day past the reader's clock is in the future; today, tomorrow and the past are not", () => {
  assert.equal(inFuture("2099-06-01T00:00:00Z", now), true);
  assert.equal(inFuture("2026-11-29T12:00:01Z", now), true, "a day and a second ahead");
  assert.equal(inFuture("2026-11-29T11:59:59Z", now), false, "within a day: clocks and time zones differ");
  assert.equal(inFuture("2026-11-28T00:00:00Z", now), false);
  assert.equal(inFuture("1970-01-20T00:00:00Z", now), false);
});

test("what is not a date is never flagged", () => {
  assert.equal(inFuture("", now), false);
  assert.equal(inFuture("soon", now), false);
});
