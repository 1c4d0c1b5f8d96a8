import assert from "node:assert/strict";
import { test } from "node:test";

import { browserZone, formatLocal } from "../../static/surveys/timezone.js";

test("a close time is shown in the reader's zone and language, with the zone", () => {
  const when = new Date("2030-12-01T09:00:00Z");
  const seoul = formatLocal(when, "ko", "Asia/Seoul");
  assert.match(seoul, /2030/);
  assert.match(seoul, /(오후|PM) 6:00/);
  assert.match(seoul, /GMT\+9/);
  const newYork = formatLocal(when, "en", "America/New_York");
  assert.match(newYork, /4:00\sAM/);
  assert.match(newYork, /EST/);
});

test("the browser's zone is an IANA name", () => {
  assert.match(browserZone(), /^[A-Za-z_]+(\/[A-Za-z_+-]+)*$/);
});
